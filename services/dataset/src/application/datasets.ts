import { randomUUID } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { PassThrough, type Readable } from 'node:stream';
import type { BlobStore } from '@whetstone/blobs';
import { Reasons, errors } from '@whetstone/errors';
import {
  JsonlValidator,
  conllToJsonl,
  csvToJsonl,
  decodeUtf8,
  generateExamples,
  isHeldOutJson,
  type RowError,
} from '@whetstone/ml';
import {
  DATASETS_BUCKET,
  MAX_REPORTED_ISSUES,
  MIN_TRAINING_EXAMPLES,
  UPLOAD_URL_SECONDS,
  nameProblem,
  splitKeys,
  uploadKey,
  validationKind,
  type DatasetFormat,
  type DatasetType,
  type VersionReport,
} from '../domain/dataset';
import type { DatasetStore, GenerationRequest, GenerationRow, VersionRow } from './ports';

export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DatasetDeps {
  store: DatasetStore;
  blobs: BlobStore;
  logger: Logger;
  /** Largest accepted upload (413 above it). */
  maxUploadBytes: number;
  /** CSV and CoNLL are converted in memory; larger files must be JSONL. */
  maxConvertBytes?: number;
  /** Names this process in processing claims. */
  instance?: string;
}

const LEASE_MS = 60_000;

/** The dataset service's use cases: uploads, processing, listing, deletion, generation. */
export class Datasets {
  private readonly instance: string;
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly deps: DatasetDeps) {
    this.instance = deps.instance ?? `dataset-${process.pid}-${randomUUID().slice(0, 8)}`;
  }

  async createUpload(input: {
    teamId: string;
    name: string;
    type: DatasetType;
    format: DatasetFormat;
    filename: string;
  }): Promise<{ version: VersionRow; url: string; expiresAt: Date; maxBytes: number }> {
    const problem = nameProblem(input.name);
    if (problem)
      throw errors.invalid(Reasons.VALIDATION_FAILED, `Invalid dataset name: ${problem}`, [
        { field: 'dataset_name', message: problem },
      ]);
    if (input.type === 'generation' && input.format !== 'jsonl') {
      throw errors.invalid(Reasons.VALIDATION_FAILED, 'Generation (chat) datasets are uploaded as JSONL.', [
        { field: 'format', message: 'must be jsonl for generation datasets' },
      ]);
    }
    if (input.format === 'csv' && input.type !== 'classification') {
      throw errors.invalid(Reasons.VALIDATION_FAILED, 'CSV uploads are (text, label) classification files.', [
        { field: 'format', message: 'csv is for classification datasets' },
      ]);
    }
    if (input.format === 'conll' && input.type !== 'extraction') {
      throw errors.invalid(Reasons.VALIDATION_FAILED, 'CoNLL uploads are BIO-tagged extraction files.', [
        { field: 'format', message: 'conll is for extraction datasets' },
      ]);
    }
    const version = await this.deps.store.createVersion({
      ...input,
      keyFor: (datasetId, n) => uploadKey(input.teamId, datasetId, n, input.format),
    });
    const url = await this.deps.blobs.presignPut(DATASETS_BUCKET, version.uploadKey, {
      expiresInSeconds: UPLOAD_URL_SECONDS,
      maxBytes: this.deps.maxUploadBytes,
    });
    return { version, url: url.url, expiresAt: url.expiresAt, maxBytes: this.deps.maxUploadBytes };
  }

  async listDatasets(teamId: string) {
    return this.deps.store.listDatasets(teamId);
  }

  async getDataset(teamId: string, name: string): Promise<VersionRow[]> {
    const versions = await this.deps.store.listVersions(teamId, name);
    if (!versions.length) throw notFound(name);
    return versions;
  }

  async getVersion(teamId: string, name: string, versionNumber: number): Promise<VersionRow> {
    const version = await this.deps.store.getVersion(teamId, name, versionNumber);
    if (!version)
      throw errors.notFound('DATASET_VERSION_NOT_FOUND', `Dataset '${name}' has no version ${versionNumber}.`);
    return version;
  }

  /** Starts processing an uploaded version; returns it in `converting` (poll until ready or failed). */
  async processUpload(teamId: string, name: string, versionNumber: number): Promise<VersionRow> {
    const versions = await this.deps.store.listVersions(teamId, name);
    if (!versions.length) throw notFound(name);
    const version = versionNumber > 0 ? versions.find((v) => v.versionNumber === versionNumber) : versions[0];
    if (!version)
      throw errors.notFound('DATASET_VERSION_NOT_FOUND', `Dataset '${name}' has no version ${versionNumber}.`);
    if (version.status !== 'uploading') {
      throw errors.precondition(
        'DATASET_NOT_UPLOADING',
        `Version ${version.versionNumber} of '${name}' is ${version.status}; only an uploaded version can be processed (create a new upload URL for a new version).`,
      );
    }
    const stat = await this.deps.blobs.stat(DATASETS_BUCKET, version.uploadKey);
    if (!stat)
      throw errors.precondition(
        'UPLOAD_MISSING',
        `Nothing was uploaded for version ${version.versionNumber} of '${name}': PUT the file to the upload URL first.`,
      );
    if (!(await this.deps.store.transition(version.id, ['uploading'], 'converting'))) {
      throw errors.precondition(
        'DATASET_NOT_UPLOADING',
        `Version ${version.versionNumber} of '${name}' is already being processed.`,
      );
    }
    this.startProcessing(version.id);
    return { ...version, status: 'converting' };
  }

  async resolveForTraining(
    teamId: string,
    name: string,
  ): Promise<{ version: VersionRow; train: string; heldout: string }> {
    const versions = await this.deps.store.listVersions(teamId, name);
    if (!versions.length) throw notFound(name);
    const ready = versions.find((v) => v.status === 'ready');
    if (!ready)
      throw errors.precondition(
        'DATASET_NOT_READY',
        `Dataset '${name}' has no ready version (newest is ${versions[0]!.status}).`,
      );
    const keys = splitKeys(teamId, ready.datasetId, ready.versionNumber);
    return { version: ready, ...keys };
  }

  async deleteDataset(teamId: string, name: string): Promise<void> {
    const deleted = await this.deps.store.deleteDataset(teamId, name);
    if (!deleted) throw notFound(name);
    const removed = await this.deps.blobs.deletePrefix(DATASETS_BUCKET, `teams/${teamId}/${deleted.datasetId}/`);
    this.deps.logger.info({ teamId, dataset: name, blobs: removed }, 'dataset deleted');
  }

  /** Re-runs versions a crashed process left converting or validating (their claim expired). */
  async resumeAbandoned(): Promise<number> {
    const abandoned = await this.deps.store.abandoned();
    for (const v of abandoned) this.startProcessing(v.id);
    return abandoned.length;
  }

  /** At start: generation jobs a stopped process left unfinished run again, into a new version. */
  async resumeGenerations(): Promise<number> {
    const jobs = await this.deps.store.unfinishedGenerations();
    for (const j of jobs) void this.runGeneration(j);
    return jobs.length;
  }

  /** Resolves when background work finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running.values()]);
  }

  private startProcessing(versionId: string): void {
    if (this.running.has(versionId)) return;
    const task = this.process(versionId)
      .catch((err: unknown) => this.deps.logger.error({ err, versionId }, 'processing crashed'))
      .finally(() => this.running.delete(versionId));
    this.running.set(versionId, task);
  }

  /**
   * converting → validating → ready | failed. JSONL is streamed line by line
   * (memory stays flat); CSV and CoNLL are converted in memory first. Valid rows
   * stream to the train and held-out blobs as they are checked.
   */
  private async process(versionId: string): Promise<void> {
    const { store, blobs, logger } = this.deps;
    if (!(await store.claim(versionId, this.instance, LEASE_MS))) return;
    const version = await store.getVersionById(versionId);
    if (!version) return;
    const renew = setInterval(
      () => void store.renew(versionId, this.instance, LEASE_MS).catch(() => undefined),
      LEASE_MS / 3,
    );
    const started = Date.now();
    try {
      let lines: AsyncIterable<string[]>;
      if (version.format === 'jsonl') {
        lines = readLines(await blobs.get(DATASETS_BUCKET, version.uploadKey));
      } else {
        const bytes = await readAll(
          await blobs.get(DATASETS_BUCKET, version.uploadKey),
          this.deps.maxConvertBytes ?? 100 * 1024 * 1024,
        );
        if (!bytes)
          return await this.fail(
            version,
            [
              {
                line: 0,
                field: '(file)',
                reason: `${version.format.toUpperCase()} files are converted in memory and must be at most ${Math.round((this.deps.maxConvertBytes ?? 100 * 1024 * 1024) / 1024 / 1024)} MB; upload JSONL for larger files`,
              },
            ],
            'file too large to convert',
          );
        const decoded = decodeUtf8(bytes);
        if (decoded.error) return await this.fail(version, [decoded.error], 'the file is not valid UTF-8');
        const converted = version.format === 'csv' ? csvToJsonl(decoded.text) : conllToJsonl(decoded.text);
        if (converted.errors.length)
          return await this.fail(version, converted.errors, `the ${version.format.toUpperCase()} file has errors`);
        lines = (async function* () {
          yield converted.jsonl.split('\n');
        })();
      }
      await store.transition(versionId, ['converting'], 'validating');

      const validator = new JsonlValidator(validationKind(version.type), {
        minExamples: MIN_TRAINING_EXAMPLES,
        maxErrors: MAX_REPORTED_ISSUES,
      });
      const keys = splitKeys(version.teamId, version.datasetId, version.versionNumber);
      const train = new PassThrough();
      const heldout = new PassThrough();
      const uploads = Promise.all([
        blobs.put(DATASETS_BUCKET, keys.train, train, { contentType: 'application/x-ndjson' }),
        blobs.put(DATASETS_BUCKET, keys.heldout, heldout, { contentType: 'application/x-ndjson' }),
      ]);
      let trainRows = 0;
      let heldoutRows = 0;
      let line = 0;
      let badUtf8: RowError | null = null;
      for await (const batch of lines) {
        let toTrain = '';
        let toHeldout = '';
        for (const text of batch) {
          line++;
          const raw = text.endsWith('\r') ? text.slice(0, -1) : text;
          if (!badUtf8 && raw.includes('\uFFFD'))
            badUtf8 = { line, field: '(row)', reason: 'the file is not valid UTF-8 here' };
          const valid = validator.pushSerialized(raw, line);
          if (!valid) continue;
          if (isHeldOutJson(valid.json)) {
            heldoutRows++;
            toHeldout += `${valid.json}\n`;
          } else {
            trainRows++;
            toTrain += `${valid.json}\n`;
          }
        }
        for (const [out, text] of [
          [train, toTrain],
          [heldout, toHeldout],
        ] as const) {
          if (text && !out.write(text)) await new Promise((r) => out.once('drain', r));
        }
      }
      train.end();
      heldout.end();
      await uploads;
      if (badUtf8) validator.errors.unshift(badUtf8);
      validator.finish();
      // A held-out split needs at least one row: with very small files, move one over.
      const report: VersionReport = {
        total_rows: validator.rows,
        valid_rows: validator.valid,
        duplicate_rows: validator.duplicates.length,
        duplicate_lines: validator.duplicates.slice(0, MAX_REPORTED_ISSUES),
        train_rows: trainRows,
        heldout_rows: heldoutRows,
        issues: [
          ...validator.errors.map((e) => ({ line: e.line, field: e.field, reason: e.reason, fatal: true })),
          ...validator.duplicates.slice(0, 20).map((l) => ({
            line: l,
            field: '(row)',
            reason: 'duplicate of an earlier row (kept, not fatal)',
            fatal: false,
          })),
        ].slice(0, MAX_REPORTED_ISSUES),
        issues_truncated: Math.max(0, validator.totalErrors - MAX_REPORTED_ISSUES),
        failure_reason: '',
        labels: validator.labels,
      };
      if (validator.totalErrors > 0) {
        report.failure_reason = `${validator.totalErrors} problem(s) found; the first is on line ${validator.errors[0]!.line}: ${validator.errors[0]!.reason}`;
        await blobs.delete(DATASETS_BUCKET, keys.train).catch(() => undefined);
        await blobs.delete(DATASETS_BUCKET, keys.heldout).catch(() => undefined);
        await store.transition(versionId, ['validating'], 'failed', {
          report,
          failureReason: report.failure_reason,
          size: 0,
        });
        logger.info({ versionId, errors: validator.totalErrors }, 'dataset version failed validation');
        return;
      }
      await store.transition(versionId, ['validating'], 'ready', { report, size: validator.valid });
      logger.info({ versionId, size: validator.valid, ms: Date.now() - started }, 'dataset version ready');
    } catch (err) {
      logger.warn({ err, versionId }, 'dataset processing failed');
      await this.fail(version, [], `processing failed: ${err instanceof Error ? err.message : String(err)}`).catch(
        () => undefined,
      );
    } finally {
      clearInterval(renew);
    }
  }

  private async fail(version: VersionRow, rowErrors: RowError[], reason: string): Promise<void> {
    const report: VersionReport = {
      total_rows: 0,
      valid_rows: 0,
      duplicate_rows: 0,
      duplicate_lines: [],
      train_rows: 0,
      heldout_rows: 0,
      issues: rowErrors.slice(0, MAX_REPORTED_ISSUES).map((e) => ({ ...e, fatal: true })),
      issues_truncated: Math.max(0, rowErrors.length - MAX_REPORTED_ISSUES),
      failure_reason: rowErrors[0]
        ? `${reason}; the first problem is on line ${rowErrors[0].line}: ${rowErrors[0].reason}`
        : reason,
      labels: {},
    };
    await this.deps.store.transition(version.id, ['converting', 'validating'], 'failed', {
      report,
      failureReason: report.failure_reason,
      size: 0,
    });
  }

  async startGeneration(teamId: string, name: string, request: GenerationRequest): Promise<string> {
    const datasetName = name || `generated-${new Date().toISOString().slice(0, 10)}-${randomUUID().slice(0, 6)}`;
    const problem = nameProblem(datasetName);
    if (problem)
      throw errors.invalid(Reasons.VALIDATION_FAILED, `Invalid dataset name: ${problem}`, [
        { field: 'dataset_name', message: problem },
      ]);
    if (!request.entityTypes.length && !request.classifications.length) {
      throw errors.invalid(
        Reasons.VALIDATION_FAILED,
        'Give entity types or classification tasks to generate examples for.',
        [{ field: 'schema', message: 'needs entities or classifications' }],
      );
    }
    if (request.count < MIN_TRAINING_EXAMPLES || request.count > 10_000) {
      throw errors.invalid(Reasons.VALIDATION_FAILED, `count must be ${MIN_TRAINING_EXAMPLES} to 10,000.`, [
        { field: 'count', message: `must be ${MIN_TRAINING_EXAMPLES} to 10000` },
      ]);
    }
    const row: GenerationRow = {
      id: randomUUID(),
      teamId,
      datasetName,
      request,
      status: 'queued',
      generated: 0,
      requested: request.count,
      versionNumber: null,
      error: null,
    };
    await this.deps.store.createGeneration(row);
    void this.runGeneration(row);
    return row.id;
  }

  async getGeneration(teamId: string, id: string): Promise<GenerationRow> {
    const row = await this.deps.store.getGeneration(teamId, id);
    if (!row) throw errors.notFound('GENERATION_JOB_NOT_FOUND', `Generation job '${id}' was not found.`);
    return row;
  }

  /** Generates rows into a new version's upload, then runs the same processing as an upload. */
  private async runGeneration(job: GenerationRow): Promise<void> {
    const { store, blobs, logger } = this.deps;
    try {
      await store.updateGeneration(job.id, { status: 'running', generated: 0 });
      const type: DatasetType = job.request.entityTypes.length ? 'extraction' : 'classification';
      const version = await store.createVersion({
        teamId: job.teamId,
        name: job.datasetName,
        type,
        format: 'jsonl',
        filename: 'generated.jsonl',
        keyFor: (datasetId, n) => uploadKey(job.teamId, datasetId, n, 'jsonl'),
      });
      const body = new PassThrough();
      const upload = blobs.put(DATASETS_BUCKET, version.uploadKey, body, { contentType: 'application/x-ndjson' });
      let generated = 0;
      for (const row of generateExamples({
        entityTypes: job.request.entityTypes,
        classifications: job.request.classifications,
        domain: job.request.domain,
        count: job.request.count,
        seed: job.request.seed,
      })) {
        if (!body.write(`${JSON.stringify(row)}\n`)) await new Promise((r) => body.once('drain', r));
        generated++;
        if (generated % 500 === 0) {
          await store.updateGeneration(job.id, { generated });
          await new Promise((r) => setImmediate(r));
        }
      }
      body.end();
      await upload;
      await store.updateGeneration(job.id, { generated, versionNumber: version.versionNumber });
      await store.transition(version.id, ['uploading'], 'converting');
      this.startProcessing(version.id);
      await this.running.get(version.id);
      const done = await store.getVersionById(version.id);
      if (done?.status === 'ready') await store.updateGeneration(job.id, { status: 'ready' });
      else
        await store.updateGeneration(job.id, {
          status: 'failed',
          error: done?.failureReason ?? 'the generated dataset did not validate',
        });
    } catch (err) {
      logger.warn({ err, jobId: job.id }, 'generation failed');
      await store
        .updateGeneration(job.id, { status: 'failed', error: err instanceof Error ? err.message : String(err) })
        .catch(() => undefined);
    }
  }
}

function notFound(name: string) {
  return errors.notFound('DATASET_NOT_FOUND', `Dataset '${name}' was not found.`);
}

/** Lines of a UTF-8 stream, a chunk's worth at a time (invalid bytes become U+FFFD, reported by the caller). */
async function* readLines(stream: Readable): AsyncIterable<string[]> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of stream) {
    const lines = (rest + decoder.write(chunk as Buffer)).split('\n');
    rest = lines.pop()!;
    yield lines;
  }
  rest += decoder.end();
  if (rest) yield [rest];
}

async function readAll(stream: Readable, max: number): Promise<Uint8Array | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > max) {
      stream.destroy();
      return null;
    }
    chunks.push(chunk as Buffer);
  }
  return new Uint8Array(Buffer.concat(chunks));
}
