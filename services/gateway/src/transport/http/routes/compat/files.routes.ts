import { openAiList } from './blocks';
import type { Request, Response } from 'express';
import multer from 'multer';
import { z } from 'zod';
import { AppError, isUuid, Reasons } from '@whetstone/errors';
import type { ChatBatches, FilesPort, Principal, StoredFileView } from '../../../../application/ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';
import { invalidBody, invalidQuery, parseParams } from '../../validate';
import { batchFile, renderBatchFile } from './openai-batches';

/**
 * OpenAI's Files API (the `openai` client's `files`): a team uploads files (an OpenAI batch's input, purpose
 * `batch`), lists, reads and deletes them. The dataset service keeps them (blob store and Postgres). A batch's
 * output and error files are read here too, rendered from the batch's results.
 */

export const FILE_ID_PREFIX = 'file-';
const PURPOSES = ['batch', 'fine-tune', 'assistants', 'vision', 'user_data', 'evals'] as const;

const UploadFields = z.object({
  purpose: z.enum(PURPOSES, { message: `must be one of ${PURPOSES.join(', ')}` }),
  expires_after: z
    .object({
      anchor: z.literal('created_at', { message: 'must be created_at' }),
      seconds: z.coerce
        .number()
        .int('must be a whole number of seconds')
        .min(3600, 'must be at least 3600 (1 hour)')
        .max(2_592_000, 'must be at most 2592000 (30 days)'),
    })
    .optional(),
});

/** The upload form as documented (the `file` part is read by multer, the fields by UploadFields). */
const UploadForm = z
  .object({
    file: z.string().openapi({ type: 'string', format: 'binary', description: 'The file (one part)' }),
    purpose: z.enum(PURPOSES),
    'expires_after[anchor]': z.literal('created_at').optional(),
    'expires_after[seconds]': z.number().int().min(3600).max(2_592_000).optional(),
  })
  .openapi('FileUploadForm');

const ListQuery = z.object({
  purpose: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).optional(),
  after: z.string().max(200).optional(),
  order: z.enum(['asc', 'desc']).optional(),
});

const notFound = (id: string) =>
  new AppError('NotFound', 'FILE_NOT_FOUND', `File '${id.slice(0, 100)}' was not found.`);

/** The UUID inside a public `file-…` id of an uploaded file; anything else names none. */
function fileIdOf(publicId: string): string {
  const id = publicId.startsWith(FILE_ID_PREFIX) ? publicId.slice(FILE_ID_PREFIX.length) : '';
  if (!isUuid(id)) throw notFound(publicId);
  return id;
}

const unix = (d: Date) => Math.floor(d.getTime() / 1000);

/** OpenAI's File object. */
export function fileObject(file: StoredFileView) {
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes,
    created_at: unix(file.createdAt),
    expires_at: file.expiresAt ? unix(file.expiresAt) : null,
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
    status_details: null,
  };
}

const publicFile = (file: StoredFileView) => fileObject({ ...file, id: `${FILE_ID_PREFIX}${file.id}` });

/** Reads the multipart body (one `file` part and its fields) within the size limit. */
async function readUpload(req: Request, res: Response, maxBytes: number): Promise<Express.Multer.File> {
  if (!req.is('multipart/form-data'))
    throw new AppError('InvalidArgument', Reasons.VALIDATION_FAILED, 'Send the file as multipart/form-data', {
      fieldErrors: [{ field: 'file', message: 'is required: send multipart/form-data with a file part' }],
    });
  const upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: maxBytes, files: 1, fields: 10 } });
  await new Promise<void>((resolve, reject) =>
    upload.single('file')(req, res, (err: unknown) => (err ? reject(uploadError(err, maxBytes)) : resolve())),
  );
  if (!req.file) throw invalidBody('file', 'is required');
  if (!req.file.size) throw invalidBody('file', 'is empty');
  return req.file;
}

function uploadError(err: unknown, maxBytes: number): unknown {
  // Anything else the parser meets is a body that is not well-formed multipart (a cut or garbled form).
  if (!(err instanceof multer.MulterError))
    return new AppError('Malformed', 'MALFORMED_MULTIPART', 'Malformed multipart/form-data body');
  if (err.code === 'LIMIT_FILE_SIZE')
    return new AppError(
      'PayloadTooLarge',
      Reasons.PAYLOAD_TOO_LARGE,
      `The file exceeds the size limit of ${maxBytes.toLocaleString('en-US')} bytes`,
    );
  if (err.code === 'LIMIT_UNEXPECTED_FILE' || err.code === 'LIMIT_FILE_COUNT')
    return invalidBody(err.field ?? 'file', 'send exactly one file, in the part named file');
  return invalidBody(err.field ?? '(body)', err.message);
}

const tag = 'Compatible surfaces';

/** POST/GET /v1/files, GET/DELETE /v1/files/:file_id and GET …/content. */
export function registerFileRoutes(api: Api, files: FilesPort, sources: DerivedFiles[], maxBytes: number) {
  api.route(
    {
      method: 'post',
      path: '/v1/files',
      summary: `OpenAI-compatible file upload (multipart/form-data: \`file\`, \`purpose\`, optional \`expires_after[anchor]\`/\`expires_after[seconds]\`), up to ${maxBytes.toLocaleString('en-US')} bytes`,
      tag,
      auth: 'key',
      form: UploadForm,
      response: { status: 200, description: 'The `file` object' },
    },
    async ({ req, res }) => {
      const part = await readUpload(req, res, maxBytes);
      const fields = UploadFields.safeParse(req.body ?? {});
      if (!fields.success) {
        const issue = fields.error.issues[0]!;
        throw invalidBody(issue.path.map(String).join('.') || 'purpose', issue.message);
      }
      const stored = await files.upload(authOf(res).principal, {
        filename: part.originalname || 'file',
        purpose: fields.data.purpose,
        content: new Uint8Array(part.buffer),
        ...(fields.data.expires_after ? { expiresAfterSeconds: fields.data.expires_after.seconds } : {}),
      });
      return publicFile(stored);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/files',
      summary:
        'The team\'s uploaded files: `{object: "list", data, first_id, last_id, has_more}`; `purpose`, `limit` (1–10000), `after`, `order` (asc or desc, default desc)',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const q = parseParams(ListQuery, req.query, 'query');
      const badCursor = () => invalidQuery('after', 'names no file of this team');
      const afterId = q.after?.startsWith(FILE_ID_PREFIX) ? q.after.slice(FILE_ID_PREFIX.length) : q.after;
      if (afterId !== undefined && !isUuid(afterId)) throw badCursor();
      const page = await files
        .list(authOf(res).principal, {
          purpose: q.purpose,
          limit: q.limit ?? 10_000,
          afterId,
          ascending: q.order === 'asc',
        })
        .catch((err: unknown) => {
          throw err instanceof AppError && err.fieldErrors[0]?.field === 'after_id' ? badCursor() : err;
        });
      const data = page.files.map(publicFile);
      return openAiList(data, page.hasMore);
    },
  );

  registerFileReadRoutes(api, files, sources);
}

/**
 * Files rendered from what they describe rather than uploaded (a batch's output and error files, a fine-tuning job's
 * results): each source answers the ids it owns and null for any other.
 */
export interface DerivedFiles {
  /** The `file` object; null when the id is not one of this source's. */
  file(principal: Principal, id: string): Promise<ReturnType<typeof fileObject> | null>;
  /** Writes the file's bytes; false when the id is not one of this source's. */
  render(principal: Principal, id: string, res: Response): Promise<boolean>;
  /** Why it cannot be deleted apart from what it describes. */
  kept: string;
}

/** A batch's output and error files as a DerivedFiles source. */
export const batchFiles = (batches: ChatBatches): DerivedFiles => ({
  file: (principal, id) => batchFile(batches, principal, id),
  render: (principal, id, res) => renderBatchFile(batches, principal, id, res),
  kept: "is a batch's output: it is kept as long as its batch",
});

/** The derived file the id names, with its source; null for any other id. */
async function derivedFile(sources: DerivedFiles[], principal: Principal, id: string) {
  for (const source of sources) {
    const file = await source.file(principal, id);
    if (file) return { file, source };
  }
  return null;
}

/** A file the id names: an uploaded one, or a derived one. */
async function anyFile(files: FilesPort, sources: DerivedFiles[], principal: Principal, id: string) {
  const derived = await derivedFile(sources, principal, id);
  if (derived) return derived.file;
  return publicFile(await files.get(principal, fileIdOf(id)));
}

function registerFileReadRoutes(api: Api, files: FilesPort, sources: DerivedFiles[]): void {
  api.route(
    { method: 'get', path: '/v1/files/:file_id', summary: 'One file (the `file` object)', tag, auth: 'key-or-session' },
    async ({ req, res }) => anyFile(files, sources, authOf(res).principal, String(req.params.file_id)),
  );

  api.route(
    {
      method: 'get',
      path: '/v1/files/:file_id/content',
      summary: "A file's bytes (a batch's output and error files as JSON Lines, a fine-tuning job's results as CSV)",
      tag,
      auth: 'key-or-session',
      response: { status: 200, description: 'The bytes as uploaded; `application/jsonl` for a batch output' },
    },
    async ({ req, res }) => {
      const principal = authOf(res).principal;
      const id = String(req.params.file_id);
      for (const source of sources) if (await source.render(principal, id, res)) return undefined;
      const { file, content } = await files.content(principal, fileIdOf(id));
      res
        .status(200)
        .type('application/octet-stream')
        .setHeader('Content-Disposition', `attachment; filename="${file.filename.replace(/["\\\r\n]/g, '_')}"`);
      res.end(Buffer.from(content));
      return undefined;
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/v1/files/:file_id',
      summary:
        'Delete an uploaded file: `{id, object: "file", deleted: true}` (a batch output goes with its batch, a job\'s results with its job)',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const principal = authOf(res).principal;
      const id = String(req.params.file_id);
      const derived = await derivedFile(sources, principal, id);
      if (derived)
        throw new AppError('FailedPrecondition', 'FILE_NOT_DELETABLE', `File '${id}' ${derived.source.kept}.`);
      await files.delete(principal, fileIdOf(id));
      return { id, object: 'file', deleted: true };
    },
  );
}
