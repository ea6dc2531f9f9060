import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The shared plumbing of the fake upstreams: a loopback HTTP server on a
 * random port, the record of what it received, and the switches tests use to
 * make it fail or hang. These are test doubles of remote providers, not product.
 */

/** One request as the fake received it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The parsed JSON object body (empty when it was not a JSON object). */
  body: Record<string, unknown>;
  /** Set once the client went away before the reply ended (a cancelled or disconnected call). */
  closedEarly: boolean;
  /** Set once the reply was fully written. */
  finished: boolean;
}

/** How the next requests are answered instead of normally. */
export type FakeBehaviour =
  | { kind: 'status'; status: number; retryAfterSeconds?: number; message?: string }
  /** Never answers (the headers are not even sent). */
  | { kind: 'hang' }
  /** Streams: sends the first piece, then stalls until the client goes away. */
  | { kind: 'stall-after-first-piece' };

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>`; the API paths (`/v1/...`) are below it. */
  readonly url: string;
  /** Every request received, oldest first. */
  readonly requests: ReceivedRequest[];
  /** The API key the fake demands (401 otherwise). */
  readonly apiKey: string;
  /** Answers the next `times` requests this way (default: every later request, until `reset()`). */
  behave(behaviour: FakeBehaviour, times?: number): void;
  /** Back to normal answers, and forgets the prompt cache and the record. */
  reset(): void;
  close(): Promise<void>;
}

/** What a provider-specific fake does with one request that passed authentication and the behaviour switch. */
export type Responder = (req: ReceivedRequest, res: ServerResponse, stall: boolean) => void;

/** What the provider-specific fake says when asked to fail: status, headers and its error body. */
export type ErrorBody = (status: number, message: string) => unknown;

export interface ServerOptions {
  apiKey: string;
  /** Whether the request carries the right key. */
  authorized: (req: ReceivedRequest, apiKey: string) => boolean;
  routes: Record<string, Responder>;
  errorBody: ErrorBody;
  onReset: () => void;
  /** Milliseconds to wait before answering a request (a slow provider); none by default. */
  delayMs?: ((req: ReceivedRequest) => number) | undefined;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parse(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Starts a fake on 127.0.0.1 with a random port. */
export async function startFakeServer(options: ServerOptions): Promise<FakeUpstream> {
  const requests: ReceivedRequest[] = [];
  let behaviour: { b: FakeBehaviour; left: number } | null = null;
  const sockets = new Set<import('node:net').Socket>();

  const server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const record: ReceivedRequest = {
        method: req.method ?? 'GET',
        path: (req.url ?? '/').split('?')[0]!,
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        body: parse(text),
        closedEarly: false,
        finished: false,
      };
      requests.push(record);
      res.on('close', () => {
        if (!res.writableFinished) record.closedEarly = true;
      });
      res.on('finish', () => (record.finished = true));
      const route = options.routes[`${record.method} ${record.path}`];
      if (!route) return sendJson(res, 404, options.errorBody(404, `no route ${record.method} ${record.path}`));
      if (!options.authorized(record, options.apiKey))
        return sendJson(res, 401, options.errorBody(401, 'invalid api key'));
      const current = behaviour;
      if (current && --current.left <= 0) behaviour = null;
      const b = current?.b;
      if (b?.kind === 'hang') return;
      if (b?.kind === 'status') {
        const headers: Record<string, string> =
          b.retryAfterSeconds === undefined ? {} : { 'retry-after': String(b.retryAfterSeconds) };
        return sendJson(res, b.status, options.errorBody(b.status, b.message ?? `fake upstream ${b.status}`), headers);
      }
      const wait = options.delayMs?.(record) ?? 0;
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      route(record, res, b?.kind === 'stall-after-first-piece');
    })().catch(() => res.destroy());
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    apiKey: options.apiKey,
    behave(b, times = Number.POSITIVE_INFINITY) {
      behaviour = { b, left: times };
    },
    reset() {
      behaviour = null;
      requests.length = 0;
      options.onReset();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Writes one server-sent event; `event` is omitted for OpenAI-style `data:`-only streams. */
export function sse(res: ServerResponse, data: unknown, event?: string): void {
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}

/**
 * The fakes' tokenizer: one token per whitespace-separated word. Deterministic
 * and additive over blocks, so tests can compute usage by hand.
 */
export function tokens(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** The fakes' deterministic reply to a user text: "Echo:" and its words upper-cased, as pieces of one word each. */
export function echoPieces(userText: string, maxTokens: number | undefined): { pieces: string[]; truncated: boolean } {
  const words = ['Echo:', ...userText.toUpperCase().split(/\s+/).filter(Boolean)];
  const limit = maxTokens && maxTokens > 0 ? maxTokens : words.length;
  const kept = words.slice(0, limit);
  return { pieces: kept.map((w, i) => (i === 0 ? w : ` ${w}`)), truncated: kept.length < words.length };
}

/**
 * A prompt cache keyed by the exact text of a prefix: the first call with a
 * prefix writes it, later calls with the same prefix read it.
 */
export class PrefixCache {
  private readonly seen = new Set<string>();

  /** Whether this prefix was cached before; caches it now. */
  lookup(prefix: string): boolean {
    const hit = this.seen.has(prefix);
    this.seen.add(prefix);
    return hit;
  }

  clear(): void {
    this.seen.clear();
  }
}
