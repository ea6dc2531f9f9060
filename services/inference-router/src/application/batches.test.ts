import type { Logger } from '@whetstone/telemetry';
import { type BatchAnswer, batchSlots, type BatchWorkerDeps } from './batches';
import type { ChatBatchStore, ClaimedBatchRequest } from './ports';

const claimed: ClaimedBatchRequest = {
  batchId: 'b',
  kind: 'messages',
  position: 0,
  customId: 'a',
  call: 'chat',
  responseId: 'r',
  request: new Uint8Array(),
  attempts: 1,
  caller: { teamId: 't', keyId: 'k', userId: 'u' },
};

const logger = { warn: () => undefined, error: () => undefined } as unknown as Logger;

/** The worker over a store fake that hands out one request and records what the worker does with it. */
function worker(callMs: number, leaseMs: number) {
  const renewals: number[] = [];
  const finished: string[] = [];
  let handedOut = false;
  const store = {
    sweep: async () => 0,
    claim: async () => (handedOut ? [] : ((handedOut = true), [claimed])),
    renewLease: async (_batchId: string, _position: number, attempts: number) => {
      renewals.push(attempts);
      return true;
    },
    finish: async (_b: string, _p: number, state: string) => (finished.push(state), true),
    retryLater: async () => undefined,
  } as unknown as ChatBatchStore;
  const answer: BatchAnswer = { outcome: 'succeeded', result: new Uint8Array(), retryable: false };
  const deps: BatchWorkerDeps = {
    batches: store,
    answers: {
      answer: () => new Promise((resolve) => setTimeout(() => resolve(answer), callMs)),
      errored: () => answer,
    },
    now: () => new Date(),
    logger,
    concurrency: 1,
    leaseMs,
    maxAttempts: 3,
  };
  return { slots: batchSlots(deps, 10), renewals, finished };
}

describe('the batch worker holds its lease', () => {
  it('when a call runs longer than the lease, then the worker renews the lease (for its own claim) until it finishes, and no more after', async () => {
    const { slots, renewals, finished } = worker(400, 90);
    await slots.pass();
    await slots.drain();
    expect(finished).toEqual(['succeeded']);
    // Every 30 ms for 400 ms: about 13, whatever the timer's jitter; each names the claim's attempt count.
    expect(renewals.length).toBeGreaterThanOrEqual(5);
    expect(new Set(renewals)).toEqual(new Set([1]));
    const after = renewals.length;
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(renewals.length).toBe(after);
  });

  it('when a call ends within a third of its lease, then the lease is never renewed', async () => {
    const { slots, renewals, finished } = worker(5, 60_000);
    await slots.pass();
    await slots.drain();
    expect(finished).toEqual(['succeeded']);
    expect(renewals).toEqual([]);
  });
});
