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
  /** The schema as JSON bytes, forwarded to the model-server as they came; empty when none was given. */
  schemaJson: Uint8Array;
  /** The same schema parsed, for the inference record. */
  schema: Record<string, unknown> | undefined;
  threshold: number;
  includeConfidence: boolean;
  includeSpans: boolean;
  task: InferenceTask;
}

export interface ExtractOutput extends InferenceReceipt {
  /** A JSON array of one result per text: the model-server's bytes, passed on unparsed. */
  resultsJson: Uint8Array;
}

const utf8 = new TextDecoder();

/** Rough token count for the pre-flight credit check (the model-server reports the real one). */
const estimateTokens = (texts: string[]) => texts.reduce((n, t) => n + Math.ceil(t.length / 4), 0);

/**
 * Extraction on a base model, a trained job or a project's active deployment:
 * check the credits, run it on a model-server, and answer once its metering is durable.
 * Project calls may omit the schema: the deployed model's trained schema is used.
 */
export async function extract(deps: RouterDeps, input: ExtractInput): Promise<ExtractOutput> {
  const startedAt = deps.now();
  const t0 = performance.now();
  const target = await resolveTarget(deps, input.caller, input, 'extraction');
  requireTask(target, 'extraction');
  await deps.billing.checkSpendable(
    input.caller.teamId,
    priceOf(target.entry.price, { inputTokens: estimateTokens(input.texts) }),
    false,
  );

  const out = await deps.fleet.extract(target.ref, input.texts, input.schemaJson, {
    threshold: input.threshold,
    includeConfidence: input.includeConfidence,
    includeSpans: input.includeSpans,
  });
  const usage = {
    inputTokens: out.inputTokens,
    outputTokens: 0,
    costMicroCredits: priceOf(target.entry.price, { inputTokens: out.inputTokens }),
  };
  const latencyMs = Number((performance.now() - t0).toFixed(3));
  const inferenceId = deps.ids.uuid();
  await deps.metering.record({
    inferenceId,
    caller: input.caller,
    ...servedBy(target),
    projectId: input.projectId,
    task: input.task,
    inputs: input.texts,
    messages: [],
    schema: input.schema,
    outputs: JSON.parse(utf8.decode(out.resultsJson)) as Record<string, unknown>[],
    latencyMs,
    ...usage,
    startedAt,
    completedAt: deps.now(),
  });
  return { inferenceId, model: target.ref.modelId, resultsJson: out.resultsJson, usage, latencyMs };
}
