import { create, fromJson, toJson, type JsonObject, type JsonValue } from '@bufbuild/protobuf';
import { ValueSchema, timestampDate, timestampFromDate, type Value } from '@bufbuild/protobuf/wkt';
import {
  FeedbackSchema,
  JudgeKind as PbJudgeKind,
  JudgeSettingsSchema,
  JudgeStatus as PbJudgeStatus,
  type JudgeSettings as PbJudgeSettings,
  InferenceRecordSchema,
  Verdict as PbVerdict,
  type Feedback as PbFeedback,
  type InferenceRecord as PbInferenceRecord,
  type ListInferencesRequest,
} from '@whetstone/proto/history/v1';
import { InferenceStatus, InferenceSurface, recordedMessageOf } from '@whetstone/proto/inference/v1';
import { errors, Reasons } from '@whetstone/errors';
import type { JudgeKind, JudgeSettings, JudgeState } from '../../domain/judge';
import type { Feedback, InferenceRecord, ListFilter, Surface, Verdict } from '../../domain/record';
import { SURFACE } from '../events/inference-completed.mapper';

const SURFACE_PB = new Map(Object.entries(SURFACE).map(([pb, word]) => [word, Number(pb) as InferenceSurface]));
const surfaceToPb = (s: Surface) => SURFACE_PB.get(s) ?? InferenceSurface.NATIVE;

export function feedbackToPb(f: Feedback): PbFeedback {
  return create(FeedbackSchema, {
    inferenceId: f.inferenceId,
    verdict: f.verdict === 'correct' ? PbVerdict.CORRECT : PbVerdict.INCORRECT,
    ...(f.correctedOutput === null ? {} : { correctedOutput: fromJson(ValueSchema, f.correctedOutput as JsonValue) }),
    notes: f.notes,
    submittedAt: timestampFromDate(f.submittedAt),
  });
}

export function recordToPb(r: InferenceRecord): PbInferenceRecord {
  return create(InferenceRecordSchema, {
    inferenceId: r.inferenceId,
    teamId: r.teamId,
    keyId: r.keyId,
    userId: r.userId,
    projectId: r.projectId ?? '',
    modelId: r.modelId,
    trainingJobId: r.trainingJobId ?? '',
    baseModel: r.baseModel,
    task: r.task,
    surface: surfaceToPb(r.surface),
    inputs: r.inputs,
    messages: r.messages.map(recordedMessageOf),
    ...(r.schema ? { schema: r.schema as JsonObject } : {}),
    outputs: r.outputs as JsonObject[],
    usage: {
      ...r.usage,
      inputTokens: BigInt(r.usage.inputTokens),
      outputTokens: BigInt(r.usage.outputTokens),
      cacheReadTokens: BigInt(r.usage.cacheReadTokens),
      cacheWriteTokens: BigInt(r.usage.cacheWriteTokens),
      reasoningTokens: BigInt(r.usage.reasoningTokens),
    },
    latencyMs: r.latencyMs,
    status: r.status === 'failed' ? InferenceStatus.FAILED : InferenceStatus.SUCCEEDED,
    errorCode: r.errorCode ?? '',
    createdAt: timestampFromDate(r.createdAt),
    completedAt: timestampFromDate(r.completedAt),
    ...(r.llmajScore === null ? {} : { llmajScore: r.llmajScore }),
    ...(r.feedback ? { feedback: feedbackToPb(r.feedback) } : {}),
    ...judgeStateToPb(r.judge),
    metadata: r.metadata,
    conversationId: r.conversationId ?? '',
  });
}

export function filterOf(req: ListInferencesRequest): ListFilter {
  return {
    limit: req.limit,
    offset: req.offset,
    modelId: req.modelId || undefined,
    task: req.task || undefined,
    projectId: req.projectId || undefined,
    trainingJobId: req.trainingJobId || undefined,
    latencyMin: req.latencyMin,
    latencyMax: req.latencyMax,
    llmajScoreMin: req.llmajScoreMin,
    llmajScoreMax: req.llmajScoreMax,
    since: req.since ? timestampDate(req.since) : undefined,
    until: req.until ? timestampDate(req.until) : undefined,
    surface: req.surface === InferenceSurface.UNSPECIFIED ? undefined : SURFACE[req.surface],
    metadata: Object.keys(req.metadata).length ? { ...req.metadata } : undefined,
    oldestFirst: req.oldestFirst,
    afterId: req.afterId || undefined,
    countToPage: req.countToPage,
  };
}

export function verdictOf(v: PbVerdict): Verdict {
  if (v === PbVerdict.CORRECT) return 'correct';
  if (v === PbVerdict.INCORRECT) return 'incorrect';
  throw errors.invalid(Reasons.VALIDATION_FAILED, 'Invalid feedback', [
    { field: 'verdict', message: "must be 'correct' or 'incorrect'" },
  ]);
}

/** An unset Value and a JSON null both mean "no correction". */
export function correctionOf(v: Value | undefined): unknown {
  if (!v || v.kind.case === undefined || v.kind.case === 'nullValue') return null;
  return toJson(ValueSchema, v);
}

const JUDGE_KIND_PB: Record<JudgeKind, PbJudgeKind> = { builtin: PbJudgeKind.BUILTIN, llm: PbJudgeKind.LLM };
const JUDGE_STATUS_PB = {
  pending: PbJudgeStatus.PENDING,
  scored: PbJudgeStatus.SCORED,
  failed: PbJudgeStatus.FAILED,
} as const;

/** The judge's fields of a record; nothing when it was not sampled. */
function judgeStateToPb(j: JudgeState | undefined) {
  if (!j?.status) return {};
  return {
    judgeStatus: JUDGE_STATUS_PB[j.status],
    judgeRationale: j.rationale ?? '',
    judgeKind: j.kind ? JUDGE_KIND_PB[j.kind] : PbJudgeKind.UNSPECIFIED,
    judgeModel: j.model ?? '',
    judgeError: j.error && j.status === 'failed' ? j.error : '',
    ...(j.judgedAt ? { judgedAt: timestampFromDate(j.judgedAt) } : {}),
  };
}

/** The proto's judge kind as the word settings validation checks ('' for unspecified, which it rejects). */
export const judgeKindOf = (k: PbJudgeKind): string =>
  k === PbJudgeKind.BUILTIN ? 'builtin' : k === PbJudgeKind.LLM ? 'llm' : '';

export function judgeSettingsToPb(s: JudgeSettings): PbJudgeSettings {
  return create(JudgeSettingsSchema, {
    projectId: s.projectId,
    enabled: s.enabled,
    sampleRate: s.sampleRate,
    kind: JUDGE_KIND_PB[s.kind],
    judgeModel: s.judgeModel,
    ...(s.updatedAt ? { updatedAt: timestampFromDate(s.updatedAt) } : {}),
  });
}
