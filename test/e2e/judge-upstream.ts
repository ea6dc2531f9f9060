import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted OpenAI-compatible chat upstream on loopback for the LLM judge's journey: every chat completion is
 * answered with the same verdict text (streamed in OpenAI's chunk format, usage last), because the shared fake
 * upstream only echoes and so never answers the strict JSON the rubric demands. A test double, not product.
 */
export async function startVerdictUpstream(verdict: string, apiKey = 'sk-verdict') {
  const received: Record<string, unknown>[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${apiKey}` || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'no' } }));
        return;
      }
      const body = JSON.parse(raw) as { model: string; stream?: boolean };
      received.push(body);
      const usage = { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 };
      const base = { id: `chatcmpl-verdict-${received.length}`, created: 1_700_000_000, model: body.model };
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            ...base,
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: verdict }, finish_reason: 'stop' }],
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (data: unknown) => res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
      const chunk = (delta: unknown, finish: string | null = null) => ({
        ...base,
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
      send(chunk({ role: 'assistant', content: '' }));
      send(chunk({ content: verdict.slice(0, 10) }));
      send(chunk({ content: verdict.slice(10) }));
      send(chunk({}, 'stop'));
      send({ ...chunk({}), choices: [], usage });
      send('[DONE]');
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
