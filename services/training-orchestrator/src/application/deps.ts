import type {
  AdaptationRepository,
  AdaptiveSettingsRepository,
  BlobStore,
  FeedbackVersioner,
  CheckpointRepository,
  Clock,
  DatasetResolver,
  EvaluationRepository,
  JobLogRepository,
  JobRepository,
  Logger,
  ModelHub,
  ProjectsPort,
  SpendCheck,
  WorkSignal,
} from './ports';

/** What every use case may use: ports only. */
export interface UseCaseDeps {
  jobs: JobRepository;
  logs: JobLogRepository;
  checkpoints: CheckpointRepository;
  evaluations: EvaluationRepository;
  datasets: DatasetResolver;
  billing: SpendCheck;
  blobs: BlobStore;
  clock: Clock;
  work: WorkSignal;
  logger: Logger;
  /** Lease length handed to trainers, in milliseconds. */
  leaseMs: number;
  /** Absent when the operator configured no hub. */
  hub?: ModelHub | undefined;
}

/** Adaptive inference needs these besides: its settings and audit trail, and the router's projects. */
export interface AdaptiveDeps extends UseCaseDeps {
  adaptiveSettings: AdaptiveSettingsRepository;
  adaptations: AdaptationRepository;
  projects: ProjectsPort;
  feedbackVersions: FeedbackVersioner;
}

/** A lease that starts now. */
export const leaseUntil = (deps: Pick<UseCaseDeps, 'clock' | 'leaseMs'>): Date =>
  new Date(deps.clock.now().getTime() + deps.leaseMs);
