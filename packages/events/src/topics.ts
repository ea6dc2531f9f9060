/**
 * Every topic, declared once (docs/architecture.md has the table of who
 * publishes and who consumes). One topic per aggregate; the event key is the
 * aggregate id; payloads are protobuf messages named by the envelope's type.
 */
export const Topics = {
  /** KeyRevoked, AccountBlocked: key-billing → gateway (auth-cache invalidation). */
  keys: 'keys.v1',
  /** UsageRecorded (router) and TrainingUsageRecorded (orchestrator) → key-billing, debited once per usage id. */
  billingUsage: 'billing.usage.v1',
  /** DatasetVersionReady, DatasetDeleted: dataset → orchestrator. */
  datasets: 'datasets.v1',
  /** JobStatusChanged, JobDeleted: orchestrator → router (read model, releases). */
  trainingJobs: 'training.jobs.v1',
  /** DeploymentActivated, DeploymentFailed: router → orchestrator (`deployed`). */
  deployments: 'deployments.v1',
  /** InferenceCompleted: router → inference history. */
  inferences: 'inferences.v1',
  /** FeedbackSubmitted, InferenceDeleted: inference history → dataset (feedback datasets for adaptive retraining). */
  feedback: 'feedback.v1',
} as const;

export type Topic = (typeof Topics)[keyof typeof Topics];
