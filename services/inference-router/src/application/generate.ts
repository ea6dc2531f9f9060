import { priceOf } from '../domain/catalog';
import type { Caller, ChatTurn, FinishReason, GenerateOptions, InferenceReceipt } from '../domain/model';
import type { RouterDeps } from './deps';
import { resolveTarget, requireTask, servedBy } from './resolve-target';

/** A decoder call as the gateway validated it: at least one message, sampling options with defaults applied. */
export interface GenerateInput {
  caller: Caller;
  modelId: string;
  projectId: string;
  messages: ChatTurn[];
  options: GenerateOptions;
}

export type GeneratePiece =
  { text: string } | { done: InferenceReceipt & { text: string; finishReason: FinishReason } };

/** Output tokens assumed for the credit check when the call sets no limit. */
const DEFAULT_MAX_TOKENS = 128;

/**
 * Streams a trained decoder's reply (a job id, or a project whose active
 * deployment is a decoder), priced and metered like extraction.
 */
export async function* generate(deps: RouterDeps, input: GenerateInput): AsyncGenerator<GeneratePiece> {
  const startedAt = deps.now();
  const t0 = performance.now();
  const target = await resolveTarget(deps, input.caller, input, 'decoder');
  requireTask(target, 'decoder');
  const promptBytes = input.messages.reduce((n, m) => n + Buffer.byteLength(m.content), 0);
  await deps.billing.checkSpendable(
    input.caller.teamId,
    priceOf(target.entry.price, promptBytes, input.options.maxTokens || DEFAULT_MAX_TOKENS),
    false,
  );
  const stream = deps.fleet.generate(target.ref, input.messages, input.options);
  let text = '';
  for await (const piece of stream.chunks) {
    text += piece;
    yield { text: piece };
  }
  const end = stream.done();
  const usage = {
    inputTokens: end.inputTokens,
    outputTokens: end.outputTokens,
    costMicroCredits: priceOf(target.entry.price, end.inputTokens, end.outputTokens),
  };
  const latencyMs = Number((performance.now() - t0).toFixed(3));
  const inferenceId = deps.ids.uuid();
  await deps.metering.record({
    inferenceId,
    caller: input.caller,
    ...servedBy(target),
    projectId: input.projectId,
    task: 'generate',
    inputs: input.messages.map((m) => `${m.role}: ${m.content}`),
    messages: input.messages.map((m) => ({ role: m.role, content: m.content })),
    schema: undefined,
    outputs: [{ text, finish_reason: end.finishReason }],
    latencyMs,
    ...usage,
    startedAt,
    completedAt: deps.now(),
  });
  yield { done: { inferenceId, model: target.ref.modelId, text, usage, latencyMs, finishReason: end.finishReason } };
}
