/**
 * Measures how long one service takes to serve again after a crash: starts the system as the e2e
 * tests do (test/e2e/system.ts), SIGKILLs the inference-router, and times until POST /inference
 * answers 200 again, polling every 100 ms. Usage:
 *
 *   node --require tsx/cjs scripts/measure-restart.ts [rounds]
 *
 * Prints one line per round and a JSON summary; docs/reliability.md keeps the figures.
 */
import { signUpWithKey, startSystem } from '../test/e2e/system';

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const system = await startSystem({ redis: false });
  try {
    const { key } = await signUpWithKey(system.baseUrl, 'restart');
    const infer = () =>
      fetch(`${system.baseUrl}/inference`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({
          model_id: 'whetstone-extract-base',
          text: 'Ada Lovelace worked in London.',
          schema: { entities: ['person'] },
        }),
        signal: AbortSignal.timeout(10_000),
      }).then(
        (r) => r.status,
        () => 0,
      );
    await until(async () => (await infer()) === 200, 120_000);

    const results: { seconds: number; statuses: Record<number, number> }[] = [];
    for (let round = 1; round <= rounds; round++) {
      const [pid] = system.pids('inference-router');
      if (!pid) throw new Error('no inference-router process');
      const logsBefore = system.logs().length;
      const killedAt = performance.now();
      process.kill(pid, 'SIGKILL');
      const statuses: Record<number, number> = {};
      for (;;) {
        const status = await infer();
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === 200 && system.pids('inference-router').some((p) => p !== pid)) break;
        if (performance.now() - killedAt > 120_000) throw new Error('not serving 120 s after the kill');
        await new Promise((r) => setTimeout(r, 100));
      }
      const seconds = (performance.now() - killedAt) / 1000;
      // A slow round is worth explaining: the router's own lines since the kill (crashes, restarts).
      if (seconds > 10)
        for (const line of system.logs().slice(logsBefore).split('\n'))
          if (line.includes('inference-router')) process.stdout.write(`  ${line.slice(0, 400)}\n`);
      results.push({ seconds, statuses });
      process.stdout.write(
        `round ${round}: serving again ${seconds.toFixed(2)} s after kill -9 ${JSON.stringify(statuses)}\n`,
      );
      // Past the supervisor's "healthy" mark would reset its backoff; rounds here measure the first restart's.
      await new Promise((r) => setTimeout(r, 2_000));
    }
    const sorted = results.map((r) => r.seconds).sort((a, b) => a - b);
    process.stdout.write(
      `${JSON.stringify({ rounds, median_s: sorted[Math.floor(sorted.length / 2)], min_s: sorted[0], max_s: sorted.at(-1) })}\n`,
    );
  } finally {
    await system.stop();
  }
}

async function until(probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 250));
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
