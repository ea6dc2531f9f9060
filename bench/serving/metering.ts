/**
 * Metering benchmark (issue 14): what recording usage costs the serving path.
 * Starts the whole system exactly as `pnpm start` does and calls the zero-shot
 * base (no training needed), then reports
 *   - /inference p50/p99 at c=1 through the gateway (and the model-server direct, for reference),
 *   - /inference throughput at c=50 for 10 s, and its non-2xx count,
 *   - the router's metering group commits during the c=50 run: how many, rows per commit,
 *     commit latency, back-pressure waits and rejections (when the build has them).
 *
 *   pnpm --filter @whetstone/bench bench:metering
 */
import autocannon from 'autocannon';
import { ModelServerService } from '@whetstone/proto/inference/v1';
import { createRpcClient } from '@whetstone/rpc';
import { signUpWithKey, startSystem } from '../../test/e2e/system';

const TEXT = 'Ada Lovelace and Charles Babbage met at the Royal Society in London on a cold morning.';
const SCHEMA = { entities: ['person', 'organization', 'location'] };
const METRIC = 'inference_router_metering';

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function timed(n: number, call: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 50; i++) await call();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await call();
    out.push(performance.now() - t);
  }
  return out;
}

/** The router's metering metrics now: `name{labels} value` lines of the group commit, by full series name. */
async function meteringSeries(portOffset: number): Promise<Map<string, number>> {
  const text = await fetch(`http://127.0.0.1:${9454 + portOffset}/metrics`).then(
    (r) => r.text(),
    () => '',
  );
  const series = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`^(${METRIC}_\\w+(?:\\{[^}]*\\})?) ([\\d.e+-]+)$`, 'gm')))
    series.set(m[1]!, Number(m[2]));
  return series;
}

function commitReport(before: Map<string, number>, after: Map<string, number>): string {
  if (after.size === 0) return '  metering group commits: not in this build (in-memory queue, flushed every 10 ms)';
  const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
  const commits = delta(`${METRIC}_commit_batch_rows_count`);
  const rows = delta(`${METRIC}_commit_batch_rows_sum`);
  // Rows per commit as a distribution: the share of commits at or under each bucket bound.
  const buckets = [...after.keys()]
    .filter((k) => k.startsWith(`${METRIC}_commit_batch_rows_bucket`))
    .map((k) => ({ le: /le="([^"]+)"/.exec(k)![1]!, n: delta(k) }));
  const median = buckets.find((b) => b.n >= commits / 2)?.le ?? '?';
  const p90 = buckets.find((b) => b.n >= commits * 0.9)?.le ?? '?';
  const seconds = delta(`${METRIC}_commit_seconds_sum`);
  return [
    `  metering group commits during c=50: ${commits} commits, ${rows} rows (2 per call), ${(rows / Math.max(1, commits)).toFixed(1)} rows per commit on average`,
    `    rows per commit: median ≤${median}, p90 ≤${p90}; commit latency mean ${((seconds / Math.max(1, commits)) * 1000).toFixed(2)} ms`,
    `    back-pressure: ${delta(`${METRIC}_backpressure_waits_total`)} waits, ${delta(`${METRIC}_backpressure_rejections_total`)} rejections; ${delta(`${METRIC}_commit_failures_total`)} failed commits`,
  ].join('\n');
}

async function main(): Promise<void> {
  process.stderr.write('starting the system…\n');
  const system = await startSystem({
    env: {
      RATE_LIMIT_INFERENCE_PER_MINUTE: '10000000',
      RATE_LIMIT_IP_PER_MINUTE: '10000000',
      RATE_LIMIT_EDGE_PER_MINUTE: '10000000',
      LOG_LEVEL: 'warn',
    },
  });
  try {
    const portOffset = Number(new URL(system.baseUrl).port) - 8080;
    const { key } = await signUpWithKey(system.baseUrl, 'bench');
    const headers = { 'content-type': 'application/json', 'x-api-key': key };
    const body = JSON.stringify({ model_id: 'whetstone-extract-base', text: TEXT, schema: SCHEMA });
    const url = `${system.baseUrl}/inference`;
    const direct = createRpcClient(ModelServerService, { addr: `127.0.0.1:${50055 + portOffset}`, caller: 'bench' });
    const directMs = await timed(300, () =>
      direct.extract({
        model: { modelId: 'whetstone-extract-base', bucket: '', key: '' },
        texts: [TEXT],
        schemaJson: Buffer.from(JSON.stringify(SCHEMA)),
      }),
    );
    const atStart = await meteringSeries(portOffset);
    const gatewayMs = await timed(500, () =>
      fetch(url, { method: 'POST', headers, body }).then((r) => r.arrayBuffer()),
    );
    const before = await meteringSeries(portOffset);
    const load = await autocannon({ url, method: 'POST', headers, body, connections: 50, duration: 10 });
    const after = await meteringSeries(portOffset);

    const f = (x: number) => x.toFixed(2);
    console.log('metering benchmark: zero-shot base, 16-word text, 3 entity types, every process on the same cores');
    console.log(`  model-server direct, c=1: p50 ${f(pct(directMs, 50))} ms, p99 ${f(pct(directMs, 99))} ms`);
    console.log(
      `  /inference through the gateway, c=1: p50 ${f(pct(gatewayMs, 50))} ms, p99 ${f(pct(gatewayMs, 99))} ms`,
    );
    console.log(
      `  /inference through the gateway, c=50 for 10 s: ${Math.round(load.requests.average)} req/s, p50 ${load.latency.p50} ms, p99 ${load.latency.p99} ms, non-2xx ${load.non2xx}`,
    );
    if (before.size > 0) {
      const d = (name: string) => (before.get(name) ?? 0) - (atStart.get(name) ?? 0);
      const commits = Math.max(1, d(`${METRIC}_commit_batch_rows_count`));
      console.log(
        `  metering at c=1: ${d(`${METRIC}_commit_batch_rows_sum`) / commits} rows per commit, commit latency mean ${f((d(`${METRIC}_commit_seconds_sum`) / commits) * 1000)} ms (what each call waits for)`,
      );
    }
    console.log(commitReport(before, after));
  } finally {
    await system.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
