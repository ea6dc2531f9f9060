import type { Logger } from '@whetstone/telemetry';

/** A background worker over a queue in the database: passes until stopped, woken early when new work is stored. */
export interface PollingWorker {
  /** Starts the next pass now if the worker is idle (new work was just stored here). */
  wake(): void;
  /** Stops after the pass under way. */
  stop(): Promise<void>;
}

/**
 * Runs `pass` until stopped: straight on while it finds work (it resolves with how much it took), else after
 * `idleMs` or a wake-up. A failing pass (the database down) is logged and retried after the idle wait.
 */
export function startPollingWorker(opts: {
  name: string;
  pass: () => Promise<number>;
  idleMs: number;
  logger: Logger;
}): PollingWorker {
  let stopped = false;
  let wakeUp: (() => void) | null = null;
  const sleep = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, opts.idleMs);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const loop = (async () => {
    while (!stopped) {
      let taken = 0;
      try {
        taken = await opts.pass();
      } catch (err) {
        opts.logger.error({ err, worker: opts.name }, `${opts.name} pass failed`);
      }
      if (!taken && !stopped) await sleep();
      wakeUp = null;
    }
  })();
  return {
    wake: () => wakeUp?.(),
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
    },
  };
}
