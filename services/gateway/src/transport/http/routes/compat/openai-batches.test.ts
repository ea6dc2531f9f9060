// The route schemas use zod's .openapi() extension, which the api module installs.
import '../../api';
import { MAX_BATCH_LINES, requestsOfFile } from './openai-batches';

const chatLine = (customId: string, over: Record<string, unknown> = {}) =>
  JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] },
    ...over,
  });
const file = (lines: string[]) => new TextEncoder().encode(lines.join('\n'));

describe('requestsOfFile', () => {
  it("when every line is a request of the batch's endpoint, then each is a request in file order", async () => {
    const checked = await requestsOfFile(file([chatLine('a'), '', chatLine('b')]), '/v1/chat/completions');
    expect(checked.errors).toEqual([]);
    expect(checked.requests.map((r) => r.customId)).toEqual(['a', 'b']);
  });

  it('when lines are wrong, then there are no requests and each problem has its code, line and param', async () => {
    const checked = await requestsOfFile(
      file([
        chatLine('a'),
        '{not json',
        chatLine('a'),
        chatLine('c', { method: 'GET' }),
        chatLine('d', { url: '/v1/embeddings' }),
        chatLine('e', { body: { model: 'gpt-x', messages: [] } }),
        chatLine('', {}),
        chatLine('g', { body: { model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }], n: 2 } }),
      ]),
      '/v1/chat/completions',
    );
    expect(checked.requests).toEqual([]);
    expect(checked.errors.map((e) => [e.line, e.code, e.param])).toEqual([
      [2, 'invalid_json_line', ''],
      [3, 'duplicate_custom_id', 'custom_id'],
      [4, 'invalid_method', 'method'],
      [5, 'mismatched_endpoint', 'url'],
      [6, 'invalid_request', 'body.messages'],
      [7, 'invalid_custom_id', 'custom_id'],
      [8, 'invalid_request', 'body.n'],
    ]);
  });

  it('when a completions line holds several prompts, then its problem names body.prompt: a line answers one prompt', async () => {
    const line = (prompt: unknown) =>
      JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/completions', body: { model: 'm', prompt } });
    expect((await requestsOfFile(file([line(['x'])]), '/v1/completions')).errors).toEqual([]);
    const checked = await requestsOfFile(file([line(['x', 'y'])]), '/v1/completions');
    expect(checked.errors.map((e) => [e.line, e.code, e.param])).toEqual([[1, 'invalid_request', 'body.prompt']]);
  });

  it("when the file is empty or holds more lines than OpenAI's cap, then the whole file's problem is named", async () => {
    expect((await requestsOfFile(file(['', ' ']), '/v1/chat/completions')).errors).toEqual([
      { code: 'empty_file', message: 'The input file holds no request lines.', line: 0, param: '' },
    ]);
    const many = Array.from({ length: MAX_BATCH_LINES + 1 }, (_, i) => chatLine(`r${i}`));
    const checked = await requestsOfFile(file(many), '/v1/chat/completions');
    expect(checked.requests).toEqual([]);
    expect(checked.errors).toEqual([expect.objectContaining({ code: 'too_many_requests', line: 0 })]);
    expect(checked.errors[0]!.message).toContain(`holds ${MAX_BATCH_LINES + 1} request lines`);
    expect(MAX_BATCH_LINES).toBe(50_000);
  }, 60_000);
});
