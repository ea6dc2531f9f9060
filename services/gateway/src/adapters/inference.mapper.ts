import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { microToCredits } from '@whetstone/catalog';
import { TrainingType } from '@whetstone/proto/training/v1';
import {
  ChatRole,
  DeploymentStatus,
  FinishReason,
  InferenceTask,
  ModelProvider,
  ModelTask,
  type BaseModel,
  type Deployment,
  type Project,
  type ProjectRouter,
  type RouterCandidate,
  type Usage,
} from '@whetstone/proto/inference/v1';
import type {
  BaseModelView,
  DeploymentView,
  GenerateInput,
  ProjectRouterView,
  RankedModelView,
  InferenceTask as Task,
  InferResult,
  ProjectView,
} from '../application/ports';

/** The inference contract's messages and enums ⇄ the public JSON's shapes and words. */

const iso = (ts: Timestamp | undefined): string | null => (ts ? timestampDate(ts).toISOString() : null);

const MODEL_TASK: Record<ModelTask, string> = {
  [ModelTask.UNSPECIFIED]: '',
  [ModelTask.EXTRACTION]: 'extraction',
  [ModelTask.DECODER]: 'decoder',
  [ModelTask.EMBEDDING]: 'embedding',
};
const PROVIDER: Record<ModelProvider, string> = {
  [ModelProvider.UNSPECIFIED]: '',
  [ModelProvider.BUILTIN]: 'builtin',
  [ModelProvider.OPENAI]: 'openai',
  [ModelProvider.ANTHROPIC]: 'anthropic',
};
const TRAINING_TYPE: Record<TrainingType, string> = {
  [TrainingType.UNSPECIFIED]: '',
  [TrainingType.LORA]: 'lora',
  [TrainingType.FULL]: 'full',
};
const DEPLOYMENT_STATUS: Record<DeploymentStatus, string> = {
  [DeploymentStatus.UNSPECIFIED]: '',
  [DeploymentStatus.DEPLOYING]: 'deploying',
  [DeploymentStatus.ACTIVE]: 'active',
  [DeploymentStatus.FAILED]: 'failed',
  [DeploymentStatus.REPLACED]: 'replaced',
  [DeploymentStatus.RELEASED]: 'released',
};
const INFERENCE_TASK: Record<Task, InferenceTask> = {
  extract: InferenceTask.EXTRACT,
  ner: InferenceTask.NER,
  classification: InferenceTask.CLASSIFICATION,
  json: InferenceTask.JSON,
  relations: InferenceTask.RELATIONS,
  schema: InferenceTask.SCHEMA,
  systemone: InferenceTask.SYSTEMONE,
  project: InferenceTask.PROJECT,
};
const ROLE: Record<GenerateInput['messages'][number]['role'], ChatRole> = {
  system: ChatRole.SYSTEM,
  user: ChatRole.USER,
  assistant: ChatRole.ASSISTANT,
};

export const inferenceTaskToPb = (t: Task): InferenceTask => INFERENCE_TASK[t];
export const chatRoleToPb = (r: keyof typeof ROLE): ChatRole => ROLE[r];
/** A stream that ended without saying why ran out of tokens. */
export const finishReasonOf = (r: FinishReason): 'stop' | 'length' => (r === FinishReason.STOP ? 'stop' : 'length');

export function usageView(u: Usage | undefined): InferResult['usage'] {
  const input_tokens = Number(u?.inputTokens ?? 0n);
  const output_tokens = Number(u?.outputTokens ?? 0n);
  return {
    input_tokens,
    output_tokens,
    total_tokens: input_tokens + output_tokens,
    cost_credits: microToCredits(u?.costMicroCredits ?? 0n),
  };
}

export function baseModelView(m: BaseModel): BaseModelView {
  return {
    id: m.id,
    object: 'base_model' as const,
    name: m.name,
    task: MODEL_TASK[m.task],
    provider: PROVIDER[m.provider],
    description: m.description,
    supports_inference: m.supportsInference,
    supports_on_demand_inference: m.supportsOnDemandInference,
    supports_training: m.supportsTraining,
    training_types: m.trainingTypes.map((t) => TRAINING_TYPE[t]).filter(Boolean),
    default_hyperparameters: m.supportsTraining
      ? { nr_epochs: m.nrEpochs?.default ?? 0, learning_rate: m.learningRate?.default ?? 0 }
      : null,
    hyperparameter_bounds: m.supportsTraining
      ? {
          nr_epochs: { min: m.nrEpochs?.min ?? 0, max: m.nrEpochs?.max ?? 0 },
          learning_rate: { min: m.learningRate?.min ?? 0, max: m.learningRate?.max ?? 0 },
        }
      : null,
    pricing: {
      per_request_credits: microToCredits(m.price?.perRequestMicroCredits ?? 0n),
      per_1k_input_tokens_credits: microToCredits(m.price?.per1kInputTokensMicroCredits ?? 0n),
      per_1k_output_tokens_credits: microToCredits(m.price?.per1kOutputTokensMicroCredits ?? 0n),
      per_1k_cache_read_tokens_credits: microToCredits(m.price?.per1kCacheReadTokensMicroCredits ?? 0n),
      per_1k_cache_write_tokens_credits: microToCredits(m.price?.per1kCacheWriteTokensMicroCredits ?? 0n),
    },
    min_cacheable_tokens: m.minCacheableTokens,
  };
}

export const projectView = (p: Project | undefined): ProjectView => ({
  id: p?.id ?? '',
  name: p?.name ?? '',
  created_at: iso(p?.createdAt),
  active_training_job_id: p?.activeTrainingJobId || null,
});

const rankedView = (c: RouterCandidate): RankedModelView => ({
  model: c.modelId,
  input_per_million: c.inputPerMillion,
  output_per_million: c.outputPerMillion,
});

export const projectRouterView = (r: ProjectRouter | undefined): ProjectRouterView => ({
  project_id: r?.projectId ?? '',
  candidates: r?.candidates ?? [],
  reference_model: r?.referenceModel ?? '',
  rules: { max_prompt_tokens: r?.maxPromptTokens || null },
  ranking: (r?.ranking ?? []).map(rankedView),
  reference: r?.reference ? rankedView(r.reference) : null,
  updated_at: iso(r?.updatedAt),
});

export const deploymentView = (d: Deployment | undefined): DeploymentView => ({
  deployment_id: d?.deploymentId ?? '',
  project_id: d?.projectId ?? '',
  training_job_id: d?.trainingJobId ?? '',
  status: DEPLOYMENT_STATUS[d?.status ?? DeploymentStatus.UNSPECIFIED],
  reason: d?.reason || null,
  created_at: iso(d?.createdAt),
  activated_at: iso(d?.activatedAt),
  ended_at: iso(d?.endedAt),
});
