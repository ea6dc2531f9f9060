import type { ServerResponse } from 'node:http';
import {
  echoPieces,
  type FakeUpstream,
  PrefixCache,
  type ReceivedRequest,
  sendJson,
  sse,
  startFakeServer,
  tokens,
} from './server';

/**
 * A fake Anthropic-compatible upstream: `POST /v1/messages`, JSON or the
 * Messages event stream (message_start, content_block_start/delta/stop,
 * message_delta with usage, message_stop), `x-api-key` and `anthropic-version`
 * required, `max_tokens` required, explicit prompt caching at `cache_control`
 * markers (tools, then system, then messages) reported as
 * `cache_creation_input_tokens` / `cache_read_input_tokens` (not part of
 * `input_tokens`), and a `tool_use` block when tools are given.
 */
export interface FakeAnthropicOptions {
  apiKey?: string;
  /** Smallest prefix (in fake tokens) that is cached; Anthropic's is 1,024 to 4,096 real tokens. */
  minCacheTokens?: number;
  /** Milliseconds to wait before answering a request (a slow call); none by default. */
  delayMs?: (req: ReceivedRequest) => number;
}

interface Block {
  type: string;
  text?: string;
  content?: string | Block[];
  cache_control?: unknown;
  name?: string;
  description?: string;
}

/** The parts of a Messages body the fake reads. */
interface MessagesBody {
  model?: string;
  max_tokens?: number;
  system?: string | Block[];
  messages?: { role: string; content: string | Block[] }[];
  tools?: Block[];
  stream?: boolean;
  stop_sequences?: string[];
}

type Req = ReceivedRequest & { body: MessagesBody };

const blocksOf = (content: string | Block[] | undefined): Block[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : (content ?? []);

const blockText = (b: Block): string =>
  b.type === 'tool_result' ? blocksOf(b.content).map(blockText).join('') : (b.text ?? '');

/** The prompt in cache order, each segment with its tokens and whether a marker ends the cacheable prefix there. */
function segments(body: MessagesBody): { key: string; tokens: number; marker: boolean }[] {
  const tools = (body.tools ?? []).map((t) => ({
    key: JSON.stringify(t),
    tokens: tokens(`${t.name ?? ''} ${t.description ?? ''}`),
    marker: !!t.cache_control,
  }));
  const system = blocksOf(body.system).map((b) => ({
    key: JSON.stringify(['system', b.text]),
    tokens: tokens(b.text ?? ''),
    marker: !!b.cache_control,
  }));
  const turns = (body.messages ?? []).flatMap((m) =>
    blocksOf(m.content).map((b) => ({
      key: JSON.stringify([m.role, b.type, blockText(b)]),
      tokens: tokens(blockText(b)),
      marker: !!b.cache_control,
    })),
  );
  return [...tools, ...system, ...turns];
}

interface Usage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** Reads the longest cached prefix ending at a marker, and writes the prefix ending at the last marker. */
function cacheUsage(body: MessagesBody, cache: PrefixCache, minTokens: number): Usage {
  const segs = segments(body);
  const total = segs.reduce((n, s) => n + s.tokens, 0);
  const prefixes: { key: string; tokens: number }[] = [];
  let running = 0;
  for (const [i, s] of segs.entries()) {
    running += s.tokens;
    if (s.marker && running >= minTokens)
      prefixes.push({ key: JSON.stringify([body.model, segs.slice(0, i + 1).map((x) => x.key)]), tokens: running });
  }
  const hits = prefixes.map((p) => cache.lookup(p.key));
  const lastHit = hits.lastIndexOf(true);
  const read = lastHit >= 0 ? prefixes[lastHit]!.tokens : 0;
  const last = prefixes[prefixes.length - 1];
  const write = last && !hits[hits.length - 1] ? last.tokens - read : 0;
  return { input_tokens: total - read - write, cache_creation_input_tokens: write, cache_read_input_tokens: read };
}

interface Reply {
  id: string;
  text: string[];
  toolUse: { id: string; name: string; input: Record<string, unknown> } | null;
  stopReason: 'end_turn' | 'max_tokens' | 'tool_use' | 'stop_sequence';
  /** The stop sequence the echo was cut before; null when none. */
  stopSequence: string | null;
  usage: Usage & { output_tokens: number };
}

/** The echo cut before the first stop sequence it holds (as one piece), and that sequence; null when it holds none. */
function stopCut(pieces: string[], stops: string[]): { pieces: string[]; sequence: string } | null {
  const text = pieces.join('');
  const found = stops.map((s) => ({ s, at: s ? text.indexOf(s) : -1 })).filter((f) => f.at >= 0);
  if (!found.length) return null;
  const first = found.reduce((a, b) => (b.at < a.at ? b : a));
  return { pieces: [text.slice(0, first.at)], sequence: first.s };
}

function replyTo(body: MessagesBody, cache: PrefixCache, minCacheTokens: number, n: number): Reply {
  const messages = body.messages ?? [];
  const lastBlocks = blocksOf(messages[messages.length - 1]?.content);
  const lastText = lastBlocks.map(blockText).join('');
  const tools = body.tools ?? [];
  const usage = cacheUsage(body, cache, minCacheTokens);
  const id = `msg_fake_${n}`;
  if (lastBlocks.some((b) => b.type === 'tool_result')) {
    const text = [`Tool result: ${lastText}`];
    const output = tokens(text[0]!);
    return {
      id,
      text,
      toolUse: null,
      stopReason: 'end_turn',
      stopSequence: null,
      usage: { ...usage, output_tokens: output },
    };
  }
  if (tools.length) {
    const toolUse = { id: `toolu_fake_${n}`, name: tools[0]!.name ?? '', input: { text: lastText } };
    const output = tokens(JSON.stringify(toolUse.input)) + 1;
    return {
      id,
      text: [],
      toolUse,
      stopReason: 'tool_use',
      stopSequence: null,
      usage: { ...usage, output_tokens: output },
    };
  }
  const echo = echoPieces(lastText, body.max_tokens);
  const cut = stopCut(echo.pieces, body.stop_sequences ?? []);
  return {
    id,
    text: cut?.pieces ?? echo.pieces,
    toolUse: null,
    stopReason: cut ? 'stop_sequence' : echo.truncated ? 'max_tokens' : 'end_turn',
    stopSequence: cut?.sequence ?? null,
    usage: { ...usage, output_tokens: tokens((cut?.pieces ?? echo.pieces).join('')) },
  };
}

function answerJson(req: Req, res: ServerResponse, reply: Reply) {
  sendJson(res, 200, {
    id: reply.id,
    type: 'message',
    role: 'assistant',
    model: req.body.model,
    content: reply.toolUse ? [{ type: 'tool_use', ...reply.toolUse }] : [{ type: 'text', text: reply.text.join('') }],
    stop_reason: reply.stopReason,
    stop_sequence: reply.stopSequence,
    usage: reply.usage,
  });
}

function answerStream(req: Req, res: ServerResponse, reply: Reply, stall: boolean) {
  const { output_tokens, ...input } = reply.usage;
  const message = { id: reply.id, type: 'message', role: 'assistant', model: req.body.model, content: [] };
  sse(
    res,
    { type: 'message_start', message: { ...message, stop_reason: null, usage: { ...input, output_tokens: 1 } } },
    'message_start',
  );
  const block = reply.toolUse
    ? { type: 'tool_use', id: reply.toolUse.id, name: reply.toolUse.name, input: {} }
    : { type: 'text', text: '' };
  sse(res, { type: 'content_block_start', index: 0, content_block: block }, 'content_block_start');
  const json = reply.toolUse ? JSON.stringify(reply.toolUse.input) : '';
  const deltas = reply.toolUse
    ? [json.slice(0, json.length >> 1), json.slice(json.length >> 1)].map((p) => ({
        type: 'input_json_delta',
        partial_json: p,
      }))
    : reply.text.map((text) => ({ type: 'text_delta', text }));
  for (const [i, delta] of deltas.entries()) {
    sse(res, { type: 'content_block_delta', index: 0, delta }, 'content_block_delta');
    if (stall && i === 0) return;
  }
  sse(res, { type: 'content_block_stop', index: 0 }, 'content_block_stop');
  sse(
    res,
    {
      type: 'message_delta',
      delta: { stop_reason: reply.stopReason, stop_sequence: reply.stopSequence },
      usage: { output_tokens },
    },
    'message_delta',
  );
  sse(res, { type: 'message_stop' }, 'message_stop');
  res.end();
}

const ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/** Starts the fake Anthropic-compatible upstream on loopback. */
export function startFakeAnthropicUpstream(options: FakeAnthropicOptions = {}): Promise<FakeUpstream> {
  const cache = new PrefixCache();
  let n = 0;
  const invalid = (res: ServerResponse, message: string) =>
    sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message } });
  return startFakeServer({
    apiKey: options.apiKey ?? 'sk-ant-fake',
    authorized: (req, key) => req.headers['x-api-key'] === key && !!req.headers['anthropic-version'],
    errorBody: (status, message) => ({ type: 'error', error: { type: ERROR_TYPE[status] ?? 'api_error', message } }),
    onReset: () => cache.clear(),
    delayMs: options.delayMs,
    routes: {
      'POST /v1/messages': (received, res, stall) => {
        const req = received as Req;
        if (!Array.isArray(req.body.messages) || !req.body.model) return invalid(res, 'messages: field required');
        if (!Number.isInteger(req.body.max_tokens)) return invalid(res, 'max_tokens: field required');
        const reply = replyTo(req.body, cache, options.minCacheTokens ?? 4, ++n);
        if (req.body.stream) answerStream(req, res, reply, stall);
        else answerJson(req, res, reply);
      },
    },
  });
}
