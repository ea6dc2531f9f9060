/** Streamed chat completions as bench:chat reads them: the time to the first content chunk, the text and the usage. */
import http from 'node:http';

/** The usage of a chat completion (the fields bench:chat reads). */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
}

export interface StreamedReply {
  /** From sending the request to the first chunk whose `delta.content` is not empty. */
  ttfbMs: number;
  /** From sending the request to the end of the stream. */
  totalMs: number;
  text: string;
  usage: ChatUsage | null;
}

interface Chunk {
  choices?: { delta?: { content?: string | null } }[];
  usage?: ChatUsage | null;
}

/**
 * A keep-alive poster of one fixed streamed chat-completions body: each call resolves once the stream ended with
 * `data: [DONE]`; anything but 200, or a stream without content, rejects.
 */
export function streamPoster(url: string, headers: Record<string, string>, body: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const target = new URL(url);
  const payload = Buffer.from(body);
  return () =>
    new Promise<StreamedReply>((resolve, reject) => {
      const t0 = performance.now();
      let ttfbMs = 0;
      let buffer = '';
      let text = '';
      let usage: ChatUsage | null = null;
      let done = false;
      const req = http.request(
        target,
        { method: 'POST', agent, headers: { ...headers, 'content-length': String(payload.length) } },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            return reject(new Error(`HTTP ${res.statusCode}`));
          }
          res.setEncoding('utf8');
          res.on('data', (piece: string) => {
            buffer += piece;
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
              buffer = buffer.slice(end + 2);
              if (data === undefined) continue;
              if (data === '[DONE]') {
                done = true;
                continue;
              }
              const chunk = JSON.parse(data) as Chunk;
              const content = chunk.choices?.[0]?.delta?.content;
              if (content) {
                if (!ttfbMs) ttfbMs = performance.now() - t0;
                text += content;
              }
              if (chunk.usage) usage = chunk.usage;
            }
          });
          res.on('end', () => {
            if (!done || !ttfbMs) return reject(new Error('stream ended without content or [DONE]'));
            resolve({ ttfbMs, totalMs: performance.now() - t0, text, usage });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}
