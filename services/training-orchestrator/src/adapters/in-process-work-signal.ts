import type { WorkSignal } from '../application/ports';

/** Wakes every LeaseWork call waiting in this process; other replicas' waiters rely on their fallback poll. */
export function inProcessWorkSignal(): WorkSignal {
  let waiters = new Set<() => void>();
  return {
    notify() {
      const woken = waiters;
      waiters = new Set();
      for (const wake of woken) wake();
    },
    wait(ms, signal) {
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        waiters.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    },
  };
}
