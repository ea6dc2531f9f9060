/** bench:chat's printed table: the gateway against its upstream called directly, and the decoder prefix cache. */
import { pct, type LoadResult } from '../serving/load';
import type { PrefixFigures, UpstreamFigures } from './run';
import type { StreamedReply } from './stream';

const f = (x: number) => x.toFixed(2);
const met = (ok: boolean) => (ok ? 'met' : 'MISSED');
const median = (xs: number[]) => pct(xs, 50);
const rate = (r: LoadResult) =>
  `${Math.round(r.perSecond)} req/s (p50 ${f(r.p50)} ms, p99 ${f(r.p99)} ms, errors ${r.errors})`;
const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');

export function report(
  u: UpstreamFigures,
  prefix: PrefixFigures | null,
  loads: { start: number[]; end: number[] },
): void {
  const p50 = (side: 'direct' | 'gateway') => median(u.c1.map((r) => r[side].p50));
  const p99 = (side: 'direct' | 'gateway') => median(u.c1.map((r) => r[side].p99));
  const added = median(u.c1.map((r) => r.gateway.p50 - r.direct.p50));
  const addedTtfb = median(u.ttfb.map((r) => r.gateway - r.direct));
  const rounds = u.c1.length;
  console.log(`chat benchmark (load average 1/5/15 min: start ${load(loads.start)}, end ${load(loads.end)})`);
  console.log('  /v1/chat/completions, short prompt    | fake upstream direct              | through the gateway');
  console.log(
    `  c=1, non-streamed, p50 / p99          | ${f(p50('direct'))} / ${f(p99('direct'))} ms`.padEnd(76) +
      `| ${f(p50('gateway'))} / ${f(p99('gateway'))} ms   (median of ${rounds} alternating rounds)`,
  );
  for (const [i, r] of u.c1.entries())
    console.log(
      `    round ${i + 1}: p50 ${f(r.direct.p50)} vs ${f(r.gateway.p50)} ms, ${Math.round(r.direct.perSecond)} vs ${Math.round(r.gateway.perSecond)} req/s`,
    );
  console.log(`  added by the gateway, non-streamed c=1 p50: ${f(added)} ms (target ≤1 ms: ${met(added <= 1)})`);
  const b = (k: keyof UpstreamFigures['breakdowns'][number]) => median(u.breakdowns.map((x) => x[k]));
  console.log(
    `  where a gateway call's time goes at c=1 (services' histograms, means): ${f(b('gatewayMs'))} ms per call inside the gateway, ` +
      `of which the router's metering commits ${f(b('commitsPerCall'))} per call of ${f(b('commitMs'))} ms each`,
  );
  console.log(
    `  streamed, time to first content chunk, c=1 p50: direct ${f(median(u.ttfb.map((r) => r.direct)))} ms, gateway ${f(median(u.ttfb.map((r) => r.gateway)))} ms`,
  );
  console.log(
    `  added by the gateway, streamed first-content p50: ${f(addedTtfb)} ms (target ≤2 ms: ${met(addedTtfb <= 2)})`,
  );
  console.log(`  c=50, ${u.direct50.result.seconds} s, direct:  ${rate(u.direct50.result)}`);
  console.log(`  c=50, ${u.gateway50.result.seconds} s, gateway: ${rate(u.gateway50.result)}`);
  if (u.gatewayFailures.length)
    console.log(
      `  gateway c=50 failures (warm-up included): ${u.gatewayFailures.map(([k, n]) => `${k} ×${n}`).join(', ')}`,
    );
  console.log(
    `  gateway c=50 / direct c=50 throughput: ${f(u.gateway50.result.perSecond / u.direct50.result.perSecond)}×`,
  );
  for (const [label, cpu] of [
    ['direct', u.direct50.cpu],
    ['gateway', u.gateway50.cpu],
  ] as const) {
    const parts = cpu.byProcess.map(([name, ms]) => `${name} ${f(ms)}`).join(', ');
    console.log(`  CPU ms per call, ${label} c=50: ${f(cpu.totalMs)} in all: ${parts}`);
  }
  if (!prefix) return console.log('  decoder prefix cache: skipped (--no-decoder)');
  const row = (label: string, xs: StreamedReply[]) =>
    `    ${label.padEnd(5)} first content ${f(median(xs.map((x) => x.ttfbMs)))} ms, total ${f(median(xs.map((x) => x.totalMs)))} ms`;
  const { none, miss, hit } = prefix.rows;
  const speedup = median(miss.map((x) => x.ttfbMs)) / median(hit.map((x) => x.ttfbMs));
  console.log(
    `  decoder prefix cache through the gateway (LoRA decoder job, system prompt "${prefix.system}" as a breakpoint, ` +
      `user "hi, I am Ada", 8 tokens; medians of ${miss.length} checked triples):`,
  );
  console.log(row('none', none));
  console.log(`${row('miss', miss)}, usage cache_write_tokens ${prefix.writeTokens}, cached_tokens 0`);
  console.log(`${row('hit', hit)}, usage cached_tokens ${prefix.readTokens}, cache_write_tokens 0`);
  console.log(`    hit vs miss, time to first content: ${f(speedup)}× faster`);
}
