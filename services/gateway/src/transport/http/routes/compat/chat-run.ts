import type { Response } from 'express';
import { AppError, toHttpError, type Surface } from '@whetstone/errors';
import type {
  ChatDone,
  ChatInput,
  ChatPiece,
  ChatTokenLogprob,
  ChatToolCall,
  ChatToolCallDelta,
  Inference,
} from '../../../../application/ports';
import { authOf } from '../../auth';

/** A chat call whose first piece has arrived: errors before it keep their HTTP status and envelope. */
export interface ChatStart {
  iterator: AsyncIterator<ChatPiece>;
  first: IteratorResult<ChatPiece>;
  /** Unix seconds when the request arrived, the `created` of every surface. */
  created: number;
  /** The request's `metadata` (OpenAI's string pairs); `{}` when none. */
  metadata: Record<string, string>;
}

/**
 * Start the router's chat call. A client that disconnects closes the response,
 * which aborts the gRPC call, and the router cancels the upstream request.
 */
export async function startChat(inference: Inference, res: Response, input: ChatInput): Promise<ChatStart> {
  const controller = new AbortController();
  // Only a response that did not finish was cut off by its client; cancelling a finished call would reset its
  // HTTP/2 stream before the trailers, and a burst of such resets makes the router's server close the whole session.
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const created = Math.floor(Date.now() / 1000);
  const iterator = inference.chat(authOf(res).principal, input, controller.signal)[Symbol.asyncIterator]();
  const first = await iterator.next();
  return { iterator, first, created, metadata: input.metadata ?? {} };
}

/** A whole reply, for the JSON answers. */
export interface ChatReply {
  responseId: string;
  text: string;
  reasoning: string;
  toolCalls: ChatToolCall[];
  /** Every reply token's log probability, when the call asked for them; empty otherwise. */
  logprobs: ChatTokenLogprob[];
  done: ChatDone;
}

const endedEarly = () => new AppError('Internal', 'INTERNAL', 'The model stream ended without a final piece');

/** Tool-call deltas joined into whole calls, in index order. */
export class ToolCallAssembler {
  private readonly calls = new Map<number, ChatToolCall>();

  add(deltas: ChatToolCallDelta[]): void {
    for (const d of deltas) {
      const call = this.calls.get(d.index) ?? { id: '', name: '', arguments: '' };
      if (d.id) call.id = d.id;
      if (d.name) call.name = d.name;
      if (d.arguments) call.arguments += d.arguments;
      this.calls.set(d.index, call);
    }
  }

  all(): ChatToolCall[] {
    return [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
  }
}

export async function collectChat({ iterator, first }: ChatStart): Promise<ChatReply> {
  let text = '';
  let reasoning = '';
  const logprobs: ChatTokenLogprob[] = [];
  const tools = new ToolCallAssembler();
  for (let next = first; !next.done; next = await iterator.next()) {
    const piece = next.value;
    text += piece.text;
    reasoning += piece.reasoning;
    logprobs.push(...piece.logprobs);
    tools.add(piece.toolCalls);
    if (piece.done) {
      // Read the call to its end (its status), so it completes instead of being cancelled once answered.
      while (!(await iterator.next()).done);
      return { responseId: piece.responseId, text, reasoning, toolCalls: tools.all(), logprobs, done: piece.done };
    }
  }
  throw endedEarly();
}

/** A Server-Sent Events response; `data` frames with an optional `event` name. */
export class Sse {
  constructor(private readonly res: Response) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
  }

  send(data: unknown, event?: string): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
  }

  end(last?: string): void {
    if (this.res.writableEnded) return;
    this.res.end(last);
  }

  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }
}

/** What a surface writes for each piece and at the end; `fail` renders an error after the first byte. */
export interface StreamWriter {
  piece(piece: ChatPiece): void;
  fail(err: unknown): void;
  /** After the last piece, before the stream ends (a Responses call with a conversation appends to it here). */
  finish(): void | Promise<void>;
}

/**
 * Drive a stream: every piece through the writer, an error after the first byte
 * as the surface's error event (the status is already sent), never a crash.
 * A stream that ends without its final piece is an internal error.
 */
export async function pumpChat({ iterator, first }: ChatStart, sse: Sse, writer: StreamWriter): Promise<undefined> {
  try {
    let done = false;
    for (let next = first; !next.done && !sse.closed; next = await iterator.next()) {
      writer.piece(next.value);
      if (next.value.done) done = true;
    }
    if (!done && !sse.closed) throw endedEarly();
    if (!sse.closed) await writer.finish();
  } catch (err) {
    if (!sse.closed) writer.fail(err);
    // The error handler logs an unexpected cause and ends the response; the event above said nothing of it.
    if (!(err instanceof AppError) || err.kind === 'Internal') throw err;
    sse.end();
    return undefined;
  }
  sse.end();
  return undefined;
}

/** The error body a surface's stream carries, from the one error table. */
export const errorBodyOf = (err: unknown, surface: Surface) => toHttpError(err, surface).body;
