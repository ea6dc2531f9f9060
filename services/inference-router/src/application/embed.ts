import { errors, Reasons } from '@whetstone/errors';
import { atPercent, priceOf } from '../domain/catalog';
import { approxTokens } from '../domain/chat';
import type { Caller, Usage } from '../domain/model';
import type { RouterDeps } from './deps';
import { modelTarget, servedBy, type Target } from './resolve-target';

/** One embeddings call as the gateway validated it: 1 to 2,048 texts. */
export interface EmbedInput {
  caller: Caller;
  modelId: string;
  texts: string[];
  /** The length the caller expects; 0 for the model's own. */
  dimensions: number;
  /** The usage key, minted beforehand when the call may run twice (a batch request); new when absent. */
  inferenceId?: string;
  /** What the call costs as a percent of its catalog price (a batched call's discount); unset: 100. */
  pricePercent?: number;
}

export interface EmbedOutput {
  model: string;
  vectors: number[][];
  dimensions: number;
  usage: Usage;
}

/** Rough token count for the pre-flight credit check (the model-server reports the real one). */
const estimateTokens = (texts: string[]) => texts.reduce((n, t) => n + approxTokens(t), 0);

/** The vectors of one call: from an operator's upstream embedding model, or from an encoder on a model-server. */
async function vectorsOf(
  deps: RouterDeps,
  target: Target,
  input: EmbedInput,
): Promise<{ vectors: number[][]; dimensions: number; inputTokens: number }> {
  const { upstream } = target.entry;
  if (!upstream) return deps.fleet.embed(target.ref, input.texts);
  const out = await deps.upstreams.embed({
    modelId: input.modelId,
    model: upstream,
    texts: input.texts,
    dimensions: input.dimensions,
  });
  return { ...out, dimensions: out.vectors[0]?.length ?? 0 };
}

/**
 * Embeddings from an operator's upstream embedding model, a base extraction model or a trained extraction job's
 * encoder: check the credits, embed, and answer once the usage is durable (priced at the model's input rate; no
 * inference record is stored).
 */
export async function embed(deps: RouterDeps, input: EmbedInput): Promise<EmbedOutput> {
  const startedAt = deps.now();
  const t0 = performance.now();
  const target = await modelTarget(deps, input.caller, input.modelId, 'any');
  if (target.entry.task !== 'extraction' && target.entry.task !== 'embedding')
    throw errors.precondition(
      Reasons.MODEL_NOT_SERVABLE,
      `Model '${input.modelId}' is a ${target.entry.task} model: embeddings come from extraction models (whetstone-extract-base or a trained extraction job) and the operator's upstream embedding models.`,
    );
  await deps.billing.checkSpendable(
    input.caller.teamId,
    priceOf(target.entry.price, { inputTokens: estimateTokens(input.texts) }),
    false,
  );
  const out = await vectorsOf(deps, target, input);
  if (input.dimensions && input.dimensions !== out.dimensions)
    throw errors.invalid(
      Reasons.VALIDATION_FAILED,
      `Model '${input.modelId}' embeds in ${out.dimensions} dimensions.`,
      [{ field: 'dimensions', message: `must be ${out.dimensions} (or left out) for this model` }],
    );
  const usage: Usage = {
    inputTokens: out.inputTokens,
    outputTokens: 0,
    costMicroCredits: atPercent(priceOf(target.entry.price, { inputTokens: out.inputTokens }), input.pricePercent),
  };
  await deps.metering.record({
    inferenceId: input.inferenceId ?? deps.ids.uuid(),
    caller: input.caller,
    ...servedBy(target),
    projectId: '',
    task: 'embed',
    inputs: [],
    messages: [],
    schema: undefined,
    outputs: [],
    latencyMs: Number((performance.now() - t0).toFixed(3)),
    ...usage,
    startedAt,
    completedAt: deps.now(),
    stored: false,
  });
  return { model: target.ref.modelId, vectors: out.vectors, dimensions: out.dimensions, usage };
}
