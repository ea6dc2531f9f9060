import type { Client } from '@connectrpc/connect';
import { AppError } from '@whetstone/errors';
import { ChatRole, InferenceSurface, type InferenceRouterService } from '@whetstone/proto/inference/v1';
import type { Judge } from '../application/ports';
import { parseJudgeAnswer, rubricPrompt, rubricSubject, rubricTaskOf } from '../domain/llm-rubric';
import type { InferenceRecord } from '../domain/record';

type Router = Client<typeof InferenceRouterService>;

/** Answers asked for per attempt before the judge model is deemed unable to follow the format. */
export const LLM_JUDGE_TRIES = 3;
/** Room for the JSON answer; a longer reply is cut and fails the strict parse. */
const MAX_ANSWER_TOKENS = 256;

/**
 * The LLM judge: any chat model the router reaches (an upstream provider's model, or a trained decoder), asked
 * through the router's Chat as the record's caller, so each call is metered and billed like any other inference (and
 * not stored in history: `store` is false). The system turn is the task's rubric (domain/llm-rubric.ts), the user
 * turn the input and output as JSON; temperature 0. The answer must be exactly `{"score", "rationale"}`: a reply that
 * is not is asked again, up to {@link LLM_JUDGE_TRIES} times, and then the record fails with JUDGE_BAD_ANSWER (not
 * retried later: a model that cannot follow the format will not learn it). Transport failures (the router or the
 * provider down, a model warming) are retryable and left to the worker's bounded retries.
 */
export function llmJudgeOverRouter(router: Router, tries = LLM_JUDGE_TRIES): Judge {
  const ask = async (record: InferenceRecord, model: string): Promise<string> => {
    const stream = router.chat({
      caller: { teamId: record.teamId, keyId: record.keyId, userId: record.userId },
      model,
      system: [{ text: rubricPrompt(rubricTaskOf(record)) }],
      messages: [{ role: ChatRole.USER, content: [{ text: rubricSubject(record) }] }],
      sampling: { temperature: 0, topP: 0, maxTokens: MAX_ANSWER_TOKENS, stop: [], seed: 0n },
      surface: InferenceSurface.CHAT_COMPLETIONS,
      store: false,
    });
    let text = '';
    for await (const piece of stream) text += piece.text;
    return text;
  };
  return {
    kind: 'llm',
    async judge(record, settings) {
      const model = settings.judgeModel;
      if (!model)
        throw new AppError('FailedPrecondition', 'JUDGE_MODEL_MISSING', 'The project’s LLM judge names no model.', {
          retryable: false,
        });
      for (let i = 0; i < tries; i++) {
        const answer = parseJudgeAnswer(await ask(record, model));
        if (answer) return { score: answer.score, rationale: answer.rationale, kind: 'llm', model };
      }
      throw new AppError(
        'FailedPrecondition',
        'JUDGE_BAD_ANSWER',
        `The judge model answered ${tries} times without the JSON {score, rationale} the rubric asks for.`,
        { retryable: false },
      );
    },
  };
}
