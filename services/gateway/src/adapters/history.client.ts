import { fromJson, toJson, type JsonValue } from '@bufbuild/protobuf';
import { ValueSchema, timestampDate, timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import { microToCredits } from '@whetstone/catalog';
import {
  JudgeKind,
  JudgeStatus,
  Verdict,
  type Feedback,
  type JudgeSettings,
  type InferenceHistoryService,
  type InferenceRecord,
} from '@whetstone/proto/history/v1';
import { InferenceStatus, InferenceSurface, recordedTurnOf, type RecordedMessage } from '@whetstone/proto/inference/v1';
import type {
  FeedbackView,
  HistoryPort,
  InferenceRecordView,
  JudgeSettingsView,
  RecordedTurnView,
  SurfaceName,
} from '../application/history-ports';
import { CONVERSATION_PREFIX } from '../application/history-ports';
import { callerOf } from './caller';

/** The history contract ⇄ the public JSON of GET /inferences and the feedback routes. */

const iso = (ts: Timestamp | undefined): string | null => (ts ? timestampDate(ts).toISOString() : null);

const SURFACE: Record<InferenceSurface, SurfaceName> = {
  [InferenceSurface.UNSPECIFIED]: 'native',
  [InferenceSurface.NATIVE]: 'native',
  [InferenceSurface.GLINER2]: 'gliner-2',
  [InferenceSurface.SYSTEMONE]: 'systemone',
  [InferenceSurface.PROJECT]: 'project',
  [InferenceSurface.CHAT_COMPLETIONS]: 'chat-completions',
  [InferenceSurface.MESSAGES]: 'messages',
  [InferenceSurface.COMPLETIONS]: 'completions',
  [InferenceSurface.RESPONSES]: 'responses',
};
/** The reverse, for the list's surface filter. */
const SURFACE_OF_NAME = Object.fromEntries(
  Object.entries(SURFACE)
    .filter(([pb]) => Number(pb) !== InferenceSurface.UNSPECIFIED)
    .map(([pb, name]) => [name, Number(pb) as InferenceSurface]),
) as Record<SurfaceName, InferenceSurface>;

const JUDGE_STATUS: Record<JudgeStatus, InferenceRecordView['judge_status']> = {
  [JudgeStatus.UNSPECIFIED]: null,
  [JudgeStatus.PENDING]: 'pending',
  [JudgeStatus.SCORED]: 'scored',
  [JudgeStatus.FAILED]: 'failed',
};
const JUDGE_KIND: Record<JudgeKind, InferenceRecordView['judge_kind']> = {
  [JudgeKind.UNSPECIFIED]: null,
  [JudgeKind.BUILTIN]: 'builtin',
  [JudgeKind.LLM]: 'llm',
};

function judgeSettingsView(s: JudgeSettings | undefined, projectId: string): JudgeSettingsView {
  return {
    project_id: s?.projectId || projectId,
    enabled: s?.enabled ?? false,
    sample_rate: s?.sampleRate ?? 0,
    kind: s?.kind === JudgeKind.LLM ? 'llm' : 'builtin',
    judge_model: s?.judgeModel || null,
    updated_at: iso(s?.updatedAt),
  };
}

export function feedbackView(f: Feedback | undefined, inferenceId: string): FeedbackView {
  return {
    inference_id: f?.inferenceId || inferenceId,
    human_verdict: f?.verdict === Verdict.INCORRECT ? 'incorrect' : 'correct',
    human_feedback_at: iso(f?.submittedAt),
    corrected_output: f?.correctedOutput ? toJson(ValueSchema, f.correctedOutput) : null,
    notes: f?.notes || null,
  };
}

function turnView(m: RecordedMessage): RecordedTurnView {
  const { toolCalls, toolCallId, ...turn } = recordedTurnOf(m);
  return {
    ...turn,
    ...(toolCalls ? { tool_calls: toolCalls } : {}),
    ...(toolCallId ? { tool_call_id: toolCallId } : {}),
  };
}

export function recordView(r: InferenceRecord | undefined): InferenceRecordView {
  if (!r) throw new Error('inference-history answered without a record');
  const u = r.usage;
  const input = Number(u?.inputTokens ?? 0n);
  const output = Number(u?.outputTokens ?? 0n);
  const single = r.outputs.length === 1;
  const decoder = r.messages.length > 0;
  return {
    id: r.inferenceId,
    object: 'inference',
    inference_id: r.inferenceId,
    created_at: iso(r.createdAt),
    completed_at: iso(r.completedAt),
    team_id: r.teamId,
    key_id: r.keyId || null,
    user_id: r.userId || null,
    project_id: r.projectId || null,
    model_id: r.modelId,
    training_job_id: r.trainingJobId || null,
    base_model: r.baseModel,
    task: r.task,
    surface: SURFACE[r.surface] ?? 'native',
    text: !decoder && r.inputs.length === 1 ? r.inputs[0]! : null,
    inputs: decoder ? [] : r.inputs,
    messages: decoder ? r.messages.map(turnView) : null,
    schema: r.schema ?? null,
    output: single ? r.outputs[0]! : null,
    outputs: r.outputs,
    usage: {
      input_tokens: input,
      output_tokens: output,
      cache_read_tokens: Number(u?.cacheReadTokens ?? 0n),
      cache_write_tokens: Number(u?.cacheWriteTokens ?? 0n),
      reasoning_tokens: Number(u?.reasoningTokens ?? 0n),
      total_tokens: input + output,
      cost_credits: microToCredits(u?.costMicroCredits ?? 0n),
    },
    latency_ms: r.latencyMs,
    status: r.status === InferenceStatus.FAILED ? 'failed' : 'succeeded',
    error_code: r.errorCode || null,
    llmaj_score: r.llmajScore ?? null,
    judge_status: JUDGE_STATUS[r.judgeStatus],
    judge_rationale: r.judgeRationale || null,
    judge_kind: JUDGE_KIND[r.judgeKind],
    judge_model: r.judgeModel || null,
    judge_error: r.judgeError || null,
    judged_at: iso(r.judgedAt),
    feedback: r.feedback ? feedbackView(r.feedback, r.inferenceId) : null,
    metadata: { ...r.metadata },
    conversation_id: r.conversationId ? `${CONVERSATION_PREFIX}${r.conversationId}` : null,
  };
}

/** inference-history over gRPC, in the gateway's plain shapes. */
export function historyOverRpc(
  client: Client<typeof InferenceHistoryService>,
  ready: () => Promise<boolean>,
): HistoryPort {
  return {
    ready,
    async list(principal, f) {
      const res = await client.listInferences({
        caller: callerOf(principal),
        limit: f.limit,
        offset: f.offset,
        modelId: f.modelId ?? '',
        task: f.task ?? '',
        projectId: f.projectId ?? '',
        trainingJobId: f.trainingJobId ?? '',
        latencyMin: f.latencyMin,
        latencyMax: f.latencyMax,
        llmajScoreMin: f.llmajScoreMin,
        llmajScoreMax: f.llmajScoreMax,
        ...(f.since ? { since: timestampFromDate(f.since) } : {}),
        ...(f.until ? { until: timestampFromDate(f.until) } : {}),
        ...(f.surface ? { surface: SURFACE_OF_NAME[f.surface] } : {}),
        metadata: f.metadata ?? {},
        oldestFirst: f.oldestFirst ?? false,
        afterId: f.afterId ?? '',
        countToPage: f.countToPage ?? false,
      });
      return { records: res.records.map(recordView), total: Number(res.total), totalCapped: res.totalCapped };
    },
    async get(principal, inferenceId) {
      return recordView((await client.getInference({ caller: callerOf(principal), inferenceId })).record);
    },
    async submitFeedback(principal, inferenceId, input) {
      const res = await client.submitFeedback({
        caller: callerOf(principal),
        inferenceId,
        verdict: input.verdict === 'correct' ? Verdict.CORRECT : Verdict.INCORRECT,
        ...(input.correctedOutput === null || input.correctedOutput === undefined
          ? {}
          : { correctedOutput: fromJson(ValueSchema, input.correctedOutput as JsonValue) }),
        notes: input.notes,
      });
      return feedbackView(res.feedback, inferenceId);
    },
    async getFeedback(principal, inferenceId) {
      return feedbackView(
        (await client.getFeedback({ caller: callerOf(principal), inferenceId })).feedback,
        inferenceId,
      );
    },
    async updateMetadata(principal, inferenceId, metadata) {
      const res = await client.updateInferenceMetadata({ caller: callerOf(principal), inferenceId, metadata });
      return recordView(res.record);
    },
    async delete(principal, inferenceId) {
      return (await client.deleteInference({ caller: callerOf(principal), inferenceId })).inferenceId;
    },
    async getJudgeSettings(principal, projectId) {
      const res = await client.getJudgeSettings({ caller: callerOf(principal), projectId });
      return judgeSettingsView(res.settings, projectId);
    },
    async setJudgeSettings(principal, s) {
      const res = await client.setJudgeSettings({
        caller: callerOf(principal),
        settings: {
          projectId: s.projectId,
          enabled: s.enabled,
          sampleRate: s.sampleRate,
          kind: s.kind === 'llm' ? JudgeKind.LLM : JudgeKind.BUILTIN,
          judgeModel: s.judgeModel,
        },
      });
      return judgeSettingsView(res.settings, s.projectId);
    },
  };
}
