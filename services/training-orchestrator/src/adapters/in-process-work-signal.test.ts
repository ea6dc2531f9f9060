import { inProcessWorkSignal } from './in-process-work-signal';

describe('inProcessWorkSignal', () => {
  it('when work is queued, then every waiter wakes at once, long before its timeout', async () => {
    const signal = inProcessWorkSignal();
    const started = Date.now();
    const waiters = [signal.wait(5_000), signal.wait(5_000)];
    signal.notify();
    await Promise.all(waiters);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('when nothing is queued, then a waiter wakes after its timeout; an aborted caller wakes at once', async () => {
    const signal = inProcessWorkSignal();
    const started = Date.now();
    await signal.wait(30);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    const gone = new AbortController();
    const waiting = signal.wait(5_000, gone.signal);
    gone.abort();
    await waiting;
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('when a notify comes before anyone waits, then a later waiter is not woken by it', async () => {
    const signal = inProcessWorkSignal();
    signal.notify();
    const started = Date.now();
    await signal.wait(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});
