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
  /** Cancel the call, and every call started beside it. */
  cancel: () => void;
}

/**
 * Start the router's chat call. A client that disconnects closes the response,
 * which aborts the gRPC call, and the router cancels the upstream request.
 */
export async function startChat(inference: Inference, res: Response, input: ChatInput): Promise<ChatStart> {
  return (await startChats(inference, res, [input]))[0]!;
}

/**
 * Start several calls side by side (OpenAI's `n` choices), with one abort for all: the first error before every call
 * has its first piece cancels the others and answers for the request, with its HTTP status.
 */
export async function startChats(inference: Inference, res: Response, inputs: ChatInput[]): Promise<ChatStart[]> {
  const controller = new AbortController();
  // Only a response that did not finish was cut off by its client; cancelling a finished call would reset its
  // HTTP/2 stream before the trailers, and a burst of such resets makes the router's server close the whole session.
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const created = Math.floor(Date.now() / 1000);
  const principal = authOf(res).principal;
  const iterators = inputs.map((input) => inference.chat(principal, input, controller.signal)[Symbol.asyncIterator]());
  const firsts = await Promise.allSettled(iterators.map((it) => it.next()));
  const failed = firsts.find((f) => f.status === 'rejected');
  if (failed) {
    controller.abort();
    throw failed.reason;
  }
  return iterators.map((iterator, i) => ({
    iterator,
    first: (firsts[i] as PromiseFulfilledResult<IteratorResult<ChatPiece>>).value,
    created,
    metadata: inputs[i]!.metadata ?? {},
    cancel: () => controller.abort(),
  }));
}

/** A whole reply, for the JSON answers. */
export interface ChatReply {
  responseId: string;
  text: string;
  reasoning: string;
  toolCalls: ChatToolCall[];
  /** Every reply token's log probability, when the call asked for them; empty otherwise. */
  logprobs: ChatTokenLogprob[];
  /** The prompt's tokens with their log probabilities, when the call asked for `promptLogprobs`. */
  promptLogprobs?: ChatTokenLogprob[];
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
  const promptLogprobs: ChatTokenLogprob[] = [];
  const tools = new ToolCallAssembler();
  for (let next = first; !next.done; next = await iterator.next()) {
    const piece = next.value;
    text += piece.text;
    reasoning += piece.reasoning;
    logprobs.push(...piece.logprobs);
    promptLogprobs.push(...(piece.promptLogprobs ?? []));
    tools.add(piece.toolCalls);
    if (piece.done) {
      // Read the call to its end (its status), so it completes instead of being cancelled once answered.
      while (!(await iterator.next()).done);
      const prompt = promptLogprobs.length ? { promptLogprobs } : {};
      return {
        responseId: piece.responseId,
        text,
        reasoning,
        toolCalls: tools.all(),
        logprobs,
        ...prompt,
        done: piece.done,
      };
    }
  }
  throw endedEarly();
}

/** The whole replies of calls started side by side; the first error cancels the others. */
export async function collectChoices(starts: ChatStart[]): Promise<ChatReply[]> {
  try {
    return await Promise.all(starts.map(collectChat));
  } catch (err) {
    if (starts.length > 1) starts[0]!.cancel();
    throw err;
  }
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
  /** A piece of choice `index` (always 0 but for OpenAI's `n` choices). */
  piece(piece: ChatPiece, index: number): void;
  fail(err: unknown): void;
  /** After the last piece, before the stream ends (a Responses call with a conversation appends to it here). */
  finish(): void | Promise<void>;
}

/**
 * Drive a stream: every piece through the writer, an error after the first byte
 * as the surface's error event (the status is already sent), never a crash.
 * A stream that ends without its final piece is an internal error.
 */
export async function pumpChat(start: ChatStart, sse: Sse, writer: StreamWriter): Promise<undefined> {
  return pumpChoices([start], sse, writer);
}

/**
 * The pieces of several calls as they arrive, each with its call's index; the first error ends them all. A call's
 * next piece is asked for only once its last one was taken, so a consumer that stops leaves no call read ahead.
 */
async function* merged(starts: ChatStart[]): AsyncGenerator<[ChatPiece, number]> {
  type Next = { index: number; next: IteratorResult<ChatPiece> };
  const pending = new Map<number, Promise<Next>>();
  const after = (index: number, p: Promise<IteratorResult<ChatPiece>>) => {
    const tagged = p.then((next) => ({ index, next }));
    // Raced below; a call that fails after the consumer stopped is ended by the cancel, not an unhandled rejection.
    tagged.catch(() => undefined);
    pending.set(index, tagged);
  };
  starts.forEach((s, i) => after(i, Promise.resolve(s.first)));
  while (pending.size) {
    const { index, next } = await Promise.race(pending.values());
    pending.delete(index);
    if (next.done) continue;
    yield [next.value, index];
    after(index, starts[index]!.iterator.next());
  }
}

/** pumpChat for `n` choices: their pieces interleave as they come, each tagged with its choice's index. */
export async function pumpChoices(starts: ChatStart[], sse: Sse, writer: StreamWriter): Promise<undefined> {
  try {
    let done = 0;
    for await (const [piece, index] of merged(starts)) {
      if (sse.closed) break;
      writer.piece(piece, index);
      if (piece.done) done += 1;
    }
    if (done < starts.length && !sse.closed) throw endedEarly();
    if (!sse.closed) await writer.finish();
  } catch (err) {
    // The failed call has ended; the others beside it stop too (one call alone is not cancelled once it has ended).
    if (starts.length > 1) starts[0]!.cancel();
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
