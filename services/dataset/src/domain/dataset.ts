/** Dataset domain: names, kinds, formats and the version state machine. */

export type VersionStatus = 'initialized' | 'uploading' | 'converting' | 'validating' | 'ready' | 'failed';
export type DatasetType = 'extraction' | 'classification' | 'generation';
export type DatasetFormat = 'jsonl' | 'csv' | 'conll';
export type GenerationStatus = 'queued' | 'running' | 'ready' | 'failed';

export const DATASETS_BUCKET = 'datasets';
/** Fewer valid examples than this cannot train. */
export const MIN_TRAINING_EXAMPLES = 10;
/** Issues kept in a report; the rest are counted. */
export const MAX_REPORTED_ISSUES = 100;
/** How long an upload URL works. */
export const UPLOAD_URL_SECONDS = 3600;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** Null when the name is fine, else what is wrong with it. */
export function nameProblem(name: string): string | null {
  return NAME.test(name)
    ? null
    : 'must be 1 to 100 characters: letters, digits, ".", "_" or "-", starting with a letter or digit';
}

const NEXT: Record<VersionStatus, VersionStatus[]> = {
  initialized: ['uploading'],
  uploading: ['converting', 'failed'],
  converting: ['validating', 'failed', 'converting'],
  validating: ['ready', 'failed', 'converting'],
  ready: [],
  failed: [],
};

export function canMove(from: VersionStatus, to: VersionStatus): boolean {
  return NEXT[from].includes(to);
}

/** Null when a file of `format` can hold examples of `type`, else what is wrong, for the `format` field. */
export function formatProblem(type: DatasetType, format: DatasetFormat): { message: string; detail: string } | null {
  if (type === 'generation' && format !== 'jsonl')
    return {
      message: 'Generation (chat) datasets are uploaded as JSONL.',
      detail: 'must be jsonl for generation datasets',
    };
  if (format === 'csv' && type !== 'classification')
    return {
      message: 'CSV uploads are (text, label) classification files.',
      detail: 'csv is for classification datasets',
    };
  if (format === 'conll' && type !== 'extraction')
    return { message: 'CoNLL uploads are BIO-tagged extraction files.', detail: 'conll is for extraction datasets' };
  return null;
}

/** What the ML validator checks rows as. */
export function validationKind(type: DatasetType): 'extraction' | 'classification' | 'chat' {
  return type === 'generation' ? 'chat' : type;
}

export interface ReportIssue {
  line: number;
  field: string;
  reason: string;
  fatal: boolean;
}

export interface VersionReport {
  total_rows: number;
  valid_rows: number;
  duplicate_rows: number;
  duplicate_lines: number[];
  train_rows: number;
  heldout_rows: number;
  issues: ReportIssue[];
  issues_truncated: number;
  failure_reason: string;
  labels: Record<string, number>;
}

export function uploadKey(teamId: string, datasetId: string, version: number, format: DatasetFormat): string {
  return `teams/${teamId}/${datasetId}/v${version}/upload.${format}`;
}

export function splitKeys(teamId: string, datasetId: string, version: number): { train: string; heldout: string } {
  return {
    train: `teams/${teamId}/${datasetId}/v${version}/train.jsonl`,
    heldout: `teams/${teamId}/${datasetId}/v${version}/heldout.jsonl`,
  };
}
