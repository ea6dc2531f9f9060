import type { Logger } from './logger';

/**
 * On SIGTERM or SIGINT, run the drain steps in order (each one's failure is
 * logged and the next still runs), flush telemetry, then exit 0. The same
 * shutdown for every deployable.
 */
export function drainOnSignals(
  logger: Logger,
  steps: (() => unknown)[],
  telemetry?: { shutdown(): Promise<unknown> },
): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    for (const step of steps) {
      try {
        await step();
      } catch (err) {
        logger.warn({ err }, 'a drain step failed');
      }
    }
    await telemetry?.shutdown().catch(() => undefined);
    logger.info({}, 'stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/** Run a composition root; a failure to start is one line on stderr and exit 1. */
export function runMain(service: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${service} failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
