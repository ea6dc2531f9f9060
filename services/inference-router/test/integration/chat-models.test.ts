import { toHttpError } from '@whetstone/errors';
import { trainDecoderLora } from '@whetstone/ml';
import {
  ChatRole,
  DeploymentStatus,
  FinishReason,
  type GenerateTextResponse,
  InferenceSurface,
  InferenceTask,
} from '@whetstone/proto/inference/v1';
import { eventually } from '@whetstone/testing';
import { chatRequest, collect, outboxOf } from './chat-support';
import { json, rpcError, startHarness, team, type Harness } from './harness';

const row = (name: string) => ({
  messages: [
    { role: 'user', content: `hi, I am ${name}` },
    { role: 'assistant', content: `Hello ${name}!` },
  ],
});

describe('Chat with built-in models: extraction with a schema and a trained decoder', () => {
  let h: Harness;
  let decoderJob: string;

  beforeAll(async () => {
    h = await startHarness();
    // A real LoRA adapter on whetstone-decoder-base, trained in well under a second.
    const trained = await trainDecoderLora({
      train: ['Ada', 'Bob', 'Cleo', 'Dan'].map(row),
      heldout: [row('Eve')],
      hyperparameters: { nrEpochs: 1, learningRate: 1e-2, batchSize: 2, loraRank: 2, seed: 1 } as never,
    });
    decoderJob = await h.addDecoderJob(trained.bundle);
  }, 60_000);
  afterAll(() => h?.close());

  const chat = (over: Record<string, unknown>) =>
    collect(h.client.chat({ caller: team, ...chatRequest(over) } as never));
  const user = (text: string) => [{ role: ChatRole.USER, content: [{ text }] }];

  it('when an extraction model gets a schema, then the reply is its JSON result for the last user turn, metered like /inference', async () => {
    const res = await chat({
      model: 'whetstone-extract-base',
      schemaJson: json({ entities: ['person', 'city'] }),
      messages: user('Ada Lovelace lived in London.'),
    });
    expect(JSON.parse(res.text)).toEqual({ entities: { person: ['Ada Lovelace'], city: ['London'] } });
    expect(res.last).toMatchObject({ finishReason: FinishReason.STOP, model: 'whetstone-extract-base' });
    expect(res.last.usage?.costMicroCredits).toBe(1_001n);
    expect(h.direct[h.direct.length - 1]).toBe(false);
    const { completed } = await outboxOf(h, res.last.responseId);
    expect(completed[0]).toMatchObject({
      task: InferenceTask.EXTRACT,
      surface: InferenceSurface.CHAT_COMPLETIONS,
      schema: { entities: ['person', 'city'] },
    });
  });

  it('when the schema is missing, misplaced, or the model cannot serve, then the error names why', async () => {
    const noSchema = await rpcError(chat({ model: 'whetstone-extract-base' }));
    expect([noSchema.kind, noSchema.fieldErrors[0]?.field]).toEqual(['InvalidArgument', 'schema']);
    // One line on the compatible surfaces, `<message>: <field>: <entry>`, that says the same thing throughout.
    expect((toHttpError(noSchema, 'openai').body as { error: { message: string } }).error.message).toBe(
      "Model 'whetstone-extract-base' extracts with a schema, and the request has none: schema: is required for " +
        'extraction models: give entities, classifications, relations or structures',
    );
    const misplaced = await rpcError(chat({ model: decoderJob, schemaJson: json({ entities: ['x'] }) }));
    expect(misplaced.fieldErrors[0]?.field).toBe('schema');
    const tools = await rpcError(chat({ model: decoderJob, toolsJson: json([{ name: 'f' }]) }));
    expect(tools.fieldErrors[0]?.field).toBe('tools');
    const format = await rpcError(chat({ model: decoderJob, responseFormatJson: json({ type: 'json_object' }) }));
    expect(format.fieldErrors[0]?.field).toBe('response_format');
    expect(await rpcError(chat({ model: 'whetstone-decoder-base' }))).toMatchObject({
      kind: 'FailedPrecondition',
      reason: 'MODEL_NOT_SERVABLE',
    });
    expect((await rpcError(chat({ model: 'no-such-model' }))).kind).toBe('NotFound');
  });

  it('when a trained extraction model is still loading, then the call is TooEarly MODEL_WARMING', async () => {
    let open!: () => void;
    h.setGate(new Promise((r) => (open = r)));
    const jobId = await h.addJob({ person: ['Zorblax'] });
    const warming = await rpcError(
      chat({ model: jobId, schemaJson: json({ entities: ['person'] }), messages: user('Zorblax') }),
    );
    expect(warming).toMatchObject({ kind: 'TooEarly', reason: 'MODEL_WARMING' });
    open();
    h.setGate(Promise.resolve());
  });

  it('when a trained decoder gets cache markers, then it streams a reply whose usage counts the prompt bytes, and GenerateText serves the same job', async () => {
    const system = [{ text: 'You greet people.', cacheControl: { ttlSeconds: 0 } }];
    const res = await chat({
      model: decoderJob,
      system,
      messages: user('hi, I am Ada'),
      sampling: { temperature: 0, topP: 0, maxTokens: 12, stop: [], seed: 0n },
    });
    expect(res.pieces.filter((p) => p.text).length).toBeGreaterThan(0);
    expect([FinishReason.STOP, FinishReason.LENGTH]).toContain(res.last.finishReason);
    const u = res.last.usage!;
    // Decoder tokens are bytes: every input class together is the prompt's bytes.
    expect(u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens).toBe(
      BigInt(Buffer.byteLength('You greet people.hi, I am Ada')),
    );
    expect(u.outputTokens).toBe(BigInt(Buffer.byteLength(res.text)));
    expect(res.last.inferenceId).toBe(res.last.responseId);

    let last: GenerateTextResponse | undefined;
    for await (const piece of h.client.generateText({
      caller: team,
      modelId: decoderJob,
      messages: [{ role: ChatRole.USER, content: 'hi, I am Ada' }],
      sampling: { temperature: 0, topP: 0, maxTokens: 12, stop: [], seed: 0n },
    }))
      last = piece;
    expect(last).toMatchObject({ model: decoderJob, inferenceId: expect.any(String) });
    const { completed } = await outboxOf(h, last!.inferenceId);
    expect(completed[0]).toMatchObject({ task: InferenceTask.GENERATE, surface: InferenceSurface.NATIVE });
  });

  it('when tokens are counted, then the count is what the same call is billed, and a bad call fails as Chat would', async () => {
    const count = async (over: Record<string, unknown>) =>
      Number((await h.client.countChatTokens({ chat: { caller: team, ...chatRequest(over) } } as never)).inputTokens);
    const decoderCall = {
      model: decoderJob,
      system: [{ text: 'You greet people.' }],
      messages: user('hi, I am Ada'),
      sampling: { temperature: 0, topP: 0, maxTokens: 4, stop: [], seed: 0n },
    };
    const u = (await chat(decoderCall)).last.usage!;
    expect(await count(decoderCall)).toBe(Number(u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens));

    const extractionCall = {
      model: 'whetstone-extract-base',
      schemaJson: json({ entities: ['person'] }),
      messages: user('Ada Lovelace, born in 1815, wrote notes.'),
    };
    expect(await count(extractionCall)).toBe(Number((await chat(extractionCall)).last.usage!.inputTokens));
    expect(await count(extractionCall)).toBe(10);

    expect((await rpcError(count({ model: 'no-such-model' }))).kind).toBe('NotFound');
    expect((await rpcError(count({ model: 'whetstone-extract-base' }))).fieldErrors[0]?.field).toBe('schema');
  });

  it('when the model is a project id, then its active deployment answers and the record names the project', async () => {
    const project = (await h.client.createProject({ caller: team, name: 'chat-project' })).project!;
    await h.client.createDeployment({ caller: team, projectId: project.id, trainingJobId: decoderJob });
    await eventually(
      async () =>
        (await h.client.listDeployments({ caller: team, projectId: project.id })).deployments[0]?.status ===
        DeploymentStatus.ACTIVE,
    );
    const res = await chat({ model: project.id, messages: user('hi, I am Bob') });
    expect(res.last.model).toBe(decoderJob);
    const { completed } = await outboxOf(h, res.last.responseId);
    expect(completed[0]).toMatchObject({ projectId: project.id, trainingJobId: decoderJob });
  });
});
