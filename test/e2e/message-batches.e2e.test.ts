import Anthropic from '@anthropic-ai/sdk';
import { eventually } from '@whetstone/testing';
import OpenAI from 'openai';
import { ANTHROPIC_MODEL, OPENAI_MODEL, startWithUpstreams, upstreamEnv, type UpstreamSystem } from './compat-helpers';
import { signUpWithKey } from './system';

/**
 * OpenAI's background Responses run on the same batch worker; they are tested here through the `openai` client.
 *
 * Anthropic's Message Batches through the `@anthropic-ai/sdk` client against the whole system (`pnpm start`'s
 * processes, fake upstreams on loopback): create, retrieve until ended, list, results as JSON Lines, cancel,
 * delete, and the errors a client can cause.
 */
describe('message batches (Anthropic client) and background responses (openai client), end to end', () => {
  let running: UpstreamSystem;
  let anthropic: Anthropic;
  const user = (content: string) => [{ role: 'user' as const, content }];
  const params = (content: string, model = ANTHROPIC_MODEL) => ({ model, max_tokens: 32, messages: user(content) });
  const ended = (id: string) =>
    eventually(async () => {
      const batch = await anthropic.messages.batches.retrieve(id);
      return batch.processing_status === 'ended' && batch;
    }, 60_000);

  beforeAll(async () => {
    // A short lease, so that requests a killed worker held run again within the test.
    running = await startWithUpstreams('batches', (o, a) => ({ ...upstreamEnv(o, a), BATCH_LEASE_SECONDS: '10' }));
    anthropic = new Anthropic({ apiKey: running.key, baseURL: running.system.baseUrl, maxRetries: 2 });
  }, 300_000);

  afterAll(async () => running?.stop(), 60_000);

  it('when a batch is created, then it is answered in the background and its results read back in request order', async () => {
    const created = await anthropic.messages.batches.create({
      requests: [
        {
          custom_id: 'greeting',
          params: {
            ...params('good day'),
            store: true,
            metadata: { user_id: 'u-42' },
          } as Anthropic.MessageCreateParamsNonStreaming,
        },
        { custom_id: 'openai-model', params: params('hello there', OPENAI_MODEL) },
        { custom_id: 'unknown-model', params: params('x', 'no-such-model') },
      ],
    });
    expect(created).toMatchObject({
      type: 'message_batch',
      processing_status: 'in_progress',
      request_counts: { processing: 3, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      results_url: null,
      archived_at: null,
      cancel_initiated_at: null,
    });
    expect(created.id).toMatch(/^msgbatch_/);
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(24 * 3600 * 1000);

    const batch = await ended(created.id);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 2, errored: 1, canceled: 0, expired: 0 });
    expect(batch.ended_at).not.toBeNull();
    expect(batch.results_url).toMatch(new RegExp(`/v1/messages/batches/${created.id}/results$`));

    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const line of await anthropic.messages.batches.results(created.id)) results.push(line);
    expect(results.map((r) => [r.custom_id, r.result.type])).toEqual([
      ['greeting', 'succeeded'],
      ['openai-model', 'succeeded'],
      ['unknown-model', 'errored'],
    ]);
    const greeting = results[0]!.result as Anthropic.Messages.MessageBatchSucceededResult;
    expect(greeting.message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: ANTHROPIC_MODEL,
      content: [{ type: 'text', text: 'Echo: GOOD DAY' }],
      stop_reason: 'end_turn',
      usage: { output_tokens: expect.any(Number) },
    });
    const failed = results[2]!.result as Anthropic.Messages.MessageBatchErroredResult;
    expect(failed.error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(failed.error.error.message).toContain('no-such-model');

    // A stored request is an inference like any Messages call: its record reads back under the message's id.
    const inferenceId = greeting.message.id.replace(/^msg_/, '');
    const record = await fetch(`${running.system.baseUrl}/inferences/${inferenceId}`, {
      headers: { 'x-api-key': running.key },
    });
    expect(record.status).toBe(200);
    // Anthropic's metadata.user_id is kept as the record's metadata.
    const stored = { surface: 'messages', model_id: ANTHROPIC_MODEL, metadata: { user_id: 'u-42' } };
    expect(await record.json()).toMatchObject(stored);

    const listed: string[] = [];
    for await (const b of anthropic.messages.batches.list({ limit: 1 })) listed.push(b.id);
    expect(listed).toContain(created.id);

    expect(await anthropic.messages.batches.delete(created.id)).toEqual({
      id: created.id,
      type: 'message_batch_deleted',
    });
    await expect(anthropic.messages.batches.retrieve(created.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  }, 120_000);

  it('when a batch is cancelled, then it ends with every request answered or canceled', async () => {
    const created = await anthropic.messages.batches.create({
      requests: Array.from({ length: 40 }, (_, i) => ({ custom_id: `r-${i}`, params: params(`call ${i}`) })),
    });
    const cancelled = await anthropic.messages.batches.cancel(created.id);
    expect(cancelled.cancel_initiated_at).not.toBeNull();
    expect(['canceling', 'ended']).toContain(cancelled.processing_status);
    const batch = await ended(created.id);
    expect(batch.request_counts.succeeded + batch.request_counts.canceled).toBe(40);
    const types = new Set<string>();
    for await (const line of await anthropic.messages.batches.results(created.id)) types.add(line.result.type);
    expect([...types].every((t) => t === 'succeeded' || t === 'canceled')).toBe(true);
  }, 120_000);

  it('when a batch body is larger than an ordinary request may be, then it is taken up to its own limit (MAX_BATCH_BODY_BYTES)', async () => {
    // 12 requests of 200,000 characters: 2.3 MB, over the 1 MiB of MAX_JSON_BODY_BYTES, under the batch's 32 MiB.
    const long = 'word '.repeat(40_000);
    const requests = Array.from({ length: 12 }, (_, i) => ({ custom_id: `big-${i}`, params: params(`${i} ${long}`) }));
    const created = await anthropic.messages.batches.create({ requests });
    expect((await ended(created.id)).request_counts).toMatchObject({ succeeded: 12, errored: 0 });
    // An ordinary request of that size is still refused.
    const single = await fetch(`${running.system.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': running.key, 'content-type': 'application/json' },
      body: JSON.stringify({ ...params(long.repeat(6)) }),
    });
    expect(single.status).toBe(413);
    expect(await single.json()).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
  }, 120_000);

  it('when a batch is malformed or another team asks, then the error says so in the Anthropic envelope', async () => {
    const bad = (requests: unknown) =>
      anthropic.messages.batches.create({ requests } as never).then(
        () => {
          throw new Error('expected the batch to be refused');
        },
        (e: unknown) => e as InstanceType<typeof Anthropic.APIError>,
      );
    const badId = await bad([{ custom_id: 'has space', params: params('x') }]);
    expect(badId.status).toBe(422);
    expect(badId.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(JSON.stringify(badId.error)).toContain('requests.0.custom_id');
    const dup = await bad([
      { custom_id: 'same', params: params('x') },
      { custom_id: 'same', params: params('y') },
    ]);
    expect(dup.status).toBe(422);
    expect(JSON.stringify(dup.error)).toContain('requests[1].custom_id');
    const streaming = await bad([{ custom_id: 'a', params: { ...params('x'), stream: true } }]);
    expect(JSON.stringify(streaming.error)).toContain('requests[0].params.stream');
    expect((await bad([])).status).toBe(422);
    const noTokens = await bad([{ custom_id: 'a', params: { model: ANTHROPIC_MODEL, messages: user('x') } }]);
    expect(JSON.stringify(noTokens.error)).toContain('max_tokens');

    const mine = await anthropic.messages.batches.create({ requests: [{ custom_id: 'a', params: params('x') }] });
    const other = await signUpWithKey(running.system.baseUrl, 'batches-other');
    const stranger = new Anthropic({ apiKey: other.key, baseURL: running.system.baseUrl, maxRetries: 0 });
    await expect(stranger.messages.batches.retrieve(mine.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(stranger.messages.batches.cancel(mine.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(stranger.messages.batches.delete(mine.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(anthropic.messages.batches.retrieve('msgbatch_nope')).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const cursor = await fetch(`${running.system.baseUrl}/v1/messages/batches?after_id=nope`, {
      headers: { 'x-api-key': running.key },
    });
    expect(cursor.status).toBe(422);
    expect(await cursor.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  }, 120_000);

  it('when a Response is made with background: true, then it is queued at once, polled to its end, cancelled and deleted as OpenAI', async () => {
    const openai = running.openai;
    const settled = (id: string) =>
      eventually(async () => {
        const r = await openai.responses.retrieve(id);
        return !['queued', 'in_progress'].includes(r.status ?? '') && r;
      }, 60_000);
    const queued = await openai.responses.create({
      model: OPENAI_MODEL,
      input: 'hello there',
      background: true,
      metadata: { run: 'bg' },
    });
    expect(queued).toMatchObject({ status: 'queued', background: true, model: OPENAI_MODEL, output: [] });
    expect(queued.metadata).toEqual({ run: 'bg' });
    const done = await settled(queued.id);
    expect(done).toMatchObject({
      status: 'completed',
      background: true,
      model: OPENAI_MODEL,
      output_text: 'Echo: HELLO THERE',
    });
    expect(done.metadata).toEqual({ run: 'bg' });
    // Stored, so it can be continued; cancelling it now changes nothing.
    const next = await openai.responses.create({
      model: OPENAI_MODEL,
      input: 'again',
      previous_response_id: queued.id,
    });
    expect(next.status).toBe('completed');
    expect((await openai.responses.cancel(queued.id)).status).toBe('completed');

    const failed = await settled(
      (await openai.responses.create({ model: 'no-such-model', input: 'x', background: true })).id,
    );
    expect(failed.status).toBe('failed');
    expect(failed.error?.message).toContain('no-such-model');

    // Cancelled before a worker takes it, or finished first: either way it settles, never stays queued.
    const raced = await openai.responses.create({ model: OPENAI_MODEL, input: 'race', background: true });
    const cancelled = await openai.responses.cancel(raced.id);
    expect(['cancelled', 'in_progress', 'completed']).toContain(cancelled.status);
    expect(['cancelled', 'completed']).toContain((await settled(raced.id)).status);

    const refused = (body: Record<string, unknown>) =>
      openai.responses.create({ model: OPENAI_MODEL, input: 'x', background: true, ...body } as never).then(
        () => null,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
    expect((await refused({ store: false }))?.error).toMatchObject({ param: 'store' });
    expect((await refused({ stream: true }))?.error).toMatchObject({ param: 'stream' });
    await expect(openai.responses.cancel(next.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    // Not a message batch: the Anthropic list never shows it.
    for await (const b of anthropic.messages.batches.list()) expect(b.id).not.toContain(queued.id.slice(5));

    await openai.responses.delete(queued.id);
    await expect(openai.responses.retrieve(queued.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  }, 180_000);

  it('when the router is killed while its worker holds requests, then after the restart every request succeeds once', async () => {
    // The first four calls reach the upstream and never come back: the worker's four slots hold them.
    running.fakeAnthropic.behave({ kind: 'hang' }, 4);
    const before = running.fakeAnthropic.requests.length;
    const created = await anthropic.messages.batches.create({
      requests: Array.from({ length: 12 }, (_, i) => ({ custom_id: `k-${i}`, params: params(`kill ${i}`) })),
    });
    await eventually(async () => running.fakeAnthropic.requests.length - before >= 4, 30_000);
    for (const pid of running.system.pids('inference-router')) process.kill(pid, 'SIGKILL');
    // pnpm start's supervisor brings the router back; the held requests run again once their lease has run out.
    const batch = await ended(created.id);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 12, errored: 0, canceled: 0, expired: 0 });
    const ids: string[] = [];
    for await (const line of await anthropic.messages.batches.results(created.id)) ids.push(line.custom_id);
    expect(ids).toEqual(Array.from({ length: 12 }, (_, i) => `k-${i}`));
    // The four held calls were sent twice (the dead worker's and the rerun), the rest once.
    expect(running.fakeAnthropic.requests.length - before).toBe(16);
  }, 180_000);
});
