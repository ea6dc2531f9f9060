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
 * A fake OpenAI-compatible upstream: `POST /v1/embeddings` (see `fakeEmbedding`) and `POST /v1/chat/completions`, JSON or SSE
 * (with `stream_options.include_usage`), Bearer authentication, automatic
 * prompt caching of everything before the last message (reported as
 * `prompt_tokens_details.cached_tokens`, included in `prompt_tokens`), and a
 * tool call when tools are given. Replies are deterministic: see `echoPieces`.
 * With `logprobs: true`, each piece is one token whose log probability is
 * −0.25 × its position, with `top_logprobs` alternatives: the token itself, then
 * `alt1`, `alt2` … one nat less likely each.
 */
export interface FakeOpenAIOptions {
  apiKey?: string;
  /** Smallest prefix (in fake tokens) the automatic cache stores; OpenAI's is 1,024 real tokens. */
  minCacheTokens?: number;
}

interface OpenAIMessage {
  role: string;
  content?: string | { type: string; text?: string }[] | null;
  tool_call_id?: string;
}

/** The parts of a chat-completions body the fake reads. */
interface ChatBody {
  model?: string;
  messages?: OpenAIMessage[];
  tools?: { function: { name: string } }[];
  max_tokens?: number;
  max_completion_tokens?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  logprobs?: boolean;
  top_logprobs?: number;
}

/** The fake's log probabilities of a reply's pieces (see above); null when the body did not ask for them. */
function logprobsOf(body: ChatBody, pieces: string[], from = 0) {
  if (!body.logprobs) return null;
  const entry = (token: string, logprob: number) => ({ token, logprob, bytes: [...Buffer.from(token)] });
  return {
    content: pieces.map((p, i) => {
      const logprob = -0.25 * (from + i);
      const alternatives = Array.from({ length: body.top_logprobs ?? 0 }, (_, k) =>
        entry(k === 0 ? p : `alt${k}`, logprob - k),
      );
      return { ...entry(p, logprob), top_logprobs: alternatives };
    }),
    refusal: null,
  };
}

const textOf = (m: OpenAIMessage): string =>
  typeof m.content === 'string' ? m.content : (m.content ?? []).map((b) => b.text ?? '').join('');

interface Reply {
  pieces: string[];
  toolCall: { id: string; name: string; arguments: string } | null;
  finishReason: 'stop' | 'length' | 'tool_calls';
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details: { cached_tokens: number };
  };
}

function replyTo(body: ChatBody, cache: PrefixCache, minCacheTokens: number, n: number): Reply {
  const messages = body.messages ?? [];
  const last = messages[messages.length - 1] ?? { role: 'user', content: '' };
  const prompt = messages.reduce((sum, m) => sum + tokens(textOf(m)), 0);
  const prefix = messages.slice(0, -1);
  const prefixTokens = prefix.reduce((sum, m) => sum + tokens(textOf(m)), 0);
  const cached =
    prefixTokens >= minCacheTokens && cache.lookup(JSON.stringify([body.model, prefix])) ? prefixTokens : 0;
  const tools = body.tools ?? [];
  let pieces: string[] = [];
  let toolCall: Reply['toolCall'] = null;
  let finishReason: Reply['finishReason'] = 'stop';
  if (last.role === 'tool') pieces = [`Tool result: ${textOf(last)}`];
  else if (tools.length)
    toolCall = { id: `call_${n}`, name: tools[0]!.function.name, arguments: JSON.stringify({ text: textOf(last) }) };
  else {
    const echo = echoPieces(textOf(last), body.max_completion_tokens ?? body.max_tokens);
    pieces = echo.pieces;
    if (echo.truncated) finishReason = 'length';
  }
  if (toolCall) finishReason = 'tool_calls';
  const completion = toolCall ? tokens(toolCall.arguments) + 1 : tokens(pieces.join(''));
  return {
    pieces,
    toolCall,
    finishReason,
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: cached },
    },
  };
}

function answerJson(req: Req, res: ServerResponse, reply: Reply, id: string) {
  sendJson(res, 200, {
    id,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: req.body.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.toolCall ? null : reply.pieces.join(''),
          ...(reply.toolCall
            ? {
                tool_calls: [
                  {
                    id: reply.toolCall.id,
                    type: 'function',
                    function: { name: reply.toolCall.name, arguments: reply.toolCall.arguments },
                  },
                ],
              }
            : {}),
        },
        logprobs: reply.toolCall ? null : logprobsOf(req.body, reply.pieces),
        finish_reason: reply.finishReason,
      },
    ],
    usage: reply.usage,
  });
}

function answerStream(req: Req, res: ServerResponse, reply: Reply, id: string, stall: boolean) {
  const chunk = (delta: unknown, finish: string | null = null, logprobs: unknown = null) => ({
    id,
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: req.body.model,
    choices: [{ index: 0, delta, logprobs, finish_reason: finish }],
  });
  sse(res, chunk({ role: 'assistant', content: '' }));
  const deltas: unknown[] = reply.toolCall
    ? [
        {
          tool_calls: [
            {
              index: 0,
              id: reply.toolCall.id,
              type: 'function',
              function: { name: reply.toolCall.name, arguments: '' },
            },
          ],
        },
        ...splitInTwo(reply.toolCall.arguments).map((a) => ({
          tool_calls: [{ index: 0, function: { arguments: a } }],
        })),
      ]
    : reply.pieces.map((content) => ({ content }));
  for (const [i, delta] of deltas.entries()) {
    const piece = reply.toolCall ? [] : [reply.pieces[i]!];
    sse(res, chunk(delta, null, reply.toolCall ? null : logprobsOf(req.body, piece, i)));
    if (stall && i === 0) return;
  }
  sse(res, chunk({}, reply.finishReason));
  if (req.body.stream_options?.include_usage) sse(res, { ...chunk({}), choices: [], usage: reply.usage });
  sse(res, '[DONE]');
  res.end();
}

type Req = ReceivedRequest & { body: ChatBody };

/** The parts of an embeddings body the fake reads. */
interface EmbeddingsBody {
  model?: string;
  input?: unknown;
  dimensions?: number;
  encoding_format?: string;
}

/**
 * A deterministic embedding of `text` in `dimensions` values (default 8): value k is the share of the text's
 * characters whose code is k modulo the length, so equal texts embed equally and different ones mostly not.
 */
export function fakeEmbedding(text: string, dimensions = 8): number[] {
  const out = new Array<number>(dimensions).fill(0);
  for (const ch of text) out[ch.codePointAt(0)! % dimensions]! += 1 / Math.max(1, text.length);
  return out;
}

/** OpenAI's embeddings answer: one float vector per input, in order, and the input's fake tokens as usage. */
function answerEmbeddings(body: EmbeddingsBody, res: ServerResponse): void {
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!body.model || !Array.isArray(input) || !input.every((t) => typeof t === 'string'))
    return sendJson(res, 400, {
      error: { message: "'model' and 'input' (a string or strings) are required", type: 'invalid_request_error' },
    });
  const prompt = input.reduce((n: number, t: string) => n + tokens(t), 0);
  sendJson(res, 200, {
    object: 'list',
    // Answered in reverse order, by index, as a provider may: the caller must order them.
    data: input
      .map((t: string, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(t, body.dimensions) }))
      .reverse(),
    model: body.model,
    usage: { prompt_tokens: prompt, total_tokens: prompt },
  });
}

const splitInTwo = (s: string) => [s.slice(0, Math.floor(s.length / 2)), s.slice(Math.floor(s.length / 2))];

/** Starts the fake OpenAI-compatible upstream on loopback. */
export function startFakeOpenAIUpstream(options: FakeOpenAIOptions = {}): Promise<FakeUpstream> {
  const cache = new PrefixCache();
  let n = 0;
  return startFakeServer({
    apiKey: options.apiKey ?? 'sk-fake-openai',
    authorized: (req, key) => req.headers.authorization === `Bearer ${key}`,
    errorBody: (status, message) => ({
      error: { message, type: status === 429 ? 'rate_limit_error' : 'server_error', param: null, code: null },
    }),
    onReset: () => cache.clear(),
    routes: {
      'POST /v1/chat/completions': (received, res, stall) => {
        const req = received as Req;
        if (!Array.isArray(req.body.messages) || !req.body.model)
          return sendJson(res, 400, {
            error: { message: "'messages' and 'model' are required", type: 'invalid_request_error' },
          });
        const reply = replyTo(req.body, cache, options.minCacheTokens ?? 4, ++n);
        const id = `chatcmpl-fake-${n}`;
        if (req.body.stream) answerStream(req, res, reply, id, stall);
        else answerJson(req, res, reply, id);
      },
      'POST /v1/embeddings': (received, res) => answerEmbeddings(received.body as EmbeddingsBody, res),
    },
  });
}
