import type { BlobStore } from '@whetstone/blobs';
import type { Logger } from '@whetstone/telemetry';
import type {
  DatasetFormat,
  DatasetType,
  GenerationStatus,
  ReportIssue,
  VersionReport,
  VersionStatus,
} from '../domain/dataset';
import type { FeedbackDeletion, FeedbackExamples, FeedbackVerdict } from '../domain/feedback';
import type { FilePurpose } from '../domain/file';

export interface VersionRow {
  id: string;
  datasetId: string;
  teamId: string;
  datasetName: string;
  versionNumber: number;
  type: DatasetType;
  format: DatasetFormat;
  filename: string;
  status: VersionStatus;
  size: number;
  uploadKey: string;
  report: VersionReport | null;
  /** Issues found while the file was made (not in it), merged into the report as non-fatal. */
  notes: ReportIssue[];
  /** Feedback versions: corrections among their verdicts; 0 for other datasets. */
  corrections: number;
  failureReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface DatasetSummaryRow {
  datasetName: string;
  createdAt: Date;
  newest: VersionRow;
  /** The newest ready version's number (what training resolves the name to); null when none is ready. */
  latestReadyVersion: number | null;
}

export interface GenerationRow {
  id: string;
  teamId: string;
  datasetName: string;
  request: GenerationRequest;
  status: GenerationStatus;
  generated: number;
  requested: number;
  versionNumber: number | null;
  error: string | null;
}

export interface GenerationRequest {
  entityTypes: string[];
  classifications: { task: string; labels: string[]; multi_label: boolean }[];
  domain: string;
  count: number;
  seed: number;
}

/** Persistence; every status change writes its events in the same transaction. */
export interface DatasetStore {
  /** Creates the dataset if needed and its next version (status uploading). */
  createVersion(input: {
    teamId: string;
    name: string;
    type: DatasetType;
    format: DatasetFormat;
    filename: string;
    keyFor: (datasetId: string, version: number) => string;
    notes?: ReportIssue[];
    /** Feedback versions: corrections among their verdicts. */
    corrections?: number;
  }): Promise<VersionRow>;
  listDatasets(teamId: string): Promise<DatasetSummaryRow[]>;
  listVersions(teamId: string, name: string): Promise<VersionRow[]>;
  getVersion(teamId: string, name: string, versionNumber: number): Promise<VersionRow | null>;
  getVersionById(id: string): Promise<VersionRow | null>;
  /** Moves a version if it is in `from`; false otherwise. */
  transition(
    id: string,
    from: VersionStatus[],
    to: VersionStatus,
    patch?: { size?: number; report?: VersionReport; failureReason?: string },
  ): Promise<boolean>;
  /** Claims a version for processing (or takes over an expired claim). */
  claim(id: string, owner: string, leaseMs: number): Promise<boolean>;
  renew(id: string, owner: string, leaseMs: number): Promise<void>;
  /** Versions left converting or validating whose claim expired (a crashed process). */
  abandoned(): Promise<VersionRow[]>;
  deleteDataset(teamId: string, name: string): Promise<{ datasetId: string } | null>;
  createGeneration(row: GenerationRow): Promise<void>;
  getGeneration(teamId: string, id: string): Promise<GenerationRow | null>;
  updateGeneration(
    id: string,
    patch: Partial<Pick<GenerationRow, 'status' | 'generated' | 'versionNumber' | 'error'>>,
  ): Promise<void>;
  unfinishedGenerations(): Promise<GenerationRow[]>;
}

/** A verdict as stored: its converted rows or why it has none. */
export interface StoredFeedback extends FeedbackExamples {
  inferenceId: string;
  /** deleted: the inference was deleted from history; kept with no rows until a version leaves it out. */
  verdict: 'correct' | 'incorrect' | 'deleted';
  submittedAt: Date;
}

/** Feedback examples per (team, project); a later verdict on an inference replaces its rows. */
export interface FeedbackStore {
  /**
   * Stores each verdict (one per inference; one submitted no later than the stored one is ignored) and returns,
   * per project of the batch, how many of its verdicts changed since its last version.
   */
  saveFeedback(
    verdicts: (FeedbackVerdict & FeedbackExamples)[],
  ): Promise<{ teamId: string; projectId: string; pending: number }[]>;
  /**
   * Empties the verdicts of deleted inferences (no rows; pending, so the next version leaves them out) and returns,
   * per project that had one, how many of its verdicts changed since its last version.
   */
  removeFeedback(deletions: FeedbackDeletion[]): Promise<{ teamId: string; projectId: string; pending: number }[]>;
  /** All of a project's verdicts, in inference id order (UUIDv7: the order the inferences were made). */
  snapshot(teamId: string, projectId: string): Promise<StoredFeedback[]>;
  /** Verdicts of the project changed since its last version. */
  pendingCount(teamId: string, projectId: string): Promise<number>;
  /** Clears `pending` on these verdicts unless they were replaced since they were read (they are in a version now). */
  markVersioned(teamId: string, projectId: string, examples: StoredFeedback[]): Promise<void>;
}

/** A file uploaded through the Files API; its bytes are in the datasets bucket under `blobKey`. */
export interface FileRow {
  id: string;
  teamId: string;
  filename: string;
  purpose: FilePurpose;
  bytes: number;
  blobKey: string;
  createdAt: Date;
  /** Null: kept until deleted. */
  expiresAt: Date | null;
}

/** One page of a team's files, by created_at then id. */
export interface FilePage {
  purpose?: FilePurpose;
  limit: number;
  /** Only files strictly beyond this one in the order asked. */
  afterId?: string;
  ascending: boolean;
}

/** Files API records. Reads take `now` and leave out files expired by then (the sweep deletes those later). */
export interface FileStore {
  /**
   * Stores the record when the team's unexpired files (at the row's `createdAt`) and it fit in `teamMaxBytes`
   * (0: no limit), checked and written under a per-team lock so concurrent uploads cannot overshoot; otherwise
   * stores nothing and says how many bytes the team's files hold.
   */
  create(row: FileRow, teamMaxBytes: number): Promise<{ created: true } | { created: false; usedBytes: number }>;
  /** The team's file unexpired at `now`; null for any other. */
  get(teamId: string, id: string, now: Date): Promise<FileRow | null>;
  /** Null when `afterId` names none of the team's files (expired or not). */
  list(teamId: string, page: FilePage, now: Date): Promise<{ files: FileRow[]; hasMore: boolean } | null>;
  /** Deletes the team's file unexpired at `now` and returns it; null when there was none. */
  delete(teamId: string, id: string, now: Date): Promise<FileRow | null>;
  /** Up to `limit` files expired at `now`, soonest expired first. */
  expired(now: Date, limit: number): Promise<FileRow[]>;
  /** Deletes those of `ids` expired at `now`; returns how many. */
  deleteExpired(ids: string[], now: Date): Promise<number>;
}

/** What every use case may use: ports and limits. */
export interface DatasetDeps {
  store: DatasetStore;
  blobs: BlobStore;
  /** Files API records (the bytes go to `blobs`); without it, FileService is not served. */
  files?: FileStore;
  logger: Logger;
  /** Largest accepted upload in bytes (the upload URL refuses more). */
  maxUploadBytes: number;
  /** Largest Files API file in bytes (PayloadTooLarge above it); DEFAULT_FILE_MAX_BYTES when unset. */
  maxFileBytes?: number;
  /** Bytes a team's unexpired Files API files may hold together (FailedPrecondition FILE_STORAGE_FULL above); 0 or unset: no limit. */
  maxTeamFileBytes?: number;
  /** CSV and CoNLL are converted in memory; larger files of those formats fail (JSONL is streamed). */
  maxConvertBytes?: number;
  /** Feedback examples; without it, feedback is not collected. */
  feedback?: FeedbackStore;
  /** Changed verdicts a project needs before a delivered batch cuts its feedback dataset's next version. */
  feedbackVersionMinRows?: number;
  /** Names this process in processing claims; defaults to one derived from the pid. */
  instance?: string;
}

/** What the Files API use cases need: the ports, with the file records. */
export type FileDeps = DatasetDeps & { files: FileStore };
