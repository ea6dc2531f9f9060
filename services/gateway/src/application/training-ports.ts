/** What the gateway needs from the training-orchestrator, in the public API's plain shapes. */
import type { Principal } from './ports';

/** An OpenAI-compatible fine-tuning job's request, kept by the training-orchestrator (file ids without prefix). */
export interface FineTuningSourceView {
  training_file: string;
  /** Empty when none was given. */
  validation_file: string;
  suffix: string;
  metadata: Record<string, string>;
}

export interface JobView {
  id: string;
  status: string;
  base_model: string;
  /** The built-in model underneath base_model (which a job or checkpoint id continues from). */
  root_base_model: string;
  /** `version_number` is a string, as the dataset reads write it. */
  datasets: { name: string; version_number: string; size: number }[];
  model_name: string;
  training_type: string;
  nr_epochs: number;
  learning_rate: number;
  project_id: string | null;
  out_of_scope_label: string | null;
  /** The trainer's seed, as given or picked at creation. */
  seed: number;
  /** What a job created through the OpenAI-compatible fine-tuning API was created from; null for the others. */
  fine_tuning: FineTuningSourceView | null;
  metrics?: Record<string, unknown>;
  progress: Record<string, unknown> | null;
  failure_reason: string | null;
  attempts: number;
  created_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  cost_credits: number;
}

export interface LogView {
  id: string;
  job_id: string;
  timestamp: string | null;
  level: string;
  message: string;
  source: string;
  /** A progress line's figures; absent on other lines. */
  metrics?: StepMetricsView;
}

/** Where training stood at a progress line; the token figures are a decoder's, the valid ones an epoch end's. */
export interface StepMetricsView {
  step: number;
  total_steps: number;
  epoch: number;
  train_loss: number;
  train_mean_token_accuracy?: number;
  valid_loss?: number;
  valid_mean_token_accuracy?: number;
}

export interface CheckpointView {
  checkpoint_id: string;
  checkpoint_uuid: string;
  checkpoint_type: string;
  time: string | null;
  tinker_path: string;
  size_bytes: number | null;
  public: boolean;
  user_metadata: Record<string, string> | null;
  expires_at: string | null;
  step: number;
}

export interface EvaluationView {
  id: string;
  training_job_id: string;
  dataset_name: string;
  status: string;
  f1: number | null;
  precision: number | null;
  recall: number | null;
  per_label: Record<string, unknown> | null;
  examples: number | null;
  /** Decoder evaluations only. */
  loss?: number | null;
  perplexity?: number | null;
  generation_examples?: number | null;
  error: string | null;
  created_at: string | null;
}

/** What the gateway needs from the training-orchestrator. */
export interface TrainingPort {
  ready(): Promise<boolean>;
  create(
    principal: Principal,
    input: {
      baseModel: string;
      datasets: string[];
      modelName: string;
      trainingType: string;
      nrEpochs: number;
      learningRate: number;
      projectId: string;
      /** Empty for none. */
      outOfScopeLabel: string;
      /** Multiplies the base model's default learning rate when learningRate is 0; absent means 1. */
      learningRateMultiplier?: number;
      /** Absent or 0 picks one at random. */
      seed?: number;
      /** Set by the OpenAI-compatible fine-tuning API. */
      fineTuning?: FineTuningSourceView;
    },
  ): Promise<JobView>;
  list(
    principal: Principal,
    filter: {
      status: string;
      projectId: string;
      limit: number;
      offset: number;
      /** Only jobs created through the OpenAI-compatible fine-tuning API. */
      fineTuningOnly?: boolean;
      /** Only jobs listed after this one (newest first); 422 naming after_id when it is no job of the team. */
      afterId?: string;
    },
  ): Promise<{ jobs: JobView[]; total: number }>;
  get(principal: Principal, id: string): Promise<JobView>;
  stop(principal: Principal, id: string): Promise<JobView>;
  remove(principal: Principal, id: string): Promise<void>;
  logs(principal: Principal, id: string): Promise<LogView[]>;
  streamLogs(principal: Principal, id: string, signal: AbortSignal): AsyncIterable<{ logs: LogView[]; status: string }>;
  checkpoints(principal: Principal, id: string): Promise<CheckpointView[]>;
  download(
    principal: Principal,
    id: string,
    checkpointId: string,
  ): Promise<{ download_url: string; expires_in_seconds: number; file_name: string; size_bytes: number }>;
  trainedModels(principal: Principal): Promise<JobView[]>;
  createEvaluation(principal: Principal, jobId: string, datasetName: string): Promise<EvaluationView>;
  getEvaluation(principal: Principal, id: string): Promise<EvaluationView>;
  pushToHub(
    principal: Principal,
    jobId: string,
    input: { repoId: string; hubToken: string; private: boolean },
  ): Promise<{ repo_id: string; url: string; commit: string | null; files: string[] }>;
}
