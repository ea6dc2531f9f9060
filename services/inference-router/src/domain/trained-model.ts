/**
 * The router's read model of a training job: what it needs to serve, deploy and
 * list it, kept from the orchestrator's job events. The job's state machine
 * stays in the orchestrator; here a job is only servable or not, with a label
 * for messages.
 */
export interface TrainedModel {
  jobId: string;
  teamId: string;
  /** Whether the job has a complete bundle that may serve and be deployed. */
  servable: boolean;
  /** The job's status as users know it ("running", "failed" …), for messages. */
  statusLabel: string;
  /** Built-in model the job was trained from (through any continued jobs). */
  baseModel: string;
  modelName: string;
  /** The servable bundle; null until the job completes. */
  bundle: { bucket: string; key: string } | null;
  /** When the job first became servable. */
  completedAt: Date | null;
  /** When the orchestrator committed the change this row reflects; older events are ignored. */
  updatedAt: Date;
}

/** Whether a job event observed at `incoming` should replace what is held (events may arrive out of order). */
export function isNewer(held: Pick<TrainedModel, 'updatedAt'> | null, incoming: Date): boolean {
  return !held || held.updatedAt.getTime() <= incoming.getTime();
}
