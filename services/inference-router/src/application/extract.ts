import { priceOf } from '../domain/catalog';
import type { Caller, InferenceReceipt, InferenceTask } from '../domain/model';
import type { RouterDeps } from './deps';
import { resolveTarget, requireTask, servedBy } from './resolve-target';

/** One extraction call as the gateway validated it: 1 to 1,000 texts, a schema unless a project is named. */
export interface ExtractInput {
  caller: Caller;
  modelId: string;
  projectId: string;
  texts: string[];
  schema: Record<string, unknown> | undefined;
  threshold: number;
  includeConfidence: boolean;
  includeSpans: boolean;
  task: InferenceTask;
}

export interface ExtractOutput extends InferenceReceipt {
  results: Record<string, unknown>[];
}

/** Rough token count for the pre-flight credit check (the model-server reports the real one). */
const estimateTokens = (texts: string[]) => texts.reduce((n, t) => n + Math.ceil(t.length / 4), 0);

/**
 * Extraction on a base model, a trained job or a project's active deployment:
 * check the credits, run it on a model-server, meter it off the response path.
 * Project calls may omit the schema: the deployed model's trained schema is used.
 */
export async function extract(deps: RouterDeps, input: ExtractInput): Promise<ExtractOutput> {
  const startedAt = deps.now();
  const t0 = performance.now();
  const target = await resolveTarget(deps, input.caller, input, 'extraction');
  requireTask(target, 'extraction');
  await deps.billing.checkSpendable(
    input.caller.teamId,
    priceOf(target.entry.price, estimateTokens(input.texts)),
    false,
  );

  const out = await deps.fleet.extract(target.ref, input.texts, input.schema, {
    threshold: input.threshold,
    includeConfidence: input.includeConfidence,
    includeSpans: input.includeSpans,
  });
  const usage = {
    inputTokens: out.inputTokens,
    outputTokens: 0,
    costMicroCredits: priceOf(target.entry.price, out.inputTokens),
  };
  const latencyMs = Number((performance.now() - t0).toFixed(3));
  const inferenceId = deps.ids.uuid();
  deps.metering.record({
    inferenceId,
    caller: input.caller,
    ...servedBy(target),
    projectId: input.projectId,
    task: input.task,
    inputs: input.texts,
    messages: [],
    schema: input.schema,
    outputs: out.results,
    latencyMs,
    ...usage,
    startedAt,
    completedAt: deps.now(),
  });
  return { inferenceId, model: target.ref.modelId, results: out.results, usage, latencyMs };
}
