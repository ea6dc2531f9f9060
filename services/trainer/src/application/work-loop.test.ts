import { trainerDeps } from '../../test/fakes/in-memory';
import { WorkLoop } from './work-loop';

/** A logger that keeps each line's level and message. */
function recordingLogger() {
  const lines: string[] = [];
  const at =
    (level: string) =>
    (...args: unknown[]) =>
      void lines.push(`${level} ${String(args.find((a) => typeof a === 'string'))}`);
  const logger = { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
  return { lines, logger };
}

describe('WorkLoop', () => {
  it('when the orchestrator is still starting, then one info line; when it is lost later, then one warning and one line when it is back', async () => {
    jest.useFakeTimers();
    try {
      const ctx = trainerDeps();
      const { lines, logger } = recordingLogger();
      // unreachable ×3 (starting), then up, unreachable ×3 (an outage), then up, then the test stops the loop.
      const answers = ['x', 'x', 'x', 'ok', 'x', 'x', 'x', 'ok'];
      const loop = new WorkLoop({
        ...ctx.deps,
        logger: logger as unknown as typeof ctx.deps.logger,
        orchestrator: {
          ...ctx.deps.orchestrator,
          leaseWork: async () => {
            const next = answers.shift();
            if (next === undefined) loop.stop();
            if (next === 'x') throw new Error('TrainerService is temporarily unavailable');
            return null;
          },
        },
      });
      const running = loop.run();
      await jest.runAllTimersAsync();
      await running;
      expect(lines).toEqual([
        'info waiting for the orchestrator to answer',
        'warn lost the orchestrator; retrying every second',
        'info the orchestrator answers again',
      ]);
    } finally {
      jest.useRealTimers();
    }
  });
});
