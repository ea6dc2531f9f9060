import type { Client } from '@connectrpc/connect';
import { AppError } from '@whetstone/errors';
import { BUILTIN_JUDGE_ID, EXTRACT_BASE_ID, builtinJudgeCanScore, builtinJudgeScore } from '@whetstone/ml';
import { InferenceTask, type InferenceRouterService } from '@whetstone/proto/inference/v1';
import type { Judge } from '../application/ports';
import type { InferenceRecord } from '../domain/record';

type Router = Client<typeof InferenceRouterService>;
type Result = Record<string, unknown>;

const NO_BYTES = new Uint8Array(0);
const utf8 = new TextDecoder();

/**
 * The zero-shot base's schema for a record: the request's, else the entity labels the served output lists (a project
 * call without a schema used its trained schema, whose classification labels the output does not show).
 */
function independentSchema(record: InferenceRecord, served: Result[]): Record<string, unknown> {
  if (record.schema) return record.schema;
  const labels = new Set<string>();
  for (const r of served)
    if (typeof r.entities === 'object' && r.entities !== null) for (const l of Object.keys(r.entities)) labels.add(l);
  return { entities: [...labels] };
}

/**
 * The built-in judge (not an LLM) for inference-history's worker. It needs what the stored record may lack: the
 * served model's confidences and an independent opinion. Both come from the router's Infer, as the record's own
 * caller, so both are ordinary inferences, metered and billed to the team on the same ledger and stored in its history
 * (without a project, so they are never sampled for judging themselves): the served model (the record's model_id: a
 * base model or the deployed training job) again with confidences and spans, and the zero-shot base
 * (`whetstone-extract-base`) on the same texts. The score of each text is `builtinJudgeScore` (packages/ml); a batch
 * scores as its weakest text.
 */
export function builtinJudgeOverRouter(router: Router): Judge {
  const infer = async (record: InferenceRecord, modelId: string, schema: Record<string, unknown> | null) => {
    const res = await router.infer({
      caller: { teamId: record.teamId, keyId: record.keyId, userId: record.userId },
      modelId,
      texts: record.inputs,
      schemaJson: schema ? Buffer.from(JSON.stringify(schema)) : NO_BYTES,
      includeConfidence: true,
      includeSpans: true,
      task: InferenceTask.EXTRACT,
    });
    return JSON.parse(utf8.decode(res.resultsJson)) as Result[];
  };
  return {
    kind: 'builtin',
    async judge(record) {
      // A chat reply (a decoder's, an upstream model's, a router project's pick) has no spans or labels to score,
      // and asking its model for extraction confidences could only fail: it is refused with what to do instead.
      if (record.task === 'generate')
        throw new AppError(
          'FailedPrecondition',
          'JUDGE_UNSUPPORTED_TASK',
          `The built-in judge scores extraction outputs (entities and classifications); this record is a chat reply from ${record.modelId}: set the project's judge to kind llm with a judge_model to score chat replies.`,
          { retryable: false },
        );
      const scorable = record.inputs.length > 0 && record.outputs.some((o) => builtinJudgeCanScore(o));
      if (!scorable)
        throw new AppError(
          'FailedPrecondition',
          'JUDGE_UNSUPPORTED_TASK',
          'The built-in judge scores entities and classifications; this record has neither (use an LLM judge).',
          { retryable: false },
        );
      const served = await infer(record, record.modelId, record.schema);
      const independent = await infer(record, EXTRACT_BASE_ID, independentSchema(record, served));
      const scores = served.map((output, i) => builtinJudgeScore({ output, independent: independent[i] ?? {} }));
      const weakest = scores.reduce((a, b) => (b.score < a.score ? b : a));
      const rationale =
        scores.length > 1 ? `weakest of ${scores.length} texts: ${weakest.rationale}` : weakest.rationale;
      return { score: weakest.score, rationale, kind: 'builtin', model: BUILTIN_JUDGE_ID };
    },
  };
}
