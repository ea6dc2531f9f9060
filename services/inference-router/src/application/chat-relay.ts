/**
 * The part every chat reply shares: relay a stream of pieces to the caller as
 * they arrive, then price and meter what was used, and only then answer the
 * last piece. Billing policy when a stream is cut (docs: the router's README):
 * once a first piece was relayed, a disconnected caller (or an upstream that
 * failed mid-reply) is charged the input and the output produced so far, with
 * the provider's own counts where it reported them and an estimate otherwise;
 * the record, when stored, has status failed and error_code
 * CLIENT_DISCONNECTED (or the failure's reason). A call that fails before its
 * first piece is not charged.
 */
import { failureOf } from '@whetstone/errors';
import { atPercent, priceOf } from '../domain/catalog';
import {
  type ChatDelta,
  type ChatDone,
  type ChatFinishReason,
  type ChatPiece,
  type ChatRequest,
  foldToolCalls,
  NO_TOKENS,
  textOf,
  type TokenUsage,
  type ToolCall,
  totalInput,
} from '../domain/chat';
import type { Caller, InferenceTask } from '../domain/model';
import type { RouterDeps } from './deps';
import type { RecordedTurn, UpstreamEvent } from './ports';
import { servedBy, type Target } from './resolve-target';

/** One chat call being served: who asked, what, what serves it, and when it started. */
export interface ChatContext {
  caller: Caller;
  request: ChatRequest;
  target: Target;
  /** The project the call went through; empty when none. */
  projectId: string;
  task: InferenceTask;
  /** Minted when the call arrived: the usage idempotency key, and the inference id when stored. */
  responseId: string;
  startedAt: Date;
  t0: number;
  /** What the call costs as a percent of its catalog price (a batched call's discount); unset: 100. */
  pricePercent?: number;
}

/** What a reply produced, for the meter. */
export interface ReplyOutcome {
  tokens: TokenUsage;
  text: string;
  finishReason: ChatFinishReason;
  stopSequence?: string;
  reasoning?: string;
  toolCalls?: ToolCall[];
  outputs?: Record<string, unknown>[];
  errorCode?: string;
}

/**
 * The conversation as history records it: the system blocks as a first turn, then each turn's joined text with
 * its tool calls (or the call it answers), so that a stored Responses call can be continued by its id.
 */
function recordedMessages(request: ChatRequest): RecordedTurn[] {
  const system = request.system.length ? [{ role: 'system', content: textOf(request.system) }] : [];
  return [
    ...system,
    ...request.messages.map((m) => ({
      role: m.role,
      content: textOf(m.content),
      ...(m.toolCalls.length ? { toolCalls: m.toolCalls } : {}),
      ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}),
    })),
  ];
}

/**
 * Prices and meters one reply: UsageRecorded always, InferenceCompleted when
 * the call is stored. Resolves once both are durable, with the last piece's contents.
 */
export async function meterReply(deps: RouterDeps, ctx: ChatContext, out: ReplyOutcome): Promise<ChatDone> {
  const cost = atPercent(priceOf(ctx.target.entry.price, out.tokens), ctx.pricePercent);
  const usage = { ...out.tokens, costMicroCredits: cost };
  const latencyMs = Number((performance.now() - ctx.t0).toFixed(3));
  const { responseId } = ctx;
  const stored = ctx.request.store;
  const messages = recordedMessages(ctx.request);
  await deps.metering.record({
    inferenceId: responseId,
    caller: ctx.caller,
    ...servedBy(ctx.target),
    projectId: ctx.projectId,
    task: ctx.task,
    inputs: messages.map((m) => `${m.role}: ${m.content}`),
    messages,
    schema: ctx.request.schema,
    outputs: out.outputs ?? [
      {
        text: out.text,
        finish_reason: out.finishReason,
        ...(out.reasoning ? { reasoning: out.reasoning } : {}),
        ...(out.toolCalls?.length ? { tool_calls: out.toolCalls } : {}),
      },
    ],
    latencyMs,
    inputTokens: totalInput(out.tokens),
    outputTokens: out.tokens.outputTokens,
    cacheReadTokens: out.tokens.cacheReadTokens,
    cacheWriteTokens: out.tokens.cacheWriteTokens,
    reasoningTokens: out.tokens.reasoningTokens,
    costMicroCredits: usage.costMicroCredits,
    startedAt: ctx.startedAt,
    completedAt: deps.now(),
    ...(ctx.request.surface ? { surface: ctx.request.surface } : {}),
    stored,
    ...(ctx.request.metadata ? { metadata: ctx.request.metadata } : {}),
    ...(ctx.request.conversationId ? { conversationId: ctx.request.conversationId } : {}),
    ...(out.errorCode ? { errorCode: out.errorCode } : {}),
  });
  return {
    responseId,
    inferenceId: stored ? responseId : '',
    model: ctx.target.ref.modelId,
    finishReason: out.finishReason,
    ...(out.stopSequence ? { stopSequence: out.stopSequence } : {}),
    usage,
    latencyMs,
    text: out.text,
  };
}

/** A reply stream and how to count its tokens when it is cut before the provider reported them. */
export interface ReplySource {
  events: AsyncIterable<UpstreamEvent>;
  /** Tokens of a reply cut after `text` (and `toolArguments`) was produced. */
  estimate(text: string, toolArguments: string): TokenUsage;
}

/** What the caller sees of a delta: reasoning only when asked for; null when nothing is left. */
function visible(delta: ChatDelta, includeReasoning: boolean): ChatDelta | null {
  const out: ChatDelta = {};
  if (delta.text) out.text = delta.text;
  if (delta.reasoning && includeReasoning) out.reasoning = delta.reasoning;
  if (delta.toolCalls?.length) out.toolCalls = delta.toolCalls;
  if (delta.logprobs?.length) out.logprobs = delta.logprobs;
  if (delta.promptLogprobs?.length) out.promptLogprobs = delta.promptLogprobs;
  return Object.keys(out).length ? out : null;
}

/** Relays a reply piece by piece, meters it, and yields the last piece once metering is durable. */
export async function* relay(deps: RouterDeps, ctx: ChatContext, source: ReplySource): AsyncGenerator<ChatPiece> {
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  let reported: Partial<TokenUsage> = {};
  let finishReason: ChatFinishReason = 'stop';
  let stopSequence = '';
  let relayed = false;
  let settled = false;
  let failure: unknown;
  const outcome = (): Omit<ReplyOutcome, 'tokens'> => ({
    text,
    finishReason,
    stopSequence,
    reasoning,
    toolCalls: toolCalls.filter(Boolean),
  });
  try {
    for await (const event of source.events) {
      if ('usage' in event) reported = { ...reported, ...event.usage };
      else if ('finish' in event) {
        finishReason = event.finish;
        stopSequence = event.stopSequence ?? '';
      } else {
        text += event.delta.text ?? '';
        reasoning += event.delta.reasoning ?? '';
        if (event.delta.toolCalls) foldToolCalls(toolCalls, event.delta.toolCalls);
        const piece = visible(event.delta, ctx.request.includeReasoning);
        if (piece) {
          relayed = true;
          yield { delta: piece };
        }
      }
    }
    settled = true;
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    if (!settled && relayed) await meterCut(deps, ctx, source, reported, outcome(), failure);
  }
  const toolArguments = toolCalls.map((c) => c.arguments).join('');
  const tokens = { ...NO_TOKENS, ...source.estimate(text, toolArguments), ...reported };
  yield { done: await meterReply(deps, ctx, { ...outcome(), tokens }) };
}

/** Meters a reply that was cut after its first piece (see the policy above); never throws over the cut's cause. */
async function meterCut(
  deps: RouterDeps,
  ctx: ChatContext,
  source: ReplySource,
  reported: Partial<TokenUsage>,
  out: Omit<ReplyOutcome, 'tokens'>,
  failure: unknown,
): Promise<void> {
  const disconnected = ctx.request.options.signal?.aborted === true;
  const errorCode = disconnected ? 'CLIENT_DISCONNECTED' : failureOf(failure).code;
  const toolArguments = (out.toolCalls ?? []).map((c) => c.arguments).join('');
  const tokens = { ...NO_TOKENS, ...source.estimate(out.text, toolArguments), ...reported };
  try {
    await meterReply(deps, ctx, { ...out, tokens, finishReason: out.finishReason, errorCode });
  } catch (err) {
    deps.logger.error({ err, model: ctx.target.ref.modelId }, 'could not meter a reply that was cut');
  }
}
