/** An evaluation: a trainer scores a complete job's bundle on a dataset's held-out split. */
export type EvaluationStatus = 'running' | 'complete' | 'failed';

export interface Evaluation {
  id: string;
  teamId: string;
  jobId: string;
  datasetName: string;
  /** running while queued or leased; leaseToken tells which. */
  status: EvaluationStatus;
  metrics: Record<string, unknown> | null;
  /** Safe, user-facing reason; set when failed. */
  error: string | null;
  baseModel: string;
  artifactKey: string;
  datasetBucket: string;
  heldoutKey: string;
  attempts: number;
  leaseToken: string | null;
  createdAt: Date;
}
