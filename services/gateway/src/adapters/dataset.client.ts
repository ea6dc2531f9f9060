import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import {
  DatasetFormat,
  DatasetService,
  DatasetType,
  GenerationStatus,
  VersionStatus,
  type DatasetVersion,
} from '@whetstone/proto/dataset/v1';
import type { DatasetVersionView, DatasetsPort } from '../application/ports';

const iso = (ts: Timestamp | undefined): string | null => (ts ? timestampDate(ts).toISOString() : null);
const STATUS: Record<VersionStatus, string> = {
  [VersionStatus.UNSPECIFIED]: 'unknown',
  [VersionStatus.INITIALIZED]: 'initialized',
  [VersionStatus.UPLOADING]: 'uploading',
  [VersionStatus.CONVERTING]: 'converting',
  [VersionStatus.VALIDATING]: 'validating',
  [VersionStatus.READY]: 'ready',
  [VersionStatus.FAILED]: 'failed',
};
const GENERATION_STATUS: Record<GenerationStatus, string> = {
  [GenerationStatus.UNSPECIFIED]: 'unknown',
  [GenerationStatus.QUEUED]: 'queued',
  [GenerationStatus.RUNNING]: 'running',
  [GenerationStatus.READY]: 'ready',
  [GenerationStatus.FAILED]: 'failed',
};
const TYPES: Record<string, DatasetType> = {
  extraction: DatasetType.EXTRACTION,
  classification: DatasetType.CLASSIFICATION,
  generation: DatasetType.GENERATION,
  chat: DatasetType.GENERATION,
};
const FORMATS: Record<string, DatasetFormat> = {
  jsonl: DatasetFormat.JSONL,
  csv: DatasetFormat.CSV,
  conll: DatasetFormat.CONLL,
};
const TYPE_NAMES: Record<DatasetType, string> = {
  [DatasetType.UNSPECIFIED]: '',
  [DatasetType.EXTRACTION]: 'extraction',
  [DatasetType.CLASSIFICATION]: 'classification',
  [DatasetType.GENERATION]: 'generation',
};
const FORMAT_NAMES: Record<DatasetFormat, string> = {
  [DatasetFormat.UNSPECIFIED]: '',
  [DatasetFormat.JSONL]: 'jsonl',
  [DatasetFormat.CSV]: 'csv',
  [DatasetFormat.CONLL]: 'conll',
};

export function versionView(v: DatasetVersion | undefined): DatasetVersionView {
  const r = v?.report;
  return {
    id: v?.id ?? '',
    dataset_name: v?.datasetName ?? '',
    version_number: String(v?.versionNumber ?? 0),
    size: v?.size ?? 0,
    status: STATUS[v?.status ?? VersionStatus.UNSPECIFIED],
    type: TYPE_NAMES[v?.type ?? DatasetType.UNSPECIFIED],
    format: FORMAT_NAMES[v?.format ?? DatasetFormat.UNSPECIFIED],
    filename: v?.filename ?? '',
    ...(v?.corrections ? { corrections: v.corrections } : {}),
    created_at: iso(v?.createdAt),
    updated_at: iso(v?.updatedAt),
    report: r
      ? {
          total_rows: r.totalRows,
          valid_rows: r.validRows,
          duplicate_rows: r.duplicateRows,
          train_rows: r.trainRows,
          heldout_rows: r.heldoutRows,
          labels: r.labels,
          issues: r.issues.map((i) => ({ line: i.line, field: i.field, reason: i.reason, fatal: i.fatal })),
          issues_truncated: r.issuesTruncated,
          failure_reason: r.failureReason || null,
        }
      : null,
  };
}

/** The dataset service over gRPC, in the gateway's plain shapes. */
export function datasetsOverRpc(client: Client<typeof DatasetService>, ready: () => Promise<boolean>): DatasetsPort {
  return {
    ready,
    async createUpload(teamId, input) {
      const res = await client.createUpload({
        teamId,
        datasetName: input.name,
        type: TYPES[input.type] ?? DatasetType.UNSPECIFIED,
        format: FORMATS[input.format] ?? DatasetFormat.UNSPECIFIED,
        filename: input.filename,
      });
      return {
        version: versionView(res.version),
        uploadUrl: res.uploadUrl,
        expiresAt: iso(res.expiresAt),
        maxBytes: Number(res.maxBytes),
      };
    },
    async processUpload(teamId, name, versionNumber) {
      return versionView((await client.processUpload({ teamId, datasetName: name, versionNumber })).version);
    },
    async importFiles(teamId, input) {
      // Processing runs before the answer: up to a 50 MiB file's rows validated and split.
      const res = await client.importFiles({ teamId, ...input }, { timeoutMs: 120_000 });
      return { version: versionView(res.version), trainingLines: res.trainingLines };
    },
    async list(teamId) {
      const res = await client.listDatasets({ teamId });
      return res.datasets.map((d) => ({
        dataset_name: d.datasetName,
        status: STATUS[d.status],
        created_at: iso(d.createdAt),
        version_number: String(d.versionNumber),
        latest_ready_version: d.latestReadyVersion ? String(d.latestReadyVersion) : null,
      }));
    },
    async versions(teamId, name) {
      return (await client.getDataset({ teamId, datasetName: name })).versions.map(versionView);
    },
    async version(teamId, name, versionNumber) {
      return versionView((await client.getVersion({ teamId, datasetName: name, versionNumber })).version);
    },
    async remove(teamId, name) {
      await client.deleteDataset({ teamId, datasetName: name });
    },
    async startGeneration(teamId, input) {
      const res = await client.startGeneration({
        teamId,
        datasetName: input.name,
        entityTypes: input.entityTypes,
        classifications: input.classifications.map((c) => ({
          task: c.task,
          labels: c.labels,
          multiLabel: c.multi_label,
        })),
        domain: input.domain,
        count: input.count,
        seed: BigInt(input.seed),
      });
      return res.jobId;
    },
    async generation(teamId, jobId) {
      const g = await client.getGenerationJob({ teamId, jobId });
      return {
        job_id: g.jobId,
        status: GENERATION_STATUS[g.status],
        progress: { generated: g.generated, requested: g.requested },
        dataset_name: g.datasetName || null,
        version_number: g.versionNumber ? String(g.versionNumber) : null,
        error: g.error || null,
      };
    },
  };
}
