import OpenAI from 'openai';
import { grantCredits, OPENAI_MODEL, startWithUpstreams, type UpstreamSystem } from './compat-helpers';
import { signUpWithKey, type RunningSystem } from './system';

/**
 * Stored Responses calls read back and continued through the `openai` client (`responses.retrieve`,
 * `previous_response_id`), against the whole system started as `pnpm start` does, with a fake
 * OpenAI-compatible upstream on loopback recording what the router sends it.
 */
describe('stored responses and chat completions: retrieve, list and previous_response_id, end to end', () => {
  let running: UpstreamSystem;
  let system: RunningSystem;
  let key: string;
  let openai: OpenAI;
  let fakeOpenAI: UpstreamSystem['fakeOpenAI'];

  beforeAll(async () => {
    running = await startWithUpstreams('stored-responses');
    ({ system, key, openai, fakeOpenAI } = running);
  }, 300_000);

  afterAll(async () => running?.stop(), 60_000);

  it('when a stored response is continued by previous_response_id, then the upstream gets the whole conversation, and retrieve returns it', async () => {
    const first = await openai.responses.create({
      model: OPENAI_MODEL,
      instructions: 'answer briefly',
      input: 'first question',
      store: true,
    });
    const before = fakeOpenAI.requests.length;
    const second = await openai.responses.create({
      model: OPENAI_MODEL,
      input: 'second question',
      previous_response_id: first.id,
      store: true,
    });
    expect(second.output_text).toBe('Echo: SECOND QUESTION');
    expect(fakeOpenAI.requests[before]!.body.messages).toEqual([
      { role: 'system', content: 'answer briefly' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'Echo: FIRST QUESTION' },
      { role: 'user', content: 'second question' },
    ]);
    // A chain: the third turn inherits both earlier ones; its own instructions replace the inherited ones.
    const third = await openai.responses
      .stream({
        model: OPENAI_MODEL,
        instructions: 'be formal',
        input: 'third',
        previous_response_id: second.id,
        store: true,
      })
      .finalResponse();
    expect(third.output_text).toBe('Echo: THIRD');
    expect(fakeOpenAI.requests.at(-1)!.body.messages).toEqual([
      { role: 'system', content: 'be formal' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'Echo: FIRST QUESTION' },
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: 'Echo: SECOND QUESTION' },
      { role: 'user', content: 'third' },
    ]);

    // Its input items: every turn it was answered from, the inherited ones included; pages by cursor.
    const items = await openai.responses.inputItems.list(third.id, { order: 'asc' });
    const texts = items.data.map((i) =>
      i.type === 'message' ? i.content.map((c) => ('text' in c ? c.text : '')).join('') : i.type,
    );
    expect(texts).toEqual([
      'first question',
      'Echo: FIRST QUESTION',
      'second question',
      'Echo: SECOND QUESTION',
      'third',
    ]);
    const paged: string[] = [];
    for await (const item of openai.responses.inputItems.list(third.id, { limit: 2 })) paged.push(item.id!);
    expect(paged).toEqual(items.data.map((i) => i.id).reverse());

    const retrieved = await openai.responses.retrieve(second.id);
    expect(retrieved).toMatchObject({
      id: second.id,
      object: 'response',
      status: 'completed',
      model: OPENAI_MODEL,
      output_text: 'Echo: SECOND QUESTION',
      usage: { input_tokens: second.usage!.input_tokens, output_tokens: second.usage!.output_tokens },
    });
    expect(retrieved.output).toEqual(second.output);
  });

  it('when a function call is answered by previous_response_id and a function_call_output, then the call and its output reach the upstream', async () => {
    const tools = [
      {
        type: 'function' as const,
        name: 'lookup',
        parameters: { type: 'object', properties: { text: { type: 'string' } } },
        strict: false,
      },
    ];
    const call = await openai.responses.create({ model: OPENAI_MODEL, input: 'find it', tools, store: true });
    const fn = call.output.find((o) => o.type === 'function_call');
    expect(fn).toMatchObject({ name: 'lookup', arguments: JSON.stringify({ text: 'find it' }) });
    const answer = await openai.responses.create({
      model: OPENAI_MODEL,
      previous_response_id: call.id,
      input: [{ type: 'function_call_output', call_id: fn!.call_id, output: 'found: 42' }],
      tools,
      store: true,
    });
    expect(answer.output_text).toBe('Tool result: found: 42');
    const sent = fakeOpenAI.requests.at(-1)!.body.messages as Record<string, unknown>[];
    expect(sent.slice(-2)).toMatchObject([
      { role: 'assistant', tool_calls: [{ id: fn!.call_id, function: { name: 'lookup' } }] },
      { role: 'tool', tool_call_id: fn!.call_id, content: 'found: 42' },
    ]);
    expect((await openai.responses.inputItems.list(answer.id, { order: 'asc' })).data).toMatchObject([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'find it' }] },
      { type: 'function_call', call_id: fn!.call_id, name: 'lookup', arguments: fn!.arguments },
      { type: 'function_call_output', call_id: fn!.call_id, output: 'found: 42' },
    ]);
    // History shows the turns with their tool calls.
    const record = (await (
      await fetch(`${system.baseUrl}/inferences/${answer.id.slice('resp_'.length)}`, {
        headers: { 'x-api-key': key },
      })
    ).json()) as { messages: Record<string, unknown>[] };
    expect(record.messages).toEqual([
      { role: 'user', content: 'find it' },
      { role: 'assistant', content: '', tool_calls: [{ id: fn!.call_id, name: 'lookup', arguments: fn!.arguments }] },
      { role: 'tool', content: 'found: 42', tool_call_id: fn!.call_id },
    ]);
  });

  it('when an extraction model answered a stored response, then retrieve and a continuation see its JSON result as the reply', async () => {
    const extraction = await openai.responses.create({
      model: 'whetstone-extract-base',
      input: 'Ada Lovelace met Charles Babbage in London.',
      store: true,
      // @ts-expect-error Whetstone's extension field
      schema: { entities: ['person'] },
    });
    expect(JSON.parse(extraction.output_text)).toHaveProperty('entities');
    const retrieved = await openai.responses.retrieve(extraction.id);
    expect(retrieved.output_text).toBe(extraction.output_text);
    const before = fakeOpenAI.requests.length;
    await openai.responses.create({
      model: OPENAI_MODEL,
      input: 'summarise that',
      previous_response_id: extraction.id,
    });
    expect(fakeOpenAI.requests[before]!.body.messages).toEqual([
      { role: 'user', content: 'Ada Lovelace met Charles Babbage in London.' },
      { role: 'assistant', content: extraction.output_text },
      { role: 'user', content: 'summarise that' },
    ]);
  });

  it('when a stored chat completion is retrieved, then it and its messages read back as they were', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object' } } }];
    const messages = [
      { role: 'system' as const, content: 'be brief' },
      { role: 'user' as const, content: 'find it' },
    ];
    const called = await openai.chat.completions.create({ model: OPENAI_MODEL, messages, tools, store: true });
    const call = called.choices[0]!.message.tool_calls![0]!;
    const answered = await openai.chat.completions.create({
      model: OPENAI_MODEL,
      messages: [
        ...messages,
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: 'found: 42' },
      ],
      store: true,
    });
    expect(await openai.chat.completions.retrieve(called.id)).toMatchObject({
      id: called.id,
      object: 'chat.completion',
      model: OPENAI_MODEL,
      choices: [{ message: { content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }],
      usage: called.usage,
    });
    expect((await openai.chat.completions.retrieve(answered.id)).choices[0]!.message.content).toBe(
      'Tool result: found: 42',
    );
    const listed = await openai.chat.completions.messages.list(answered.id);
    expect(listed.data.map((m) => [m.role, m.content])).toEqual([
      ['system', 'be brief'],
      ['user', 'find it'],
      ['assistant', null],
      ['tool', 'found: 42'],
    ]);
    expect(listed.data[2]).toMatchObject({ tool_calls: [call] });
    const unstored = await openai.chat.completions.create({ model: OPENAI_MODEL, messages });
    await expect(openai.chat.completions.retrieve(unstored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    // A Response's id names no chat completion, and the other way round.
    await expect(openai.chat.completions.retrieve(called.id.replace('chatcmpl-', 'resp_'))).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    await expect(openai.responses.retrieve(called.id.replace('chatcmpl-', 'resp_'))).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  it("when a response was not stored, is unknown or is another team's, then previous_response_id and retrieve are 404 in the OpenAI envelope", async () => {
    const unstored = await openai.responses.create({ model: OPENAI_MODEL, input: 'forget me', store: false });
    // Stored by default, as OpenAI's: read back without asking.
    const kept = await openai.responses.create({ model: OPENAI_MODEL, input: 'keep me' });
    expect((await openai.responses.retrieve(kept.id)).output_text).toBe('Echo: KEEP ME');
    const continued = await openai.responses
      .create({ model: OPENAI_MODEL, input: 'and then?', previous_response_id: unstored.id })
      .catch((e: unknown) => e);
    expect(continued).toBeInstanceOf(OpenAI.NotFoundError);
    expect((continued as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      code: 'response_not_found',
      param: 'previous_response_id',
      message: expect.stringContaining('store: true'),
    });
    await expect(openai.responses.retrieve(unstored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(openai.responses.retrieve('resp_not-an-id')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(openai.responses.inputItems.list(unstored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);

    const stored = await openai.responses.create({ model: OPENAI_MODEL, input: 'mine', store: true });
    const other = await signUpWithKey(system.baseUrl, 'compat-other');
    await grantCredits(system.baseUrl, other.teamId, 1);
    const mallory = new OpenAI({ apiKey: other.key, baseURL: `${system.baseUrl}/v1`, maxRetries: 0 });
    await expect(mallory.responses.retrieve(stored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(
      mallory.responses.create({ model: OPENAI_MODEL, input: 'steal', previous_response_id: stored.id }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('when a stored response or chat completion is deleted, then it is gone from every read, for its team only', async () => {
    const stored = await openai.responses.create({ model: OPENAI_MODEL, input: 'delete me', store: true });
    const other = await signUpWithKey(system.baseUrl, 'compat-deleter');
    const mallory = new OpenAI({ apiKey: other.key, baseURL: `${system.baseUrl}/v1`, maxRetries: 0 });
    await expect(mallory.responses.delete(stored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    // The client types this as void; the body is OpenAI's.
    expect(await openai.responses.delete(stored.id)).toEqual({ id: stored.id, object: 'response', deleted: true });
    await expect(openai.responses.retrieve(stored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(openai.responses.inputItems.list(stored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(
      openai.responses.create({ model: OPENAI_MODEL, input: 'more', previous_response_id: stored.id }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(openai.responses.delete(stored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const auth = { authorization: `Bearer ${key}` };
    const record = await fetch(`${system.baseUrl}/inferences/${stored.id.slice('resp_'.length)}`, { headers: auth });
    expect(record.status).toBe(404);

    const messages = [{ role: 'user' as const, content: 'forget this' }];
    const completion = await openai.chat.completions.create({ model: OPENAI_MODEL, messages, store: true });
    // A chat completion's id is no Response's.
    await expect(openai.responses.delete(completion.id.replace('chatcmpl-', 'resp_'))).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    expect(await openai.chat.completions.delete(completion.id)).toEqual({
      id: completion.id,
      object: 'chat.completion.deleted',
      deleted: true,
    });
    await expect(openai.chat.completions.retrieve(completion.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);

    // The native route deletes any stored inference of the team, by its inference id.
    const kept = await openai.chat.completions.create({ model: OPENAI_MODEL, messages, store: true });
    const inferenceId = kept.id.slice('chatcmpl-'.length);
    const removed = await fetch(`${system.baseUrl}/inferences/${inferenceId}`, { method: 'DELETE', headers: auth });
    expect(await removed.json()).toEqual({ inference_id: inferenceId, deleted: true });
    await expect(openai.chat.completions.retrieve(kept.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const again = await fetch(`${system.baseUrl}/inferences/${inferenceId}`, { method: 'DELETE', headers: auth });
    expect(again.status).toBe(404);
  });

  it('when stored chat completions carry metadata, then the list filters and pages them and update replaces it', async () => {
    // A team of its own, so the list holds only this test's calls.
    const own = await signUpWithKey(system.baseUrl, 'compat-lister');
    await grantCredits(system.baseUrl, own.teamId, 1);
    const client = new OpenAI({ apiKey: own.key, baseURL: `${system.baseUrl}/v1`, maxRetries: 0 });
    const ask = (content: string, metadata: Record<string, string>) =>
      client.chat.completions.create({
        model: OPENAI_MODEL,
        messages: [{ role: 'user', content }],
        store: true,
        metadata,
      });
    const a = await ask('one', { run: 'a', user: 'u1' });
    const b = await ask('two', { run: 'b' });
    const c = await ask('three', { run: 'a' });
    await client.chat.completions.create({ model: OPENAI_MODEL, messages: [{ role: 'user', content: 'unstored' }] });
    const response = await client.responses.create({
      model: OPENAI_MODEL,
      input: 'x',
      store: true,
      metadata: { run: 'a' },
    });
    expect(response.metadata).toEqual({ run: 'a' });
    expect((await client.responses.retrieve(response.id)).metadata).toEqual({ run: 'a' });

    const ids = async (params: OpenAI.Chat.Completions.ChatCompletionListParams) => {
      const out: string[] = [];
      for await (const completion of client.chat.completions.list(params)) out.push(completion.id);
      return out;
    };
    // Oldest first by default; every page of 2 followed by the client; a Response is no chat completion.
    expect(await ids({ limit: 2 })).toEqual([a.id, b.id, c.id]);
    expect(await ids({ order: 'desc' })).toEqual([c.id, b.id, a.id]);
    expect(await ids({ metadata: { run: 'a' } })).toEqual([a.id, c.id]);
    expect(await ids({ metadata: { run: 'a', user: 'u1' }, model: OPENAI_MODEL })).toEqual([a.id]);
    expect(await ids({ model: 'another-model' })).toEqual([]);
    const page = await client.chat.completions.list({ limit: 1, after: a.id });
    expect(page.data.map((d) => [d.id, d.metadata])).toEqual([[b.id, { run: 'b' }]]);
    expect(page.has_more).toBe(true);

    const updated = await client.chat.completions.update(b.id, { metadata: { run: 'a', reviewed: 'yes' } });
    expect(updated.metadata).toEqual({ run: 'a', reviewed: 'yes' });
    expect((await client.chat.completions.retrieve(b.id)).metadata).toEqual({ run: 'a', reviewed: 'yes' });
    expect(await ids({ metadata: { run: 'a' } })).toEqual([a.id, b.id, c.id]);
    // The native list filters every surface's records by metadata too (here: the Response besides the completions).
    const native = await fetch(`${system.baseUrl}/inferences?metadata[run]=a&metadata[reviewed]=yes`, {
      headers: { authorization: `Bearer ${own.key}` },
    });
    expect(((await native.json()) as { data: { id: string }[] }).data.map((r) => `chatcmpl-${r.id}`)).toEqual([b.id]);
    const natives = await fetch(`${system.baseUrl}/inferences?metadata[run]=a`, {
      headers: { authorization: `Bearer ${own.key}` },
    });
    expect(((await natives.json()) as { total: number }).total).toBe(4);
    const badPair = await fetch(`${system.baseUrl}/inferences?metadata[${'k'.repeat(65)}]=v`, {
      headers: { authorization: `Bearer ${own.key}` },
    });
    expect(badPair.status).toBe(422);
    // Another team's completion cannot be updated; bad metadata and cursors are refused, naming the parameter.
    await expect(openai.chat.completions.update(a.id, { metadata: {} })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const tooLong = await ask('x', { k: 'v'.repeat(513) }).catch((e: unknown) => e);
    expect(tooLong).toBeInstanceOf(OpenAI.APIError);
    expect((tooLong as InstanceType<typeof OpenAI.APIError>).status).toBeLessThan(500);
    expect((tooLong as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      param: expect.stringContaining('metadata'),
    });
    const badCursor = await client.chat.completions.list({ after: response.id }).catch((e: unknown) => e);
    expect((badCursor as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ param: 'after' });
  });
});
