import {
  ChatRole as PbChatRole,
  DeploymentStatus as PbDeploymentStatus,
  FinishReason as PbFinishReason,
  InferenceSurface as PbInferenceSurface,
  InferenceTask as PbInferenceTask,
  ModelProvider as PbModelProvider,
  ModelTask as PbModelTask,
} from '@whetstone/proto/inference/v1';
import { JobStatus, TrainingType as PbTrainingType } from '@whetstone/proto/training/v1';
import type { CatalogEntry } from '../domain/catalog';
import type { DeploymentStatus } from '../domain/deployment';
import type { ChatFinishReason, ChatMessageRole, ChatSurface } from '../domain/chat';
import type { ChatRole, FinishReason, InferenceTask } from '../domain/model';

/** The router's words ⇄ the inference contract's enums, in one place for the RPC mappers and the event encoders. */

const INFERENCE_TASK: Record<InferenceTask, PbInferenceTask> = {
  extract: PbInferenceTask.EXTRACT,
  ner: PbInferenceTask.NER,
  classification: PbInferenceTask.CLASSIFICATION,
  json: PbInferenceTask.JSON,
  relations: PbInferenceTask.RELATIONS,
  schema: PbInferenceTask.SCHEMA,
  systemone: PbInferenceTask.SYSTEMONE,
  project: PbInferenceTask.PROJECT,
  generate: PbInferenceTask.GENERATE,
  embed: PbInferenceTask.EMBED,
};
const INFERENCE_TASK_OF = new Map(Object.entries(INFERENCE_TASK).map(([k, v]) => [v, k as InferenceTask]));

export const inferenceTaskToPb = (t: InferenceTask): PbInferenceTask => INFERENCE_TASK[t];
/** UNSPECIFIED is recorded as plain extraction. */
export const inferenceTaskOf = (t: PbInferenceTask): InferenceTask => INFERENCE_TASK_OF.get(t) ?? 'extract';

const DEPLOYMENT_STATUS: Record<DeploymentStatus, PbDeploymentStatus> = {
  deploying: PbDeploymentStatus.DEPLOYING,
  active: PbDeploymentStatus.ACTIVE,
  failed: PbDeploymentStatus.FAILED,
  replaced: PbDeploymentStatus.REPLACED,
  released: PbDeploymentStatus.RELEASED,
};
export const deploymentStatusToPb = (s: DeploymentStatus): PbDeploymentStatus => DEPLOYMENT_STATUS[s];

export const modelTaskToPb = (t: CatalogEntry['task']): PbModelTask =>
  t === 'decoder' ? PbModelTask.DECODER : t === 'embedding' ? PbModelTask.EMBEDDING : PbModelTask.EXTRACTION;

const PROVIDER: Record<CatalogEntry['provider'], PbModelProvider> = {
  builtin: PbModelProvider.BUILTIN,
  openai: PbModelProvider.OPENAI,
  anthropic: PbModelProvider.ANTHROPIC,
};
export const providerToPb = (p: CatalogEntry['provider']): PbModelProvider => PROVIDER[p];

const ROLE: Record<ChatRole, PbChatRole> = {
  system: PbChatRole.SYSTEM,
  user: PbChatRole.USER,
  assistant: PbChatRole.ASSISTANT,
};
export const chatRoleToPb = (r: ChatRole): PbChatRole => ROLE[r];
/** A Chat turn's role, tool turns included; UNSPECIFIED is read as a user turn. */
export const chatMessageRoleOf = (r: PbChatRole): ChatMessageRole => (r === PbChatRole.TOOL ? 'tool' : chatRoleOf(r));

const SURFACE: Record<ChatSurface, PbInferenceSurface> = {
  chat_completions: PbInferenceSurface.CHAT_COMPLETIONS,
  messages: PbInferenceSurface.MESSAGES,
  completions: PbInferenceSurface.COMPLETIONS,
  responses: PbInferenceSurface.RESPONSES,
};
const SURFACE_OF = new Map(Object.entries(SURFACE).map(([k, v]) => [v, k as ChatSurface]));
export const chatSurfaceToPb = (s: ChatSurface): PbInferenceSurface => SURFACE[s];
/** The surface of a Chat call; anything else (unspecified, native) is recorded as chat completions. */
export const chatSurfaceOf = (s: PbInferenceSurface): ChatSurface => SURFACE_OF.get(s) ?? 'chat_completions';
/** UNSPECIFIED is read as a user turn. */
export const chatRoleOf = (r: PbChatRole): ChatRole =>
  r === PbChatRole.SYSTEM ? 'system' : r === PbChatRole.ASSISTANT ? 'assistant' : 'user';

const FINISH_REASON: Record<ChatFinishReason, PbFinishReason> = {
  stop: PbFinishReason.STOP,
  length: PbFinishReason.LENGTH,
  tool_calls: PbFinishReason.TOOL_CALLS,
  content_filter: PbFinishReason.CONTENT_FILTER,
};
export const finishReasonToPb = (r: FinishReason | ChatFinishReason): PbFinishReason => FINISH_REASON[r];
/** A stream that ended without saying why ran out of tokens. */
export const finishReasonOf = (r: PbFinishReason): FinishReason => (r === PbFinishReason.STOP ? 'stop' : 'length');

const TRAINING_TYPE: Record<CatalogEntry['trainingTypes'][number], PbTrainingType> = {
  lora: PbTrainingType.LORA,
  full: PbTrainingType.FULL,
};
export const trainingTypeToPb = (t: CatalogEntry['trainingTypes'][number]): PbTrainingType => TRAINING_TYPE[t];

/** Statuses whose bundle may serve and be deployed. The orchestrator owns the state machine; this is all the router reads of it. */
const SERVABLE = new Set([JobStatus.COMPLETE, JobStatus.DEPLOYED]);

/** The label users know a status by, for messages ("Training job … is running"). */
const LABEL: Record<JobStatus, string> = {
  [JobStatus.UNSPECIFIED]: 'unknown',
  [JobStatus.REQUESTED]: 'requested',
  [JobStatus.RUNNING]: 'running',
  [JobStatus.COMPLETE]: 'complete',
  [JobStatus.FAILED]: 'failed',
  [JobStatus.DEPLOYED]: 'deployed',
  [JobStatus.CANCELLED]: 'cancelled',
};

/** What the router reads of a job's status: whether its bundle may serve, and the word users know it by. */
export function jobStatusView(status: JobStatus, artifactKey: string): { servable: boolean; statusLabel: string } {
  return { servable: SERVABLE.has(status) && !!artifactKey, statusLabel: LABEL[status] ?? 'unknown' };
}
