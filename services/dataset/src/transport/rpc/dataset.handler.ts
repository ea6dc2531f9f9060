import type { ServiceImpl } from '@connectrpc/connect';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Reasons, errors } from '@whetstone/errors';
import { DatasetFormat, DatasetService, DatasetType, VersionStatus } from '@whetstone/proto/dataset/v1';
import type { Datasets } from '../../application/datasets';
import type { VersionRow } from '../../application/ports';
import { DATASETS_BUCKET, type DatasetFormat as Format, type DatasetType as Type } from '../../domain/dataset';

const STATUS: Record<VersionRow['status'], VersionStatus> = {
  initialized: VersionStatus.INITIALIZED,
  uploading: VersionStatus.UPLOADING,
  converting: VersionStatus.CONVERTING,
  validating: VersionStatus.VALIDATING,
  ready: VersionStatus.READY,
  failed: VersionStatus.FAILED,
};
const TYPE_TO_PB: Record<Type, DatasetType> = {
  extraction: DatasetType.EXTRACTION,
  classification: DatasetType.CLASSIFICATION,
  generation: DatasetType.GENERATION,
};
const FORMAT_TO_PB: Record<Format, DatasetFormat> = {
  jsonl: DatasetFormat.JSONL,
  csv: DatasetFormat.CSV,
  conll: DatasetFormat.CONLL,
};
const typeOf = (t: DatasetType): Type => {
  const found = (Object.keys(TYPE_TO_PB) as Type[]).find((k) => TYPE_TO_PB[k] === t);
  if (!found)
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'dataset type must be extraction, classification or generation', [
      { field: 'dataset_type', message: 'must be extraction, classification or generation' },
    ]);
  return found;
};
const formatOf = (f: DatasetFormat): Format => {
  const found = (Object.keys(FORMAT_TO_PB) as Format[]).find((k) => FORMAT_TO_PB[k] === f);
  if (!found)
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'format must be jsonl, csv or conll', [
      { field: 'format', message: 'must be jsonl, csv or conll' },
    ]);
  return found;
};
const team = (teamId: string) => {
  if (!teamId)
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'team_id is required', [{ field: 'team_id', message: 'required' }]);
  return teamId;
};

export function versionToPb(v: VersionRow) {
  const r = v.report;
  return {
    id: v.id,
    datasetName: v.datasetName,
    versionNumber: v.versionNumber,
    size: v.size,
    status: STATUS[v.status],
    type: TYPE_TO_PB[v.type],
    format: FORMAT_TO_PB[v.format],
    filename: v.filename,
    createdAt: timestampFromDate(v.createdAt),
    updatedAt: timestampFromDate(v.updatedAt),
    ...(r
      ? {
          report: {
            totalRows: r.total_rows,
            validRows: r.valid_rows,
            duplicateRows: r.duplicate_rows,
            trainRows: r.train_rows,
            heldoutRows: r.heldout_rows,
            issues: r.issues,
            issuesTruncated: r.issues_truncated,
            failureReason: r.failure_reason,
            labels: Object.keys(r.labels).sort(),
          },
        }
      : {}),
  };
}

/** DatasetService: proto in, use case, proto out. */
export function datasetHandler(datasets: Datasets): ServiceImpl<typeof DatasetService> {
  return {
    async createUpload(req) {
      const out = await datasets.createUpload({
        teamId: team(req.teamId),
        name: req.datasetName,
        type: typeOf(req.type),
        format: formatOf(req.format),
        filename: req.filename,
      });
      return {
        version: versionToPb(out.version),
        uploadUrl: out.url,
        expiresAt: timestampFromDate(out.expiresAt),
        maxBytes: BigInt(out.maxBytes),
      };
    },
    async processUpload(req) {
      return {
        version: versionToPb(await datasets.processUpload(team(req.teamId), req.datasetName, req.versionNumber)),
      };
    },
    async listDatasets(req) {
      const rows = await datasets.listDatasets(team(req.teamId));
      return {
        datasets: rows.map((d) => ({
          datasetName: d.datasetName,
          status: STATUS[d.newest.status],
          createdAt: timestampFromDate(d.createdAt),
          versionNumber: d.newest.versionNumber,
        })),
      };
    },
    async getDataset(req) {
      return { versions: (await datasets.getDataset(team(req.teamId), req.datasetName)).map(versionToPb) };
    },
    async getVersion(req) {
      return { version: versionToPb(await datasets.getVersion(team(req.teamId), req.datasetName, req.versionNumber)) };
    },
    async deleteDataset(req) {
      await datasets.deleteDataset(team(req.teamId), req.datasetName);
      return {};
    },
    async resolveForTraining(req) {
      const out = await datasets.resolveForTraining(team(req.teamId), req.datasetName);
      return {
        version: versionToPb(out.version),
        bucket: DATASETS_BUCKET,
        trainKey: out.train,
        heldoutKey: out.heldout,
      };
    },
    async startGeneration(req) {
      if (req.decoderTask) {
        throw errors.invalid(
          Reasons.VALIDATION_FAILED,
          'Offline generation covers entity types and classification tasks; chat examples for a decoder task need a configured chat model, and none is configured.',
          [{ field: 'schema.decoder_task', message: 'not supported offline' }],
        );
      }
      const jobId = await datasets.startGeneration(team(req.teamId), req.datasetName, {
        entityTypes: req.entityTypes,
        classifications: req.classifications.map((c) => ({
          task: c.task,
          labels: c.labels,
          multi_label: c.multiLabel,
        })),
        domain: req.domain,
        count: req.count,
        seed: Number(req.seed),
      });
      return { jobId };
    },
    async getGenerationJob(req) {
      const g = await datasets.getGeneration(team(req.teamId), req.jobId);
      return {
        jobId: g.id,
        status: g.status,
        generated: g.generated,
        requested: g.requested,
        datasetName: g.status === 'ready' ? g.datasetName : '',
        versionNumber: g.versionNumber ?? 0,
        error: g.error ?? '',
      };
    },
  };
}
