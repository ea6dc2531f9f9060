/** bench:serving's printed table: model-server direct and through the gateway side by side, against the targets. */
import type { ColdLoads, InProcess, Serving } from './run';
import { pct, type LoadResult } from './load';

const f = (x: number) => x.toFixed(2);
const rate = (r: LoadResult) => `${Math.round(r.perSecond)} req/s (p50 ${f(r.p50)} ms, errors ${r.errors})`;
const met = (ok: boolean) => (ok ? 'met' : 'MISSED');
const BACKGROUND = 'key-billing.CheckSpendable';

export function report(s: Serving, inProcess: InProcess, cold: ColdLoads, runningAfter: number): void {
  const { direct1, gateway1, direct50, gateway50 } = s.load;
  const added = pct(s.viaGateway, 50) - pct(s.directMs, 50);
  const keep = gateway50.perSecond / direct50.perSecond;
  const scale = direct50.perSecond / direct1.perSecond;
  const hops = s.hops.reduce((n, [, x]) => n + x, 0);
  // The router answers CheckSpendable from its cache and refreshes it off the request path (about once a second
  // per team, and once for a team's first call), so only the other calls are hops a warm request waits for.
  const background = s.hops.filter(([k]) => k === BACKGROUND).reduce((n, [, x]) => n + x, 0);
  const onPath = hops - background;
  console.log('serving benchmark (30-word text, schema of 3 entity types, 2 cores shared by all processes)');
  console.log('  trained job                 | model-server direct (gRPC)       | through the gateway /inference');
  console.log(
    `  c=1, latency p50 / p99      | ${f(pct(s.directMs, 50))} / ${f(pct(s.directMs, 99))} ms`.padEnd(63) +
      `| ${f(pct(s.viaGateway, 50))} / ${f(pct(s.viaGateway, 99))} ms`,
  );
  console.log(
    `  c=1, ${direct1.seconds} s closed loop`.padEnd(30) + `| ${rate(direct1)}`.padEnd(35) + `| ${rate(gateway1)}`,
  );
  console.log(
    `  c=50, ${direct50.seconds} s closed loop`.padEnd(30) + `| ${rate(direct50)}`.padEnd(35) + `| ${rate(gateway50)}`,
  );
  console.log(`  added by gateway + router, c=1 p50: ${f(added)} ms (target ≤1.0: ${met(added <= 1)})`);
  console.log(`  gateway c=50 / direct c=50 throughput: ${f(keep)}× (target ≥0.7: ${met(keep >= 0.7)})`);
  for (const [label, cpu] of [
    ['direct', s.cpu.direct50],
    ['gateway', s.cpu.gateway50],
  ] as const) {
    const parts = cpu.byProcess.map(([name, ms]) => `${name} ${f(ms)}`).join(', ');
    console.log(`  CPU ms per call, ${label} c=50: ${f(cpu.totalMs)} in all: ${parts}`);
  }
  console.log(`  model-server c=50 / c=1 throughput: ${f(scale)}× (target ≥2, micro-batching: ${met(scale >= 2)})`);
  console.log(
    `  zero-shot base, c=1 p50: model-server ${f(pct(s.baseDirect, 50))} ms, through the gateway ${f(pct(s.baseGateway, 50))} ms`,
  );
  console.log(
    `  trained model in process (1 core): one text p50 ${f(pct(inProcess.one, 50))} ms; per text in a batch of 50 p50 ${f(pct(inProcess.perTextInBatch, 50))} ms`,
  );
  console.log(
    `  cold adapter load: deployment of a never-called job to active ${Math.round(cold.deployMs)} ms; LoadModel under fresh ids to READY p50 ${Math.round(pct(cold.samples, 50))} ms, max ${Math.round(Math.max(...cold.samples))} ms (target ≤2000)`,
  );
  console.log(`  training: requested → running ${Math.round(runningAfter)} ms (polled every 20 ms; target ≤1000)`);
  console.log(
    `  gRPC calls per warm /inference on the trained job (200 calls): ${s.hops.map(([k, n]) => `${k} ${n.toFixed(2)}`).join(', ')}`,
  );
  console.log(
    `  gRPC hops a warm /inference waits for: ${onPath.toFixed(2)} (target ≤2: ${met(onPath <= 2)}); ` +
      `all calls including background spendable refreshes: ${hops.toFixed(2)}`,
  );
}
