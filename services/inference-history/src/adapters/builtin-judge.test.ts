import { AppError } from '@whetstone/errors';
import type { InferRequest } from '@whetstone/proto/inference/v1';
import { builtinJudgeOverRouter } from './builtin-judge';
import type { InferenceRecord } from '../domain/record';
import { judgingOff } from '../domain/judge';

const m = (text: string, start: number, confidence: number) => ({ text, start, end: start + text.length, confidence });

const record = (over: Partial<InferenceRecord> = {}): InferenceRecord => ({
  inferenceId: '0190a000-0000-7000-8000-000000000001',
  teamId: 'team',
  keyId: 'key',
  userId: 'user',
  projectId: 'project',
  modelId: 'job-1',
  trainingJobId: 'job-1',
  baseModel: 'whetstone-extract-base',
  task: 'ner',
  surface: 'project',
  inputs: ['Ada met Bob in London.'],
  messages: [],
  schema: null,
  outputs: [{ entities: { person: ['Ada', 'Bob'], location: ['London'] } }],
  usage: {
    inputTokens: 6,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    costMicroCredits: 0n,
  },
  latencyMs: 1,
  status: 'succeeded',
  errorCode: null,
  createdAt: new Date(),
  completedAt: new Date(),
  llmajScore: null,
  metadata: {},
  feedback: null,
  ...over,
});

/** A router whose Infer answers per model id and remembers each request. */
function fakeRouter(answers: Record<string, unknown[]>) {
  const calls: InferRequest[] = [];
  const router = {
    infer: async (req: InferRequest) => {
      calls.push(req);
      return { resultsJson: Buffer.from(JSON.stringify(answers[req.modelId])) };
    },
  };
  return { router: router as unknown as Parameters<typeof builtinJudgeOverRouter>[0], calls };
}

describe('builtinJudgeOverRouter', () => {
  it('when a project record is judged, then the served job and the zero-shot base are asked as the caller, with confidences', async () => {
    const served = { entities: { person: [m('Ada', 0, 0.9), m('Bob', 8, 0.9)], location: [m('London', 15, 1)] } };
    const base = { entities: { person: [m('Ada', 0, 0.7), m('Bob', 8, 0.6)], location: [m('London', 15, 0.8)] } };
    const { router, calls } = fakeRouter({ 'job-1': [served], 'whetstone-extract-base': [base] });
    const verdict = await builtinJudgeOverRouter(router).judge(record(), judgingOff('project'));
    expect(verdict).toMatchObject({ kind: 'builtin', model: 'whetstone-judge-builtin/1' });
    expect(verdict.score).toBeCloseTo(0.75 * 0.81 + 0.25, 4);
    expect(verdict.rationale).toMatch(/^built-in judge \(not an LLM\)/);
    expect(calls.map((c) => c.modelId)).toEqual(['job-1', 'whetstone-extract-base']);
    for (const c of calls) {
      expect(c).toMatchObject({ includeConfidence: true, includeSpans: true, texts: ['Ada met Bob in London.'] });
      expect(c.caller).toEqual({ teamId: 'team', keyId: 'key', userId: 'user' });
    }
    // No schema on the record: the served job used its trained one; the base gets the labels its output lists.
    expect(calls[0]!.schemaJson.length).toBe(0);
    expect(JSON.parse(Buffer.from(calls[1]!.schemaJson).toString())).toEqual({ entities: ['person', 'location'] });
  });

  it('when a batch is judged, then it scores as its weakest text', async () => {
    const sure = { entities: { person: [m('Ada', 0, 1)] } };
    const unsure = { entities: { person: [m('Bob', 0, 0.2)] } };
    const { router } = fakeRouter({ 'job-1': [sure, unsure], 'whetstone-extract-base': [sure, { entities: {} }] });
    const verdict = await builtinJudgeOverRouter(router).judge(
      record({ inputs: ['Ada', 'Bob'], outputs: [{ entities: {} }, { entities: {} }] }),
      judgingOff('project'),
    );
    expect(verdict.score).toBeCloseTo(0.75 * 0.2, 4);
    expect(verdict.rationale).toMatch(/^weakest of 2 texts: /);
  });

  it('when a decoder reply is judged, then it fails for good with JUDGE_UNSUPPORTED_TASK and asks nobody', async () => {
    const { router, calls } = fakeRouter({});
    const err = await builtinJudgeOverRouter(router)
      .judge(record({ inputs: [], messages: [{ role: 'user', content: 'hi' }], outputs: [] }), judgingOff('p'))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ reason: 'JUDGE_UNSUPPORTED_TASK', retryable: false });
    expect(calls).toEqual([]);
  });

  it('when a router project’s chat reply is judged, then it fails for good naming the model and the LLM judge, and asks nobody', async () => {
    const { router, calls } = fakeRouter({});
    const routed = record({
      modelId: 'gpt-mini',
      trainingJobId: null,
      task: 'generate',
      inputs: ['user: hello'],
      messages: [{ role: 'user', content: 'hello' }],
      outputs: [{ text: 'Hi!', finish_reason: 'stop' }],
    });
    const err = await builtinJudgeOverRouter(router)
      .judge(routed, judgingOff('p'))
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'JUDGE_UNSUPPORTED_TASK', retryable: false });
    expect((err as Error).message).toMatch(/chat reply from gpt-mini: set the project's judge to kind llm/);
    expect(calls).toEqual([]);
  });
});
