/** Files API use cases: bytes in the blob store, records in the FileStore; another team's file is never seen. */
import { readAll } from '@whetstone/blobs';
import { AppError, Reasons, errors, isAppError, isUuid, uuidv7 } from '@whetstone/errors';
import { DATASETS_BUCKET } from '../domain/dataset';
import {
  DEFAULT_FILE_MAX_BYTES,
  FILE_PURPOSES,
  MAX_FILES_PAGE,
  expiryProblem,
  fileKey,
  filenameProblem,
  isFilePurpose,
  type FilePurpose,
} from '../domain/file';
import type { FileDeps, FileRow, FileStore } from './ports';

export interface UploadFileInput {
  teamId: string;
  filename: string;
  purpose: string;
  content: Uint8Array;
  /** 0 keeps the file until deleted. */
  expiresAfterSeconds: number;
}

export interface ListFilesInput {
  teamId: string;
  /** Empty for every purpose. */
  purpose: string;
  /** 0 means MAX_FILES_PAGE. */
  limit: number;
  /** Empty to start at the first file. */
  afterId: string;
  ascending: boolean;
}

/** Expired files deleted per pass of the sweep, so one pass never holds thousands of rows. */
const SWEEP_BATCH = 200;

/** Unknown, malformed, expired and other teams' ids alike: nothing tells them apart. */
export function fileNotFound(id: string): AppError {
  return errors.notFound('FILE_NOT_FOUND', `File '${id}' was not found.`);
}

function invalidField(field: string, problem: string): AppError {
  return errors.invalid(Reasons.VALIDATION_FAILED, `${field} ${problem}.`, [{ field, message: problem }]);
}

/** The team's files and this one would hold more than its room: what they hold, and how to make room. */
function storageFull(bytes: number, usedBytes: number, maxBytes: number): AppError {
  const message =
    `This team's files hold ${usedBytes} of the ${maxBytes} bytes a team may keep, so this file (${bytes} bytes) ` +
    'does not fit. Delete files you no longer need (DELETE /v1/files/{file_id}), or upload with expires_after.';
  return new AppError('FailedPrecondition', 'FILE_STORAGE_FULL', message, {
    fieldErrors: [{ field: 'file', message: 'does not fit in the team’s file storage' }],
  });
}

function checkedPurpose(purpose: string): FilePurpose {
  if (!isFilePurpose(purpose)) throw invalidField('purpose', `must be one of ${FILE_PURPOSES.join(', ')}`);
  return purpose;
}

/**
 * Stores the bytes, then the record, so a file acknowledged (or listed) always has its bytes; a record that could
 * not be written takes its bytes with it.
 */
export async function uploadFile(deps: FileDeps, input: UploadFileInput): Promise<FileRow> {
  const purpose = checkedPurpose(input.purpose);
  const nameProblem = filenameProblem(input.filename);
  if (nameProblem) throw invalidField('filename', nameProblem);
  const expiry = expiryProblem(input.expiresAfterSeconds);
  if (expiry) throw invalidField('expires_after_seconds', expiry);
  if (!input.content.byteLength) throw invalidField('file', 'is empty');
  const max = deps.maxFileBytes ?? DEFAULT_FILE_MAX_BYTES;
  if (input.content.byteLength > max)
    throw new AppError('PayloadTooLarge', Reasons.PAYLOAD_TOO_LARGE, `The file is larger than ${max} bytes.`, {
      fieldErrors: [{ field: 'file', message: `must be at most ${max} bytes` }],
    });

  const createdAt = new Date();
  const id = uuidv7(createdAt.getTime());
  const row: FileRow = {
    id,
    teamId: input.teamId,
    filename: input.filename,
    purpose,
    bytes: input.content.byteLength,
    blobKey: fileKey(input.teamId, id),
    createdAt,
    expiresAt: input.expiresAfterSeconds ? new Date(createdAt.getTime() + input.expiresAfterSeconds * 1000) : null,
  };
  const body = Buffer.from(input.content.buffer, input.content.byteOffset, input.content.byteLength);
  await deps.blobs.put(DATASETS_BUCKET, row.blobKey, body, { contentType: 'application/octet-stream' });
  let stored: Awaited<ReturnType<FileStore['create']>>;
  try {
    stored = await deps.files.create(row, deps.maxTeamFileBytes ?? 0);
  } catch (err) {
    await deps.blobs.delete(DATASETS_BUCKET, row.blobKey).catch(() => undefined);
    throw err;
  }
  if (!stored.created) {
    await deps.blobs.delete(DATASETS_BUCKET, row.blobKey).catch(() => undefined);
    throw storageFull(row.bytes, stored.usedBytes, deps.maxTeamFileBytes ?? 0);
  }
  deps.logger.info({ teamId: row.teamId, fileId: id, purpose, bytes: row.bytes }, 'file stored');
  return row;
}

/** The team's unexpired file; NotFound FILE_NOT_FOUND otherwise. */
export async function getFile(deps: FileDeps, teamId: string, id: string): Promise<FileRow> {
  const row = isUuid(id) ? await deps.files.get(teamId, id, new Date()) : null;
  if (!row) throw fileNotFound(id);
  return row;
}

/** A file with its bytes; bytes gone meanwhile (deleted or swept since the record was read) are NotFound too. */
export async function getFileContent(
  deps: FileDeps,
  teamId: string,
  id: string,
): Promise<{ file: FileRow; content: Uint8Array }> {
  const file = await getFile(deps, teamId, id);
  try {
    return { file, content: await readAll(deps.blobs, DATASETS_BUCKET, file.blobKey) };
  } catch (err) {
    if (isAppError(err) && err.reason === 'BLOB_NOT_FOUND') throw fileNotFound(id);
    throw err;
  }
}

/**
 * A page of the team's unexpired files by created_at then id. The cursor may be any of the team's files, even one
 * that expired since the previous page, so paging goes on; an id that is none of them is InvalidArgument.
 */
export async function listFiles(
  deps: FileDeps,
  input: ListFilesInput,
): Promise<{ files: FileRow[]; hasMore: boolean }> {
  const purpose = input.purpose ? checkedPurpose(input.purpose) : undefined;
  if (input.limit < 0 || input.limit > MAX_FILES_PAGE)
    throw invalidField('limit', `must be 1 to ${MAX_FILES_PAGE} (0 for ${MAX_FILES_PAGE})`);
  const unknownCursor = () => invalidField('after_id', 'is not one of your files');
  if (input.afterId && !isUuid(input.afterId)) throw unknownCursor();
  const page = await deps.files.list(
    input.teamId,
    {
      ...(purpose ? { purpose } : {}),
      limit: input.limit || MAX_FILES_PAGE,
      ...(input.afterId ? { afterId: input.afterId } : {}),
      ascending: input.ascending,
    },
    new Date(),
  );
  if (!page) throw unknownCursor();
  return page;
}

/** Deletes the record, then the bytes (already gone is fine); returns the file deleted. */
export async function deleteFile(deps: FileDeps, teamId: string, id: string): Promise<FileRow> {
  const row = isUuid(id) ? await deps.files.delete(teamId, id, new Date()) : null;
  if (!row) throw fileNotFound(id);
  await deps.blobs.delete(DATASETS_BUCKET, row.blobKey);
  deps.logger.info({ teamId, fileId: id }, 'file deleted');
  return row;
}

/**
 * Deletes files expired by `now`: their bytes first, then their records. Reads already ignore an expired file, so
 * no reader sees a record without bytes, and a pass cut short leaves records the next pass finds again (never bytes
 * nobody points at). Returns how many records went.
 */
export async function sweepExpiredFiles(deps: FileDeps, now: Date = new Date()): Promise<number> {
  let removed = 0;
  for (;;) {
    const batch = await deps.files.expired(now, SWEEP_BATCH);
    if (!batch.length) break;
    for (const file of batch) await deps.blobs.delete(DATASETS_BUCKET, file.blobKey);
    const deleted = await deps.files.deleteExpired(
      batch.map((f) => f.id),
      now,
    );
    removed += deleted;
    // A short batch was the last; none deleted means another replica is sweeping the same rows.
    if (batch.length < SWEEP_BATCH || !deleted) break;
  }
  if (removed) deps.logger.info({ removed }, 'expired files deleted');
  return removed;
}
