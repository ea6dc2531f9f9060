/** Proto ⇄ domain for the dataset contract: enums, versions, generation jobs. No rules live here. */
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Reasons, errors } from '@whetstone/errors';
import {
  DatasetFormat as PbFormat,
  DatasetType as PbType,
  GenerationStatus as PbGenerationStatus,
  VersionStatus as PbVersionStatus,
  type GetGenerationJobResponse,
  type StartGenerationRequest,
} from '@whetstone/proto/dataset/v1';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { DatasetVersionSchema } from '@whetstone/proto/dataset/v1';
import type { GenerationRequest, GenerationRow, VersionRow } from '../../application/ports';
import type { DatasetFormat, DatasetType, GenerationStatus, VersionStatus } from '../../domain/dataset';

const VERSION_STATUS: Record<VersionStatus, PbVersionStatus> = {
  initialized: PbVersionStatus.INITIALIZED,
  uploading: PbVersionStatus.UPLOADING,
  converting: PbVersionStatus.CONVERTING,
  validating: PbVersionStatus.VALIDATING,
  ready: PbVersionStatus.READY,
  failed: PbVersionStatus.FAILED,
};
const GENERATION_STATUS: Record<GenerationStatus, PbGenerationStatus> = {
  queued: PbGenerationStatus.QUEUED,
  running: PbGenerationStatus.RUNNING,
  ready: PbGenerationStatus.READY,
  failed: PbGenerationStatus.FAILED,
};
const TYPE: Record<DatasetType, PbType> = {
  extraction: PbType.EXTRACTION,
  classification: PbType.CLASSIFICATION,
  generation: PbType.GENERATION,
};
const FORMAT: Record<DatasetFormat, PbFormat> = {
  jsonl: PbFormat.JSONL,
  csv: PbFormat.CSV,
  conll: PbFormat.CONLL,
};

/** The proto status of a version; VERSION_STATUS_UNSPECIFIED stands for "none yet" (a new version's from-status). */
export function versionStatusToPb(status: VersionStatus | ''): PbVersionStatus {
  return status ? VERSION_STATUS[status] : PbVersionStatus.UNSPECIFIED;
}

function fromPb<T extends string, P>(table: Record<T, P>, value: P): T | undefined {
  return (Object.keys(table) as T[]).find((k) => table[k] === value);
}

export function typeFromPb(type: PbType): DatasetType {
  const found = fromPb(TYPE, type);
  if (!found)
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'dataset type must be extraction, classification or generation', [
      { field: 'dataset_type', message: 'must be extraction, classification or generation' },
    ]);
  return found;
}

export function formatFromPb(format: PbFormat): DatasetFormat {
  const found = fromPb(FORMAT, format);
  if (!found)
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'format must be jsonl, csv or conll', [
      { field: 'format', message: 'must be jsonl, csv or conll' },
    ]);
  return found;
}

/** The calling team; InvalidArgument when the gateway sent none. */
export function teamFromPb(teamId: string): string {
  if (!teamId)
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'team_id is required', [{ field: 'team_id', message: 'required' }]);
  return teamId;
}

export function versionToPb(v: VersionRow): MessageInitShape<typeof DatasetVersionSchema> {
  const r = v.report;
  return {
    id: v.id,
    datasetName: v.datasetName,
    versionNumber: v.versionNumber,
    size: v.size,
    status: VERSION_STATUS[v.status],
    type: TYPE[v.type],
    format: FORMAT[v.format],
    filename: v.filename,
    corrections: v.corrections,
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

export function generationRequestFromPb(req: StartGenerationRequest): GenerationRequest {
  if (req.decoderTask) {
    throw errors.invalid(
      Reasons.VALIDATION_FAILED,
      'Offline generation covers entity types and classification tasks; chat examples for a decoder task need a configured chat model, and none is configured.',
      [{ field: 'schema.decoder_task', message: 'not supported offline' }],
    );
  }
  return {
    entityTypes: req.entityTypes,
    classifications: req.classifications.map((c) => ({ task: c.task, labels: c.labels, multi_label: c.multiLabel })),
    domain: req.domain,
    count: req.count,
    seed: Number(req.seed),
  };
}

export function generationToPb(g: GenerationRow): Omit<GetGenerationJobResponse, '$typeName'> {
  return {
    jobId: g.id,
    status: GENERATION_STATUS[g.status],
    generated: g.generated,
    requested: g.requested,
    datasetName: g.status === 'ready' ? g.datasetName : '',
    versionNumber: g.versionNumber ?? 0,
    error: g.error ?? '',
  };
}
