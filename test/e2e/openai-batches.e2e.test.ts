import { eventually } from '@whetstone/testing';
import OpenAI, { toFile } from 'openai';
import { ANTHROPIC_MODEL, OPENAI_MODEL, startWithUpstreams, type UpstreamSystem } from './compat-helpers';
import { signUpWithKey } from './system';

/**
 * OpenAI's Files and Batch APIs through the `openai` client against the whole system (`pnpm start`'s processes,
 * fake upstreams on loopback): upload an input file, make a batch of it, poll it to its end, read its output and
 * error files, cancel one, and the errors a client can cause.
 */
/** One line of a batch's output or error file. */
interface OutputLine {
  custom_id: string;
  response: { status_code: number; body: { id: string; choices: { message: { content: string } }[] } } | null;
  error: { code: string } | null;
}

/** One line of an embeddings batch's output file. */
interface EmbeddingsLine {
  custom_id: string;
  id: string;
  response: {
    status_code: number;
    body: { object: string; data: { index: number; embedding: number[] | string }[]; usage: object };
  };
}

describe('files and batches (openai client), end to end', () => {
  let running: UpstreamSystem;
  let openai: OpenAI;
  const chatLine = (customId: string, content: string, model = OPENAI_MODEL, extra: object = {}) => ({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content }], max_tokens: 32, ...extra },
  });
  const upload = async (lines: unknown[], purpose: 'batch' | 'user_data' = 'batch') =>
    openai.files.create({
      file: await toFile(Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n')), 'requests.jsonl'),
      purpose,
    });
  const settled = (id: string) =>
    eventually(async () => {
      const batch = await openai.batches.retrieve(id);
      return ['completed', 'cancelled', 'expired', 'failed'].includes(batch.status) && batch;
    }, 60_000);
  const jsonLines = async (fileId: string) =>
    (await (await openai.files.content(fileId)).text())
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as OutputLine);

  beforeAll(async () => {
    running = await startWithUpstreams('openai-batches');
    openai = running.openai;
  }, 300_000);

  afterAll(async () => running?.stop(), 60_000);

  it('when a file is uploaded, then it is listed, read back byte for byte and deleted as OpenAI', async () => {
    const lines = [chatLine('a', 'hello')];
    const file = await upload(lines);
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'requests.jsonl', status: 'processed' });
    expect(file.id).toMatch(/^file-/);
    expect(file.bytes).toBe(Buffer.byteLength(JSON.stringify(lines[0])));
    expect(await openai.files.retrieve(file.id)).toMatchObject({ id: file.id, bytes: file.bytes });
    expect(await (await openai.files.content(file.id)).text()).toBe(JSON.stringify(lines[0]));

    const other = await upload([{ note: 'not a request' }], 'user_data');
    const listed: string[] = [];
    for await (const f of openai.files.list({ purpose: 'batch' })) listed.push(f.id);
    expect(listed).toContain(file.id);
    expect(listed).not.toContain(other.id);

    const expiring = await openai.files.create({
      file: await toFile(Buffer.from('{}'), 'short.jsonl'),
      purpose: 'user_data',
      expires_after: { anchor: 'created_at', seconds: 3600 },
    });
    expect(expiring.expires_at! - expiring.created_at).toBe(3600);
    const cursor = (after: string) =>
      fetch(`${running.system.baseUrl}/v1/files?after=${after}`, {
        headers: { authorization: `Bearer ${running.key}` },
      });
    for (const after of ['nope', `file-${'0'.repeat(8)}-0000-7000-8000-${'0'.repeat(12)}`]) {
      const res = await cursor(after);
      expect(res.status).toBe(422);
      expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'after' } });
    }
    expect(await openai.files.delete(other.id)).toEqual({ id: other.id, object: 'file', deleted: true });
    await expect(openai.files.retrieve(other.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(openai.files.content(other.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  }, 60_000);

  it('when a batch of chat completions is made, then it completes and its output and error files hold every line', async () => {
    const input = await upload([
      chatLine('greeting', 'good day', OPENAI_MODEL, { store: true, metadata: { run: 'b1' } }),
      chatLine('claude', 'hello there', ANTHROPIC_MODEL),
      chatLine('unknown-model', 'x', 'no-such-model'),
    ]);
    const created = await openai.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { job: 'nightly' },
    });
    expect(created).toMatchObject({
      object: 'batch',
      endpoint: '/v1/chat/completions',
      input_file_id: input.id,
      completion_window: '24h',
      status: 'in_progress',
      output_file_id: null,
      request_counts: { total: 3, completed: 0, failed: 0 },
      metadata: { job: 'nightly' },
    });
    expect(created.id).toMatch(/^batch_/);
    expect(created.expires_at! - created.created_at).toBe(24 * 3600);

    const batch = await settled(created.id);
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 2, failed: 1 } });
    expect(batch.completed_at).not.toBeNull();

    const output = await jsonLines(batch.output_file_id!);
    expect(output.map((l) => l.custom_id)).toEqual(['greeting', 'claude']);
    expect(output[0]).toMatchObject({
      custom_id: 'greeting',
      error: null,
      response: { status_code: 200, body: { object: 'chat.completion', model: OPENAI_MODEL } },
    });
    expect(output[0]!.response!.body.choices[0]!.message.content).toBe('Echo: GOOD DAY');
    expect(output[1]!.response!.body.choices[0]!.message.content).toMatch(/HELLO THERE/);
    const errors = await jsonLines(batch.error_file_id!);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      custom_id: 'unknown-model',
      response: { status_code: 404, body: { error: { type: 'not_found_error' } } },
    });
    expect(await openai.files.retrieve(batch.output_file_id!)).toMatchObject({ purpose: 'batch_output' });

    // A stored request is an inference like any chat completion, with its own metadata.
    const inferenceId = String(output[0]!.response!.body.id).replace(/^chatcmpl-/, '');
    const record = await fetch(`${running.system.baseUrl}/inferences/${inferenceId}`, {
      headers: { 'x-api-key': running.key },
    });
    expect(await record.json()).toMatchObject({ surface: 'chat-completions', metadata: { run: 'b1' } });

    const listed: string[] = [];
    for await (const b of openai.batches.list({ limit: 1 })) listed.push(b.id);
    expect(listed).toContain(created.id);
  }, 120_000);

  it('when a batch of Responses or legacy completions requests is made, then its output holds those objects', async () => {
    const input = await upload([
      { custom_id: 'r1', method: 'POST', url: '/v1/responses', body: { model: OPENAI_MODEL, input: 'hello there' } },
    ]);
    const created = await openai.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/responses',
      completion_window: '24h',
    });
    const batch = await settled(created.id);
    expect(batch.status).toBe('completed');
    const [line] = await jsonLines(batch.output_file_id!);
    expect(line).toMatchObject({
      custom_id: 'r1',
      response: {
        status_code: 200,
        body: { object: 'response', status: 'completed', output_text: 'Echo: HELLO THERE' },
      },
    });
    expect(batch.error_file_id).toBeNull();

    const legacy = await upload([
      { custom_id: 'c1', method: 'POST', url: '/v1/completions', body: { model: OPENAI_MODEL, prompt: 'hello there' } },
    ]);
    const completions = await settled(
      (await openai.batches.create({ input_file_id: legacy.id, endpoint: '/v1/completions', completion_window: '24h' }))
        .id,
    );
    const [text] = await jsonLines(completions.output_file_id!);
    expect(text).toMatchObject({ response: { status_code: 200, body: { object: 'text_completion' } } });
  }, 120_000);

  it('when a batch of embeddings is made, then its output holds the vectors the endpoint gives, float or base64', async () => {
    const texts = ['My card has not arrived.', 'Ada Lovelace wrote the first program.'];
    const embedLine = (customId: string, body: object) => ({
      custom_id: customId,
      method: 'POST',
      url: '/v1/embeddings',
      body: { model: 'whetstone-extract-base', ...body },
    });
    const input = await upload([
      embedLine('floats', { input: texts }),
      embedLine('base64', { input: texts[0], encoding_format: 'base64' }),
      embedLine('chat-model', { model: OPENAI_MODEL, input: 'x' }),
    ]);
    const created = await openai.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/embeddings',
      completion_window: '24h',
    });
    expect(created).toMatchObject({ endpoint: '/v1/embeddings', request_counts: { total: 3 } });
    const batch = await settled(created.id);
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 2, failed: 1 } });

    const direct = await openai.embeddings.create({
      model: 'whetstone-extract-base',
      input: texts,
      encoding_format: 'float',
    });
    const output = (await (await openai.files.content(batch.output_file_id!)).text())
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as EmbeddingsLine);
    expect(output.map((l) => l.custom_id)).toEqual(['floats', 'base64']);
    const [floats, base64] = output;
    expect(floats).toMatchObject({
      response: { status_code: 200, body: { object: 'list', model: 'whetstone-extract-base', usage: direct.usage } },
    });
    expect(floats!.id).toMatch(/^batch_req_/);
    const vectors = floats!.response.body.data.map((d) => d.embedding as number[]);
    vectors.forEach((v, i) => v.forEach((x, k) => expect(x).toBeCloseTo(direct.data[i]!.embedding[k]!, 5)));
    const packed = Buffer.from(base64!.response.body.data[0]!.embedding as string, 'base64');
    const decoded = Array.from(new Float32Array(packed.buffer, packed.byteOffset, packed.byteLength / 4));
    expect(decoded).toHaveLength(direct.data[0]!.embedding.length);
    decoded.forEach((x, k) => expect(x).toBeCloseTo(direct.data[0]!.embedding[k]!, 5));

    const [failed] = await jsonLines(batch.error_file_id!);
    expect(failed).toMatchObject({
      custom_id: 'chat-model',
      response: { body: { error: { type: expect.any(String) } } },
    });
    expect(failed!.response!.status_code).toBeGreaterThanOrEqual(400);
    expect(failed!.response!.status_code).toBeLessThan(500);

    const bad = await upload([embedLine('tokens', { input: [1, 2, 3] }), embedLine('empty', { input: '' })]);
    /** An embeddings batch made of the file, which fails validation at once. */
    const failedBatch = async (fileId: string) => {
      const batch = await openai.batches.create({
        input_file_id: fileId,
        endpoint: '/v1/embeddings',
        completion_window: '24h',
      });
      expect(batch).toMatchObject({ status: 'failed', request_counts: { total: 0, completed: 0, failed: 0 } });
      expect(await openai.batches.retrieve(batch.id)).toEqual(batch);
      return batch.errors!.data!;
    };
    const refused = await failedBatch(bad.id);
    expect(refused).toEqual([
      expect.objectContaining({ code: 'invalid_request', line: 1, param: 'body.input' }),
      expect.objectContaining({ code: 'invalid_request', line: 2, param: 'body.input' }),
    ]);
    expect(refused[0]!.message).toContain('token arrays are not accepted');
    expect(refused[1]!.message).toContain('must not be empty');

    // OpenAI's cap: 50,000 embedding inputs across a batch's lines.
    const many = await upload(
      Array.from({ length: 25 }, (_, i) => embedLine(`m${i}`, { input: Array(2048).fill('a') })),
    );
    const [tooMany] = await failedBatch(many.id);
    expect(tooMany).toMatchObject({ code: 'too_many_inputs', line: null, param: null });
    expect(tooMany!.message).toContain('holds 51200 embedding inputs; a batch takes at most 50000');
  }, 120_000);

  it('when a batch is cancelled, then it ends cancelled with every request answered or failed', async () => {
    const input = await upload(Array.from({ length: 40 }, (_, i) => chatLine(`r-${i}`, `call ${i}`)));
    const created = await openai.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const cancelling = await openai.batches.cancel(created.id);
    expect(['cancelling', 'cancelled']).toContain(cancelling.status);
    expect(cancelling.cancelling_at).not.toBeNull();
    const batch = await settled(created.id);
    expect(batch.status).toBe('cancelled');
    expect(batch.request_counts!.completed + batch.request_counts!.failed).toBe(40);
    if (batch.error_file_id)
      for (const line of await jsonLines(batch.error_file_id))
        expect(line).toMatchObject({ response: null, error: { code: 'batch_cancelled' } });
  }, 120_000);

  it('when the input file or the batch is wrong or another team asks, then the error says so in the OpenAI envelope', async () => {
    const refused = (body: Record<string, unknown>) =>
      openai.batches.create(body as never).then(
        () => {
          throw new Error('expected the batch to be refused');
        },
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
    const badLines = await upload([
      chatLine('ok', 'fine'),
      { custom_id: 'no-body', method: 'POST', url: '/v1/chat/completions' },
      chatLine('ok', 'duplicate id'),
      { ...chatLine('wrong-url', 'x'), url: '/v1/embeddings' },
      chatLine('streams', 'x', OPENAI_MODEL, { stream: true }),
    ]);
    // Lines that do not validate make a failed batch listing each problem by line, as OpenAI's do; nothing runs.
    const failed = await openai.batches.create({
      input_file_id: badLines.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { run: 'bad lines' },
    });
    expect(failed).toMatchObject({
      status: 'failed',
      in_progress_at: null,
      completed_at: null,
      output_file_id: null,
      error_file_id: null,
      request_counts: { total: 0, completed: 0, failed: 0 },
      metadata: { run: 'bad lines' },
    });
    expect(failed.failed_at).toBe(failed.created_at);
    expect(failed.errors!.object).toBe('list');
    expect(failed.errors!.data!.map((e) => [e.line, e.code, e.param])).toEqual([
      [2, 'invalid_request', 'body'],
      [3, 'duplicate_custom_id', 'custom_id'],
      [4, 'mismatched_endpoint', 'url'],
      [5, 'invalid_request', 'body.stream'],
    ]);
    expect((await openai.batches.cancel(failed.id)).status).toBe('failed');
    expect((await openai.batches.list({ limit: 1 })).data[0]).toMatchObject({ id: failed.id, status: 'failed' });

    const notBatch = await upload([chatLine('a', 'x')], 'user_data');
    const base = { endpoint: '/v1/chat/completions', completion_window: '24h' };
    expect((await refused({ ...base, input_file_id: notBatch.id })).message).toContain('purpose batch');
    expect((await refused({ ...base, input_file_id: 'file-nope' })).param).toBe('input_file_id');
    const good = await upload([chatLine('a', 'x')]);
    expect((await refused({ ...base, input_file_id: good.id, endpoint: '/v1/moderations' })).param).toBe('endpoint');
    const chatAsEmbeddings = await openai.batches.create({
      input_file_id: good.id,
      endpoint: '/v1/embeddings',
      completion_window: '24h',
    });
    expect(chatAsEmbeddings.errors!.data).toEqual([
      {
        code: 'mismatched_endpoint',
        line: 1,
        param: 'url',
        message: "url must be the batch's endpoint, /v1/embeddings.",
      },
    ]);
    expect((await refused({ ...base, input_file_id: good.id, completion_window: '1h' })).param).toBe(
      'completion_window',
    );
    await expect(openai.batches.retrieve('batch_nope')).rejects.toBeInstanceOf(OpenAI.NotFoundError);

    const noFile = await fetch(`${running.system.baseUrl}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ purpose: 'batch' }),
    });
    expect(noFile.status).toBe(422);
    expect(await noFile.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'file' } });
    const badPurpose = await openai.files
      .create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'nonsense' as never })
      .catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(badPurpose).toMatchObject({ status: 422, param: 'purpose' });

    const mine = await openai.batches.create({ ...base, input_file_id: good.id } as never);
    const other = await signUpWithKey(running.system.baseUrl, 'openai-batches-other');
    const stranger = new OpenAI({ apiKey: other.key, baseURL: `${running.system.baseUrl}/v1`, maxRetries: 0 });
    await expect(stranger.batches.retrieve(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.batches.cancel(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.files.retrieve(good.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.files.content(good.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.files.delete(good.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const theirs = await stranger.batches
      .create({ ...base, input_file_id: good.id } as never)
      .catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(theirs).toMatchObject({ status: 422, param: 'input_file_id' });
  }, 120_000);
});
