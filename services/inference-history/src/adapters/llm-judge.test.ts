import { AppError } from '@whetstone/errors';
import type { ChatRequest } from '@whetstone/proto/inference/v1';
import { judgingOff } from '../domain/judge';
import type { InferenceRecord } from '../domain/record';
import { llmJudgeOverRouter } from './llm-judge';

const record = {
  inferenceId: 'id',
  teamId: 'team',
  keyId: 'key',
  userId: 'user',
  task: 'ner',
  inputs: ['Ada met Bob.'],
  messages: [],
  schema: { entities: ['person'] },
  outputs: [{ entities: { person: ['Ada', 'Bob'] } }],
} as unknown as InferenceRecord;
const settings = { ...judgingOff('p'), kind: 'llm' as const, judgeModel: 'judge-gpt' };

/** A router whose Chat streams each scripted reply in two pieces, one reply per call. */
function fakeRouter(replies: string[]) {
  const calls: ChatRequest[] = [];
  const router = {
    chat: (req: ChatRequest) => {
      calls.push(req);
      const reply = replies[calls.length - 1] ?? '';
      return (async function* () {
        yield { text: reply.slice(0, 5) };
        yield { text: reply.slice(5) };
      })();
    },
  };
  return { router: router as unknown as Parameters<typeof llmJudgeOverRouter>[0], calls };
}

describe('llmJudgeOverRouter', () => {
  it('when the model answers the JSON, then score and rationale are its, the kind llm and the model the judge', async () => {
    const { router, calls } = fakeRouter(['{"score": 0.9, "rationale": "both people found"}']);
    expect(await llmJudgeOverRouter(router).judge(record, settings)).toEqual({
      score: 0.9,
      rationale: 'both people found',
      kind: 'llm',
      model: 'judge-gpt',
    });
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call).toMatchObject({ model: 'judge-gpt', store: false, caller: { teamId: 'team', keyId: 'key' } });
    expect(call.system[0]!.text).toMatch(/information-extraction/);
    expect(JSON.parse(call.messages[0]!.content[0]!.text)).toMatchObject({ inputs: ['Ada met Bob.'] });
    expect(call.sampling).toMatchObject({ temperature: 0 });
  });

  it('when the first answers are not the strict JSON, then it asks again and takes the first good one', async () => {
    const { router, calls } = fakeRouter([
      'Sure! score 0.8',
      '```{"score":0.8}```',
      '{"score": 0.4, "rationale": "ok"}',
    ]);
    expect((await llmJudgeOverRouter(router).judge(record, settings)).score).toBe(0.4);
    expect(calls).toHaveLength(3);
  });

  it('when every try is malformed, then it fails for good with JUDGE_BAD_ANSWER', async () => {
    const { router, calls } = fakeRouter(['no', 'no', 'no', '{"score": 1, "rationale": "late"}']);
    const err = await llmJudgeOverRouter(router)
      .judge(record, settings)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ reason: 'JUDGE_BAD_ANSWER', retryable: false });
    expect(calls).toHaveLength(3);
  });
});
