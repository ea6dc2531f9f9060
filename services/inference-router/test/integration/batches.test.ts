import {
  ChatBatchKind,
  ChatBatchOutcome,
  ChatBatchStatus,
  FinishReason,
  InferenceSurface,
} from '@whetstone/proto/inference/v1';
import { eventually } from '@whetstone/testing';
import { prismaBatchStore } from '../../src/adapters/prisma-batches';
import { chatRequest, collect, outboxOf } from './chat-support';
import { rpcError, startHarness, team, type Harness } from './harness';

const WORKER = {
  concurrency: 2,
  idleMs: 50,
  leaseMs: 60_000,
  callTimeoutMs: 30_000,
  maxAttempts: 3,
  pricePercent: 50,
};

describe('message batches over real gRPC, Postgres and fake upstreams', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  }, 60_000);
  afterAll(() => h?.close());

  const item = (customId: string, over: Record<string, unknown> = {}) => ({
    customId,
    chat: chatRequest({ surface: InferenceSurface.MESSAGES, model: 'gpt-fake', ...over }),
  });
  // A large batch takes seconds to send and store on a loaded machine: the gateway allows it 3 minutes too.
  const create = async (requests: ReturnType<typeof item>[], caller = team) =>
    (await h.batches.createChatBatch({ caller, requests } as never, { timeoutMs: 180_000 })).batch!;
  const get = async (batchId: string, caller = team) => (await h.batches.getChatBatch({ caller, batchId })).batch!;
  /** Runs the batch worker until the batch has ended. */
  const runToEnd = async (batchId: string) => {
    const worker = h.router.startBatchWorker(WORKER);
    try {
      await eventually(async () => (await get(batchId)).status === ChatBatchStatus.ENDED, 20_000);
    } finally {
      await worker.stop();
    }
    return get(batchId);
  };
  const results = async (batchId: string) => (await h.batches.listChatBatchResults({ caller: team, batchId })).results;
  const setNextAt = (batchId: string, when: string) =>
    h.pool.pool.query(`UPDATE "${h.schema.name}".chat_batch_requests SET next_at = ${when} WHERE batch_id = $1`, [
      batchId,
    ]);

  it('when a batch is made, then it waits for the worker, its results and deletion wait for its end, and each result is the whole reply', async () => {
    const batch = await create([
      item('a'),
      item('b', { model: 'claude-fake', store: false }),
      item('c', { model: 'no-such-model' }),
    ]);
    expect(batch).toMatchObject({ status: ChatBatchStatus.IN_PROGRESS, counts: { processing: 3, succeeded: 0 } });
    expect(batch.endedAt).toBeUndefined();
    expect((await rpcError(results(batch.id))).reason).toBe('BATCH_NOT_ENDED');
    expect((await rpcError(h.batches.deleteChatBatch({ caller: team, batchId: batch.id }))).reason).toBe(
      'BATCH_NOT_ENDED',
    );

    const ended = await runToEnd(batch.id);
    expect(ended.counts).toMatchObject({ processing: 0, succeeded: 2, errored: 1, canceled: 0, expired: 0 });
    expect(ended.endedAt).toBeDefined();
    const [a, b, c] = await results(batch.id);
    expect(a).toMatchObject({ customId: 'a', outcome: ChatBatchOutcome.SUCCEEDED, requestedModel: 'gpt-fake' });
    expect(a!.reply).toMatchObject({ text: 'Echo: HELLO THERE', finishReason: FinishReason.STOP, model: 'gpt-fake' });
    // Stored: the inference id is the response id, minted with the batch; billed once, recorded once.
    expect(a!.reply!.inferenceId).toBe(a!.reply!.responseId);
    const { usage, completed } = await outboxOf(h, a!.reply!.responseId);
    expect(usage).toHaveLength(1);
    // Billed at the batch price: half of what the same call costs made directly (rounded to the micro-credit).
    const direct = (await collect(h.client.chat({ caller: team, ...item('d').chat } as never))).last.usage!;
    expect(usage[0]!.costMicroCredits).toBe((direct.costMicroCredits + 1n) / 2n);
    expect(a!.reply!.usage!.costMicroCredits).toBe(usage[0]!.costMicroCredits);
    expect(completed[0]).toMatchObject({ surface: InferenceSurface.MESSAGES });
    expect(b).toMatchObject({ customId: 'b', outcome: ChatBatchOutcome.SUCCEEDED });
    expect(b!.reply!.inferenceId).toBe('');
    expect(c).toMatchObject({ customId: 'c', outcome: ChatBatchOutcome.ERRORED, error: { kind: 'NotFound' } });
    expect(c!.errorMessage).toContain('no-such-model');

    // A request is found by its response id (a background Response's lookup), for its team only.
    const call = await h.batches.getBatchedCall({ caller: team, responseId: a!.reply!.responseId });
    expect(call).toMatchObject({ batch: { id: batch.id }, started: true, requestedModel: 'gpt-fake' });
    expect(call.result).toMatchObject({ customId: 'a', outcome: ChatBatchOutcome.SUCCEEDED });
    const stranger = { ...team, teamId: 'team-z' };
    const hidden = await rpcError(h.batches.getBatchedCall({ caller: stranger, responseId: a!.reply!.responseId }));
    expect(hidden.reason).toBe('BATCHED_CALL_NOT_FOUND');

    await h.batches.deleteChatBatch({ caller: team, batchId: batch.id });
    expect((await rpcError(get(batch.id))).reason).toBe('BATCH_NOT_FOUND');
  }, 60_000);

  it('when a batch is cancelled, then requests no worker holds end at once and a held one ends when its lease runs out', async () => {
    const batch = await create([item('a'), item('b'), item('c')]);
    // A worker holds the first request (and then dies: it never answers).
    const held = await prismaBatchStore(h.prisma).claim(1, 60_000);
    expect(held.map((c) => [c.batchId, c.position, c.attempts])).toEqual([[batch.id, 0, 1]]);
    const cancelled = (await h.batches.cancelChatBatch({ caller: team, batchId: batch.id })).batch!;
    expect(cancelled).toMatchObject({ status: ChatBatchStatus.CANCELING, counts: { processing: 1, canceled: 2 } });
    expect(cancelled.cancelInitiatedAt).toBeDefined();
    // Its lease runs out: the worker's sweep cancels it instead of running it.
    await setNextAt(batch.id, "now() - interval '1 second'");
    const ended = await runToEnd(batch.id);
    expect(ended.counts).toMatchObject({ processing: 0, canceled: 3, succeeded: 0 });
    expect((await results(batch.id)).map((r) => r.outcome)).toEqual([
      ChatBatchOutcome.CANCELED,
      ChatBatchOutcome.CANCELED,
      ChatBatchOutcome.CANCELED,
    ]);
  }, 60_000);

  it('when a worker dies holding a request, then another runs it after the lease under the same response id', async () => {
    const batch = await create([item('only')]);
    const [held] = await prismaBatchStore(h.prisma).claim(1, 60_000);
    await setNextAt(batch.id, "now() - interval '1 second'");
    const ended = await runToEnd(batch.id);
    expect(ended.counts).toMatchObject({ succeeded: 1 });
    const [only] = await results(batch.id);
    expect(only!.reply!.responseId).toBe(held!.responseId);
    const attempts = await h.pool.pool.query<{ attempts: number }>(
      `SELECT attempts FROM "${h.schema.name}".chat_batch_requests WHERE batch_id = $1`,
      [batch.id],
    );
    expect(attempts.rows[0]!.attempts).toBe(2);
  }, 60_000);

  it('when a batch holds embeddings requests, then each runs as EmbedTexts on a model-server, billed once under its minted id', async () => {
    const embedItem = (customId: string, modelId: string, texts: string[]) => ({
      customId,
      embed: { modelId, texts, dimensions: 0 },
      requestMetadata: { encoding_format: 'base64' },
    });
    const batch = await create([
      embedItem('two', 'whetstone-extract-base', ['My card has not arrived.', 'Refund my order.']),
      embedItem('chat-model', 'gpt-fake', ['x']),
    ] as never);
    // A worker dies holding the first: the rerun answers under the same id.
    const [held] = await prismaBatchStore(h.prisma).claim(1, 60_000);
    expect(held).toMatchObject({ customId: 'two', call: 'embed' });
    await setNextAt(batch.id, "now() - interval '1 second'");
    const ended = await runToEnd(batch.id);
    expect(ended.counts).toMatchObject({ succeeded: 1, errored: 1 });
    const [two, chatModel] = await results(batch.id);
    expect(two).toMatchObject({
      customId: 'two',
      outcome: ChatBatchOutcome.SUCCEEDED,
      responseId: held!.responseId,
      requestedModel: 'whetstone-extract-base',
      requestMetadata: { encoding_format: 'base64' },
      embeddings: { model: 'whetstone-extract-base', dimensions: 228 },
    });
    expect(two!.reply).toBeUndefined();
    const vectors = two!.embeddings!.embeddings.map((e) => e.values);
    expect(vectors).toHaveLength(2);
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 4);
    const { usage } = await outboxOf(h, held!.responseId);
    expect(usage).toHaveLength(1);
    expect(Number(usage[0]!.inputTokens)).toBe(Number(two!.embeddings!.inputTokens));
    expect(chatModel).toMatchObject({ outcome: ChatBatchOutcome.ERRORED });
    expect(chatModel!.errorMessage).toMatch(/embeddings come from extraction models|gpt-fake/);

    const call = await h.batches.getBatchedCall({ caller: team, responseId: held!.responseId });
    expect(call).toMatchObject({
      requestedModel: 'whetstone-extract-base',
      requestMetadata: { encoding_format: 'base64' },
    });
  }, 60_000);

  it('when a background Response runs on the batch worker, then it is billed as the direct call it is, not at the batch price', async () => {
    const made = (
      await h.batches.createChatBatch({
        caller: team,
        requests: [item('response')],
        kind: ChatBatchKind.BACKGROUND_RESPONSE,
      } as never)
    ).batch!;
    await runToEnd(made.id);
    const [result] = await results(made.id);
    const { usage } = await outboxOf(h, result!.reply!.responseId);
    const direct = (await collect(h.client.chat({ caller: team, ...item('d').chat } as never))).last.usage!;
    expect(usage[0]!.costMicroCredits).toBe(direct.costMicroCredits);
  }, 60_000);

  it('when an OpenAI batch comes with input file errors, then it is stored ended with no requests and keeps them', async () => {
    const errors = [
      { code: 'invalid_json_line', message: 'This line is not valid JSON.', line: 2, param: '' },
      { code: 'invalid_request', message: 'body.model: Required', line: 3, param: 'body.model' },
    ];
    const source = { inputFileId: '0195f3a0-0000-7000-8000-000000000001', endpoint: '/v1/chat/completions' };
    const made = (
      await h.batches.createChatBatch({
        caller: team,
        requests: [],
        kind: ChatBatchKind.OPENAI_BATCH,
        source: { ...source, metadata: { run: 'x' }, errors },
      })
    ).batch!;
    expect(made).toMatchObject({ status: ChatBatchStatus.ENDED, counts: { processing: 0, succeeded: 0 } });
    expect(made.endedAt).toEqual(made.createdAt);
    // Read back from Postgres: the errors are kept with the batch, which holds nothing to run.
    const read = await get(made.id);
    expect(read.status).toBe(ChatBatchStatus.ENDED);
    expect(read.source).toMatchObject({ ...source, metadata: { run: 'x' }, errors });
    const held = await h.pool.pool.query(
      `SELECT count(*)::int AS n FROM "${h.schema.name}".chat_batch_requests WHERE batch_id = $1`,
      [made.id],
    );
    expect(held.rows[0].n).toBe(0);
    expect(await results(made.id)).toEqual([]);
    // Errors and requests together are refused.
    const both = await rpcError(
      h.batches.createChatBatch({
        caller: team,
        requests: [item('a')],
        kind: ChatBatchKind.OPENAI_BATCH,
        source: { ...source, metadata: {}, errors },
      } as never),
    );
    expect(both).toMatchObject({ kind: 'InvalidArgument' });
  }, 60_000);

  it("when a batch holds more than 10,000 requests, then all are stored in order, up to OpenAI's 50,000", async () => {
    const many = Array.from({ length: 12_001 }, (_, i) => item(`m${i}`));
    const made = await create(many);
    expect(made.counts).toMatchObject({ processing: 12_001 });
    const stored = await h.pool.pool.query(
      `SELECT count(*)::int AS n, max(position)::int AS last FROM "${h.schema.name}".chat_batch_requests WHERE batch_id = $1`,
      [made.id],
    );
    expect(stored.rows[0]).toEqual({ n: 12_001, last: 12_000 });
    await h.batches.cancelChatBatch({ caller: team, batchId: made.id });
    const over = await rpcError(create(Array.from({ length: 50_001 }, (_, i) => item(`o${i}`))));
    expect(over).toMatchObject({ kind: 'InvalidArgument' });
    expect(over.message).toContain('1 to 50000 requests');
  }, 120_000);

  it('when a worker renews its lease, then only its own claim of a pending request is pushed ahead', async () => {
    const batch = await create([item('only')]);
    const store = prismaBatchStore(h.prisma);
    const [held] = await store.claim(1, 1_000);
    expect(held).toMatchObject({ batchId: batch.id, kind: 'messages', attempts: 1 });
    const nextAt = async () =>
      (
        await h.pool.pool.query<{ next_at: Date }>(
          `SELECT next_at FROM "${h.schema.name}".chat_batch_requests WHERE batch_id = $1`,
          [batch.id],
        )
      ).rows[0]!.next_at.getTime();
    expect(await store.renewLease(batch.id, 0, 1, 60_000)).toBe(true);
    expect(await nextAt()).toBeGreaterThan(Date.now() + 50_000);
    // A later claim (a second attempt) holds it now: the first worker's renewal is refused.
    expect(await store.renewLease(batch.id, 0, 2, 60_000)).toBe(false);
    await store.finish(batch.id, 0, 'errored', new Uint8Array(), new Date());
    expect(await store.renewLease(batch.id, 0, 1, 60_000)).toBe(false);
  }, 60_000);

  it('when a batch expires, then its waiting requests end as expired', async () => {
    const batch = await create([item('a'), item('b')]);
    await h.pool.pool.query(
      `UPDATE "${h.schema.name}".chat_batches SET expires_at = now() - interval '1 second' WHERE id = $1`,
      [batch.id],
    );
    const ended = await runToEnd(batch.id);
    expect(ended.counts).toMatchObject({ expired: 2, processing: 0 });
  }, 60_000);

  it('when batches are listed, another team asks or custom ids repeat, then pages, NotFound and InvalidArgument follow', async () => {
    const lister = { teamId: 'team-batches', keyId: 'key-b', userId: 'user-b' };
    const made = [];
    for (const n of [1, 2, 3]) made.push((await create([item(`r${n}`)], lister)).id);
    const list = async (over: Record<string, unknown>) =>
      h.batches.listChatBatches({ caller: lister, limit: 2, afterId: '', beforeId: '', ...over });
    const first = await list({});
    expect(first.batches.map((b) => b.id)).toEqual([made[2], made[1]]);
    expect(first.hasMore).toBe(true);
    const next = await list({ afterId: made[1] });
    expect([next.batches.map((b) => b.id), next.hasMore]).toEqual([[made[0]], false]);
    const newer = await list({ beforeId: made[0] });
    expect(newer.batches.map((b) => b.id)).toEqual([made[2], made[1]]);
    expect((await rpcError(list({ afterId: made[0], beforeId: made[2] }))).kind).toBe('InvalidArgument');

    expect((await rpcError(get(made[0]!))).reason).toBe('BATCH_NOT_FOUND');
    expect((await rpcError(h.batches.cancelChatBatch({ caller: team, batchId: made[0]! }))).kind).toBe('NotFound');
    expect((await rpcError(get('not-a-uuid', lister))).kind).toBe('NotFound');
    const dup = await rpcError(create([item('same'), item('same')]));
    expect(dup).toMatchObject({ kind: 'InvalidArgument' });
    expect(dup.fieldErrors[0]?.field).toBe('requests[1].custom_id');
  }, 60_000);
});
