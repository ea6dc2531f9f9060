import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { errors, Reasons } from '@whetstone/errors';
import type { ChatDone, ChatInput, ChatPiece, Inference } from '../../../../application/ports';
import { choiceInputs } from './blocks';
import { chatInput } from './chat-input.fixture';
import { collectChoices, pumpChoices, Sse, startChats } from './chat-run';

/**
 * OpenAI's `n` choices in the chat runner: the calls start side by side, their
 * pieces interleave by index, and the first failure cancels the others. The
 * router is a fake port here; test/e2e/compat-trained.e2e.test.ts runs a real one.
 */

const usage = { input_tokens: 3, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 2, reasoning_tokens: 0 };
const done: ChatDone = {
  finishReason: 'stop',
  stopSequence: null,
  model: 'm',
  usage: { ...usage, cost_credits: 0.1 },
  inferenceId: null,
  routedModel: null,
  savings: null,
  latencyMs: 1,
};
const piece = (responseId: string, text: string, last = false): ChatPiece => ({
  responseId,
  text,
  reasoning: '',
  toolCalls: [],
  logprobs: [],
  ...(last ? { done } : {}),
});
const input = chatInput();

/** A fake router: each seed answers "<seed>a", "<seed>b" after `delay(seed)` ms a piece, or fails on seed `failing`. */
function fakeInference(delay: (seed: number) => number, failing?: number) {
  const signals: AbortSignal[] = [];
  const inference = {
    async *chat(_principal: unknown, call: ChatInput, signal: AbortSignal) {
      signals.push(signal);
      const id = `r${call.seed}`;
      const wait = () => new Promise((r) => setTimeout(r, delay(call.seed)));
      if (call.seed === failing)
        throw errors.invalid(Reasons.VALIDATION_FAILED, 'bad', [{ field: 'x', message: 'bad' }]);
      await wait();
      yield piece(id, `${call.seed}a`);
      await wait();
      yield piece(id, `${call.seed}b`, true);
    },
  } as unknown as Inference;
  return { inference, signals };
}

function fakeResponse() {
  const res = Object.assign(new EventEmitter(), {
    locals: { auth: { principal: { teamId: 't' } } },
    writableFinished: false,
    writableEnded: false,
    destroyed: false,
    written: [] as string[],
    writeHead: () => res,
    write: (s: string) => res.written.push(s),
    end: (s?: string) => {
      if (s) res.written.push(s);
      res.writableEnded = true;
    },
  });
  return res;
}

describe('n choices', () => {
  it('when 3 choices are asked with seed 5, then the calls sample seeds 5, 6 and 7; store with n > 1 is refused by name', () => {
    expect(choiceInputs({ ...input, seed: 5 }, 3).map((c) => c.seed)).toEqual([5, 6, 7]);
    expect(choiceInputs(input, undefined)).toHaveLength(1);
    const top = Number.MAX_SAFE_INTEGER;
    expect(choiceInputs({ ...input, seed: top }, 3).map((c) => c.seed)).toEqual([top, 0, 1]);
    expect(() => choiceInputs({ ...input, store: true }, 2)).toThrow(
      expect.objectContaining({ fieldErrors: [expect.objectContaining({ field: 'n' })] }),
    );
  });

  it('when choices answer at different speeds, then JSON collects each in its place and the stream interleaves them by index', async () => {
    const { inference } = fakeInference((seed) => (seed === 0 ? 30 : 1));
    const res = fakeResponse();
    const replies = await collectChoices(
      await startChats(inference, res as unknown as Response, choiceInputs(input, 3)),
    );
    expect(replies.map((r) => [r.responseId, r.text])).toEqual([
      ['r0', '0a0b'],
      ['r1', '1a1b'],
      ['r2', '2a2b'],
    ]);

    const streamed = fakeResponse();
    const starts = await startChats(inference, streamed as unknown as Response, choiceInputs(input, 2));
    const seen: [number, string][] = [];
    const writer = { piece: (p: ChatPiece, i: number) => seen.push([i, p.text]), fail: jest.fn(), finish: jest.fn() };
    await pumpChoices(starts, new Sse(streamed as unknown as Response), writer);
    // Choice 1 is quick (timers fire in the order they are due): both its pieces come before choice 0's second.
    expect(seen.map(([i, t]) => `${i}:${t}`)).toEqual(['0:0a', '1:1a', '1:1b', '0:0b']);
    expect(writer.finish).toHaveBeenCalledTimes(1);
    expect(writer.fail).not.toHaveBeenCalled();
  });

  it('when one choice fails before its first piece, then the request answers with its error and the others are cancelled', async () => {
    const { inference, signals } = fakeInference(() => 1, 1);
    const res = fakeResponse();
    await expect(startChats(inference, res as unknown as Response, choiceInputs(input, 3))).rejects.toMatchObject({
      kind: 'InvalidArgument',
    });
    expect(signals).toHaveLength(3);
    expect(signals.every((s) => s.aborted)).toBe(true);
  });

  it('when the client goes away after the first piece, then no call is read ahead and a later failure is no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      let asked = 0;
      const inference = {
        async *chat(_principal: unknown, call: ChatInput) {
          asked += 1;
          yield piece(`r${call.seed}`, 'first');
          await new Promise((r) => setTimeout(r, 5));
          throw new Error('cancelled after the client left');
        },
      } as unknown as Inference;
      const res = fakeResponse();
      const starts = await startChats(inference, res as unknown as Response, choiceInputs(input, 2));
      const writer = { piece: () => (res.destroyed = true), fail: jest.fn(), finish: jest.fn() };
      await pumpChoices(starts, new Sse(res as unknown as Response), writer);
      await new Promise((r) => setTimeout(r, 30));
      expect(asked).toBe(2);
      expect(writer.finish).not.toHaveBeenCalled();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
