import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Reasons, errors } from '@whetstone/errors';
import type { SamplingOptions } from '@whetstone/proto/common/v1';
import type { ChatTurn as PbChatTurn, EmbedTextsRequest, InferRequest } from '@whetstone/proto/inference/v1';
import type { EmbedInput, EmbedOutput } from '../../application/embed';
import type { ExtractInput, ExtractOutput } from '../../application/extract';
import type { GeneratePiece } from '../../application/generate';
import type { CallableModel } from '../../application/list-models';
import type { CatalogEntry } from '../../domain/catalog';
import type { DeploymentRow, ProjectRow } from '../../domain/deployment';
import type { Caller, ChatTurn, GenerateOptions, Usage } from '../../domain/model';
import {
  chatRoleOf,
  deploymentStatusToPb,
  finishReasonToPb,
  inferenceTaskOf,
  modelTaskToPb,
  providerToPb,
  trainingTypeToPb,
} from '../../adapters/proto-kinds';

/** Proto ⇄ the router's plain shapes; no rules live here. */

const ts = (d: Date | null) => (d ? timestampFromDate(d) : undefined);

export function baseModelToPb(e: CatalogEntry) {
  return {
    id: e.id,
    name: e.name,
    task: modelTaskToPb(e.task),
    supportsInference: e.supportsInference,
    supportsOnDemandInference: e.supportsOnDemandInference,
    supportsTraining: e.supportsTraining,
    trainingTypes: e.trainingTypes.map(trainingTypeToPb),
    nrEpochs: e.nrEpochs,
    learningRate: e.learningRate,
    price: {
      perRequestMicroCredits: e.price.perRequest,
      per1kInputTokensMicroCredits: e.price.per1kInputTokens,
      per1kOutputTokensMicroCredits: e.price.per1kOutputTokens,
      per1kCacheReadTokensMicroCredits: e.price.per1kCacheReadTokens,
      per1kCacheWriteTokensMicroCredits: e.price.per1kCacheWriteTokens,
    },
    minCacheableTokens: e.upstream?.minCacheableTokens ?? 0,
    provider: providerToPb(e.provider),
    description: e.description,
  };
}

export const callableModelToPb = (m: CallableModel) => ({ id: m.id, ownedBy: m.ownedBy, createdAt: ts(m.createdAt) });

export const projectToPb = (p: ProjectRow & { activeTrainingJobId?: string | null }) => ({
  id: p.id,
  name: p.name,
  createdAt: ts(p.createdAt),
  activeTrainingJobId: p.activeTrainingJobId ?? '',
});

export function deploymentToPb(d: DeploymentRow) {
  return {
    deploymentId: d.id,
    projectId: d.projectId,
    trainingJobId: d.trainingJobId,
    status: deploymentStatusToPb(d.status),
    reason: d.reason ?? '',
    createdAt: ts(d.createdAt),
    activatedAt: ts(d.activatedAt),
    endedAt: ts(d.endedAt),
  };
}

const usageToPb = (u: Usage) => ({
  inputTokens: BigInt(u.inputTokens),
  outputTokens: BigInt(u.outputTokens),
  costMicroCredits: u.costMicroCredits,
});

const utf8 = new TextDecoder();

/** The schema bytes as an object for the record; bytes that are not a JSON object are the caller's error. */
/** A JSON object field (the schema, the response format), or InvalidArgument naming it; undefined when empty. */
export function jsonObjectOf(bytes: Uint8Array, field: string): Record<string, unknown> | undefined {
  if (!bytes.length) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    value = undefined;
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  throw errors.invalid(Reasons.VALIDATION_FAILED, `Invalid ${field}: it must be a JSON object.`, [
    { field, message: 'must be a JSON object' },
  ]);
}

export function extractInputOf(caller: Caller, req: InferRequest): ExtractInput {
  return {
    caller,
    modelId: req.modelId,
    projectId: req.projectId,
    texts: req.texts,
    schemaJson: req.schemaJson,
    schema: jsonObjectOf(req.schemaJson, 'schema'),
    threshold: req.threshold,
    includeConfidence: req.includeConfidence,
    includeSpans: req.includeSpans,
    task: inferenceTaskOf(req.task),
  };
}

export const extractOutputToPb = (out: ExtractOutput) => ({
  inferenceId: out.inferenceId,
  model: out.model,
  resultsJson: out.resultsJson,
  usage: usageToPb(out.usage),
  latencyMs: out.latencyMs,
});

export const chatTurnsOf = (turns: PbChatTurn[]): ChatTurn[] =>
  turns.map((m) => ({ role: chatRoleOf(m.role), content: m.content }));

export function generateOptionsOf(s: SamplingOptions | undefined, signal: AbortSignal): GenerateOptions {
  return {
    temperature: s?.temperature ?? 0,
    topP: s?.topP ?? 0,
    maxTokens: s?.maxTokens ?? 0,
    stop: s?.stop ?? [],
    seed: Number(s?.seed ?? 0n),
    ...(s?.frequencyPenalty ? { frequencyPenalty: s.frequencyPenalty } : {}),
    ...(s?.presencePenalty ? { presencePenalty: s.presencePenalty } : {}),
    ...(s?.topK ? { topK: s.topK } : {}),
    ...(s && Object.keys(s.logitBias).length ? { logitBias: { ...s.logitBias } } : {}),
    ...(s?.promptLogprobs ? { promptLogprobs: true } : {}),
    ...(s?.promptOnly ? { promptOnly: true } : {}),
    ...(s?.logprobs === undefined ? {} : { logprobs: s.logprobs }),
    signal,
  };
}

export function generatePieceToPb(piece: GeneratePiece) {
  if ('text' in piece) return { text: piece.text };
  const d = piece.done;
  return {
    text: '',
    finishReason: finishReasonToPb(d.finishReason),
    inferenceId: d.inferenceId,
    model: d.model,
    usage: usageToPb(d.usage),
    latencyMs: d.latencyMs,
  };
}

export const embedInputOf = (caller: Caller, req: EmbedTextsRequest): EmbedInput => ({
  caller,
  modelId: req.modelId,
  texts: req.texts,
  dimensions: req.dimensions,
});

export const embedOutputToPb = (out: EmbedOutput) => ({
  model: out.model,
  embeddings: out.vectors.map((values) => ({ values })),
  dimensions: out.dimensions,
  inputTokens: BigInt(out.usage.inputTokens),
  costMicroCredits: out.usage.costMicroCredits,
});
