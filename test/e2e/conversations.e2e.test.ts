import { eventually } from '@whetstone/testing';
import OpenAI, { toFile } from 'openai';
import { OPENAI_MODEL, startWithUpstreams, type UpstreamSystem } from './compat-helpers';
import { signUpWithKey } from './system';

/**
 * OpenAI's Conversations API through the `openai` client against the whole system (`pnpm start`'s processes, a fake
 * upstream on loopback): a conversation's items are the context of a Responses call made with `conversation`, and
 * the call's input and output are appended to it, streamed or not.
 */
describe('conversations (openai client), end to end', () => {
  let running: UpstreamSystem;
  let openai: OpenAI;
  /** The texts of a conversation's items, oldest first. */
  const texts = async (id: string) => {
    const out: string[] = [];
    for await (const item of openai.conversations.items.list(id, { order: 'asc' })) {
      if (item.type === 'message')
        out.push(`${item.role}: ${item.content.map((c) => ('text' in c ? c.text : '')).join('')}`);
      else out.push(item.type);
    }
    return out;
  };
  /** The messages the upstream saw on its last call. */
  const lastUpstreamMessages = () =>
    (running.fakeOpenAI.requests.at(-1)!.body.messages as { role: string; content: string }[]).map(
      (m) => `${m.role}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`,
    );

  beforeAll(async () => {
    running = await startWithUpstreams('conversations');
    openai = running.openai;
  }, 300_000);

  afterAll(async () => running?.stop(), 60_000);

  it('when a Response names a conversation, then its items are the context and the call is appended, streamed or not', async () => {
    const conversation = await openai.conversations.create({
      items: [{ role: 'user', content: 'my name is Ada' }],
      metadata: { topic: 'intro' },
    });
    expect(conversation).toMatchObject({ object: 'conversation', metadata: { topic: 'intro' } });
    expect(conversation.id).toMatch(/^conv_/);
    expect(await openai.conversations.retrieve(conversation.id)).toEqual(conversation);

    const answered = await openai.responses.create({
      model: OPENAI_MODEL,
      input: 'hello there',
      conversation: conversation.id,
    });
    expect(answered).toMatchObject({ status: 'completed', output_text: 'Echo: HELLO THERE' });
    expect(answered.conversation).toEqual({ id: conversation.id });
    expect(lastUpstreamMessages()).toEqual(['user: my name is Ada', 'user: hello there']);
    expect(await texts(conversation.id)).toEqual([
      'user: my name is Ada',
      'user: hello there',
      'assistant: Echo: HELLO THERE',
    ]);

    const stream = await openai.responses.create({
      model: OPENAI_MODEL,
      input: [{ role: 'user', content: 'and again' }],
      conversation: { id: conversation.id },
      stream: true,
    });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response;
    expect(completed?.conversation).toEqual({ id: conversation.id });
    expect(lastUpstreamMessages()).toEqual([
      'user: my name is Ada',
      'user: hello there',
      'assistant: Echo: HELLO THERE',
      'user: and again',
    ]);
    expect((await texts(conversation.id)).slice(3)).toEqual(['user: and again', 'assistant: Echo: AND AGAIN']);

    // Read back later, a stored Response still names its conversation, as its inference record does.
    const readBack = await eventually(async () =>
      openai.responses.retrieve(answered.id).catch((err: unknown) => {
        if (err instanceof OpenAI.NotFoundError) return false;
        throw err;
      }),
    );
    expect(readBack).toMatchObject({ id: answered.id, conversation: { id: conversation.id } });
    const record = await fetch(`${running.system.baseUrl}/inferences/${answered.id.replace(/^resp_/, '')}`, {
      headers: { authorization: `Bearer ${running.key}` },
    });
    expect(await record.json()).toMatchObject({ conversation_id: conversation.id });
    const alone = await openai.responses.create({ model: OPENAI_MODEL, input: 'no conversation' });
    const aloneBack = await eventually(async () =>
      openai.responses.retrieve(alone.id).catch((err: unknown) => {
        if (err instanceof OpenAI.NotFoundError) return false;
        throw err;
      }),
    );
    expect((aloneBack as OpenAI.Responses.Response).conversation).toBeNull();
  }, 60_000);

  it('when items are added, read, listed, deleted and the conversation updated and deleted, then each answers as OpenAI', async () => {
    const conversation = await openai.conversations.create({});
    expect(conversation.metadata).toEqual({});
    const added = await openai.conversations.items.create(conversation.id, {
      items: [
        { role: 'user', content: 'what is the weather?' },
        { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
      ],
    });
    expect(added.data.map((i) => i.type)).toEqual(['message', 'function_call', 'function_call_output']);
    const [message, call] = added.data;
    expect(call).toMatchObject({ call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' });
    expect(await openai.conversations.items.retrieve(message!.id!, { conversation_id: conversation.id })).toEqual(
      message,
    );

    const newestFirst = await openai.conversations.items.list(conversation.id, { limit: 2 });
    expect(newestFirst.data.map((i) => i.type)).toEqual(['function_call_output', 'function_call']);
    expect(newestFirst.has_more).toBe(true);
    const rest = await openai.conversations.items.list(conversation.id, { limit: 2, after: newestFirst.data[1]!.id });
    expect(rest.data.map((i) => i.id)).toEqual([message!.id]);

    const after = await openai.conversations.items.delete(call!.id!, { conversation_id: conversation.id });
    expect(after.id).toBe(conversation.id);
    expect(await texts(conversation.id)).toEqual(['user: what is the weather?', 'function_call_output']);

    const updated = await openai.conversations.update(conversation.id, { metadata: { stage: 'done' } });
    expect(updated.metadata).toEqual({ stage: 'done' });
    expect(await openai.conversations.delete(conversation.id)).toEqual({
      id: conversation.id,
      object: 'conversation.deleted',
      deleted: true,
    });
    await expect(openai.conversations.retrieve(conversation.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  }, 60_000);

  it('when inference-history and the dataset service are killed, then an acknowledged conversation and file read back after the restart', async () => {
    const conversation = await openai.conversations.create({
      items: [{ role: 'user', content: 'kept across a kill' }],
    });
    await openai.responses.create({ model: OPENAI_MODEL, input: 'still here', conversation: conversation.id });
    const file = await openai.files.create({
      file: await toFile(Buffer.from('{"kept":true}'), 'k.jsonl'),
      purpose: 'batch',
    });
    const services = ['inference-history', 'dataset'];
    const before = services.flatMap((service) => running.system.pids(service));
    expect(before.length).toBeGreaterThanOrEqual(2);
    for (const pid of before) process.kill(pid, 'SIGKILL');
    // pnpm start's supervisor brings both back as new processes; reads fail until it has.
    const restarted = (service: string) => running.system.pids(service).some((pid) => !before.includes(pid));
    await eventually(async () => services.every(restarted), 60_000, 100);
    const items = await eventually(async () => (await texts(conversation.id).catch(() => null)) ?? false, 60_000);
    expect(items).toEqual(['user: kept across a kill', 'user: still here', 'assistant: Echo: STILL HERE']);
    const content = await eventually(
      async () =>
        (await openai.files
          .content(file.id)
          .then((r) => r.text())
          .catch(() => null)) ?? false,
      60_000,
    );
    expect(content).toBe('{"kept":true}');
  }, 120_000);

  it('when a conversation is unknown, another team asks, or a request mixes it wrongly, then the error says so in the OpenAI envelope', async () => {
    const refused = (p: Promise<unknown>) =>
      p.then(
        () => {
          throw new Error('expected a refusal');
        },
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
    const mine = await openai.conversations.create({ items: [{ role: 'user', content: 'private' }] });
    const unknown = await refused(
      openai.responses.create({ model: OPENAI_MODEL, input: 'x', conversation: 'conv_nope' }),
    );
    expect(unknown).toMatchObject({ status: 404, param: 'conversation' });
    const both = await refused(
      openai.responses.create({
        model: OPENAI_MODEL,
        input: 'x',
        conversation: mine.id,
        previous_response_id: 'resp_x',
      }),
    );
    expect(both).toMatchObject({ status: 422, param: 'conversation' });
    const background = await refused(
      openai.responses.create({ model: OPENAI_MODEL, input: 'x', conversation: mine.id, background: true }),
    );
    expect(background).toMatchObject({ status: 422, param: 'conversation' });
    // What the conversation could not keep is refused before the call is made (and billed).
    const calls = running.fakeOpenAI.requests.length;
    const emptyMessage = await refused(
      openai.responses.create({
        model: OPENAI_MODEL,
        input: [{ role: 'user', content: [] }],
        conversation: mine.id,
      }),
    );
    expect(emptyMessage).toMatchObject({ status: 422, param: 'input.0.content' });
    expect(running.fakeOpenAI.requests.length).toBe(calls);
    const noPart = await refused(
      openai.conversations.items.create(mine.id, { items: [{ role: 'user', content: [] }] }),
    );
    expect(noPart).toMatchObject({ status: 422, param: 'items.0.content' });
    const tooMany = await refused(
      openai.conversations.create({ items: Array.from({ length: 21 }, () => ({ role: 'user', content: 'x' })) }),
    );
    expect(tooMany).toMatchObject({ status: 422, param: 'items' });
    const badItem = await refused(openai.conversations.items.retrieve('msg_nope', { conversation_id: mine.id }));
    expect(badItem.status).toBe(404);

    const other = await signUpWithKey(running.system.baseUrl, 'conversations-other');
    const stranger = new OpenAI({ apiKey: other.key, baseURL: `${running.system.baseUrl}/v1`, maxRetries: 0 });
    await expect(stranger.conversations.retrieve(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.conversations.items.list(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.conversations.delete(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const theirs = await refused(stranger.responses.create({ model: OPENAI_MODEL, input: 'x', conversation: mine.id }));
    expect(theirs).toMatchObject({ status: 404, param: 'conversation' });
    expect(await texts(mine.id)).toEqual(['user: private']);
  }, 60_000);
});
