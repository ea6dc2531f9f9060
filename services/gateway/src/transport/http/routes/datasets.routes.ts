import { z } from 'zod';
import { AppError, Reasons } from '@whetstone/errors';
import type { DatasetsPort } from '../../../application/ports';
import type { Api } from '../api';
import { authOf } from '../auth';
import { INT32_MAX } from '../validate';

const Name = z.string().trim().min(1, 'is required').max(100);
const UploadUrlBody = z
  .object({
    dataset_name: Name,
    dataset_type: z.enum(['extraction', 'classification', 'generation', 'chat']).default('extraction'),
    format: z.enum(['jsonl', 'csv', 'conll']).default('jsonl'),
    filename: z.string().trim().min(1, 'is required').max(255),
  })
  .openapi('DatasetUploadUrlRequest');
/** A version as the replies write it ("2"), or as a number (2). */
const VersionNumber = z
  .union([z.number(), z.string().regex(/^\d+$/, 'must be a version number such as "2"').transform(Number)], {
    error: 'must be a version number such as "2"',
  })
  .pipe(
    z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(INT32_MAX, `must be at most ${INT32_MAX}`),
  );
const ProcessBody = z
  .object({
    dataset_name: Name,
    version_number: VersionNumber.optional(),
  })
  .openapi('DatasetProcessRequest');
const GenerateBody = z
  .object({
    dataset_name: Name.optional(),
    schema: z
      .object({
        entities: z.array(z.string().trim().min(1).max(100)).max(50).optional(),
        classifications: z
          .array(
            z.object({
              task: z.string().trim().min(1).max(100),
              labels: z.array(z.string().trim().min(1).max(100)).min(2, 'needs at least 2 labels').max(100),
              multi_label: z.boolean().optional(),
            }),
          )
          .max(10)
          .optional(),
        decoder_task: z.string().max(2000).optional(),
      })
      .refine((s) => Boolean(s.entities?.length || s.classifications?.length || s.decoder_task), {
        message: 'give entities, classifications or a decoder_task',
      }),
    domain: z.string().max(2000).optional(),
    count: z.number().int().min(10, 'must be at least 10').max(10_000, 'must be at most 10000').default(200),
    seed: z.number().int().min(0).max(INT32_MAX).optional(),
  })
  .openapi('GenerateRequest');

const Iso = z.string().nullable();
/** A dataset version as the reads answer it: `version_number` is a string, as the spec types it. */
const DatasetVersion = z
  .object({
    id: z.string(),
    dataset_name: z.string(),
    version_number: z.string().openapi({ description: 'Version label such as "1", "2"', example: '1' }),
    size: z.number().openapi({ description: 'Examples in the version' }),
    status: z.enum(['initialized', 'uploading', 'converting', 'validating', 'ready', 'failed']),
    type: z.string(),
    format: z.string(),
    filename: z.string(),
    corrections: z.number().optional().openapi({ description: 'Feedback datasets: corrections among the verdicts' }),
    created_at: Iso,
    updated_at: Iso,
  })
  .openapi('DatasetVersion');
const DatasetVersionsResponse = z
  .object({ success: z.boolean(), count: z.number(), versions: z.array(DatasetVersion) })
  .openapi('DatasetVersionsResponse');
const DatasetVersionResponse = DatasetVersion.extend({
  success: z.boolean(),
  report: z
    .object({
      total_rows: z.number(),
      valid_rows: z.number(),
      duplicate_rows: z.number(),
      train_rows: z.number(),
      heldout_rows: z.number(),
      labels: z.array(z.string()),
      issues: z.array(z.object({ line: z.number(), field: z.string(), reason: z.string(), fatal: z.boolean() })),
      issues_truncated: z.number(),
      failure_reason: z.string().nullable(),
    })
    .nullable()
    .openapi({ description: 'The validation report; null before validation' }),
}).openapi('DatasetVersionWithReport');
const DatasetListResponse = z
  .object({
    success: z.boolean(),
    count: z.number(),
    datasets: z.array(
      z.object({
        dataset_name: z.string(),
        status: z.string().openapi({ description: 'The newest version’s' }),
        created_at: Iso,
        version_number: z.string().openapi({ description: 'The newest version’s label', example: '2' }),
        latest_ready_version: z.string().nullable().openapi({ description: 'The newest ready version’s label' }),
      }),
    ),
  })
  .openapi('DatasetListResponse');

/** A version number travels as an int32: anything above can name no version, and is as malformed as `-1`. */
const versionParam = (value: unknown): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > INT32_MAX)
    throw new AppError(
      'Malformed',
      Reasons.MALFORMED_PARAMETER,
      'Invalid path parameter: version must be a positive integer below 2^31',
    );
  return n;
};

/** The calling team, from the API key or the dashboard session. */
const team = (res: Parameters<typeof authOf>[0]) => authOf(res).principal.teamId;

/** Datasets, uploads through presigned URLs, processing and synthetic generation, as the spec's Datasets section. */
export function registerDatasetRoutes(api: Api, datasets: DatasetsPort): void {
  api.route(
    {
      method: 'get',
      path: '/core/datasets',
      summary: 'List datasets with their newest version',
      tag: 'Datasets',
      auth: 'key-or-session',
      response: { status: 200, description: 'Datasets', schema: DatasetListResponse },
    },
    async ({ res }) => {
      const list = await datasets.list(team(res));
      return { success: true, count: list.length, datasets: list };
    },
  );
  registerUploadRoutes(api, datasets);
  registerReadRoutes(api, datasets);
  registerGenerationRoutes(api, datasets);
}

/** Reading and deleting one dataset and its versions. */
function registerReadRoutes(api: Api, datasets: DatasetsPort): void {
  api.route(
    {
      method: 'get',
      path: '/core/datasets/:name',
      summary: 'A dataset’s versions, newest first',
      tag: 'Datasets',
      auth: 'key-or-session',
      response: { status: 200, description: 'Versions, newest first', schema: DatasetVersionsResponse },
    },
    async ({ req, res }) => {
      const versions = await datasets.versions(team(res), String(req.params.name));
      return { success: true, count: versions.length, versions: versions.map(({ report: _report, ...v }) => v) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/core/datasets/:name/:version',
      summary: 'One version with its validation report',
      tag: 'Datasets',
      auth: 'key-or-session',
      response: { status: 200, description: 'The version', schema: DatasetVersionResponse },
    },
    async ({ req, res }) => {
      return {
        success: true,
        ...(await datasets.version(team(res), String(req.params.name), versionParam(req.params.version))),
      };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/core/datasets/:name',
      summary: 'Delete a dataset, every version and its files (completed jobs keep working)',
      tag: 'Datasets',
      auth: 'key-or-session',
      response: { status: 200, description: 'Deleted; empty body' },
    },
    async ({ req, res }) => {
      await datasets.remove(team(res), String(req.params.name));
      return undefined;
    },
  );
}

/** Presigned uploads and their processing. */
function registerUploadRoutes(api: Api, datasets: DatasetsPort): void {
  for (const path of ['/core/datasets/upload/url', '/v1/datasets/upload/url']) {
    api.route(
      {
        method: 'post',
        path,
        summary: 'Create a presigned PUT URL for a new dataset version (N+1 under an existing name)',
        tag: 'Datasets',
        auth: 'key-or-session',
        body: UploadUrlBody,
      },
      async ({ res, body }) => {
        const out = await datasets.createUpload(team(res), {
          name: body.dataset_name,
          type: body.dataset_type,
          format: body.format,
          filename: body.filename,
        });
        const expiresIn = out.expiresAt
          ? Math.max(0, Math.round((Date.parse(out.expiresAt) - Date.now()) / 1000))
          : 3600;
        return {
          success: true,
          dataset_name: out.version.dataset_name,
          version_number: out.version.version_number,
          version_id: out.version.id,
          status: out.version.status,
          upload_url: out.uploadUrl,
          method: 'PUT',
          expires_at: out.expiresAt,
          expires_in_seconds: expiresIn,
          max_bytes: out.maxBytes,
          next: 'PUT the file to upload_url, then POST /core/datasets/upload/process',
        };
      },
    );
  }

  api.route(
    {
      method: 'post',
      path: '/core/datasets/upload/process',
      summary: 'Process an uploaded version: converting → validating → ready, or failed with a row-level report',
      tag: 'Datasets',
      auth: 'key-or-session',
      body: ProcessBody,
      response: { status: 202, description: 'Processing started; poll the version' },
    },
    async ({ res, body }) => {
      const version = await datasets.processUpload(team(res), body.dataset_name, body.version_number ?? 0);
      return { success: true, ...version };
    },
  );
}

/** Offline synthetic generation jobs. */
function registerGenerationRoutes(api: Api, datasets: DatasetsPort): void {
  api.route(
    {
      method: 'post',
      path: '/generate',
      summary: 'Generate a synthetic dataset offline from entity types or classification labels',
      tag: 'Datasets',
      auth: 'key-or-session',
      body: GenerateBody,
      response: { status: 202, description: 'Job started' },
    },
    async ({ res, body }) => {
      const jobId = await datasets.startGeneration(team(res), {
        name: body.dataset_name ?? '',
        entityTypes: body.schema.entities ?? [],
        classifications: (body.schema.classifications ?? []).map((c) => ({
          task: c.task,
          labels: c.labels,
          multi_label: c.multi_label ?? false,
        })),
        domain: body.domain ?? '',
        count: body.count,
        seed: body.seed ?? Math.floor(Math.random() * 2 ** 31),
      });
      return { job_id: jobId, status: 'queued' };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/generate/jobs/:job_id',
      summary: 'A generation job’s status and progress; names the dataset when ready',
      tag: 'Datasets',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      return datasets.generation(team(res), String(req.params.job_id));
    },
  );
}
