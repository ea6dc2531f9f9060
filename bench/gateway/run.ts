/**
 * pnpm --filter @whetstone/bench bench:gateway
 * An authenticated request through the gateway (auth cache hit + Redis rate
 * limit) against a bare express route, measured in the same run with autocannon.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);

async function load(url: string, headers: Record<string, string>, connections: number) {
  const result = await autocannon({ url, headers, connections, duration: DURATION, pipelining: 1 });
  return {
    mean: result.latency.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    rps: result.requests.average,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

async function main(): Promise<void> {
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, 'servers.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, LOG_LEVEL: 'silent' },
  });
  const line = await new Promise<string>((resolve) =>
    readline.createInterface({ input: child.stdout! }).once('line', resolve),
  );
  const { gateway, bare, key } = JSON.parse(line) as { gateway: string; bare: string; key: string };
  try {
    const auth = { 'x-api-key': key };
    await load(`${gateway}/bench/ping`, auth, 10); // warm-up: JIT, auth cache, connections
    const rows: [string, Awaited<ReturnType<typeof load>>][] = [];
    for (const c of [1, 50]) {
      rows.push([`bare express, c=${c}`, await load(`${bare}/bench/ping`, {}, c)]);
      rows.push([
        `gateway (auth + ${process.env.BENCH_REDIS === '0' ? 'in-process' : 'Redis'} rate limit), c=${c}`,
        await load(`${gateway}/bench/ping`, auth, c),
      ]);
    }
    console.log(`\nGateway overhead (${DURATION} s per row, autocannon in a separate process from the servers)\n`);
    console.log('| scenario | mean ms | p50 ms | p99 ms | req/s | non-2xx | errors |');
    console.log('|---|---|---|---|---|---|---|');
    for (const [name, r] of rows)
      console.log(
        `| ${name} | ${r.mean.toFixed(3)} | ${r.p50} | ${r.p99} | ${Math.round(r.rps)} | ${r.non2xx} | ${r.errors} |`,
      );
    // autocannon's percentiles are whole milliseconds; at c=1 the per-request time is 1/throughput, which resolves µs.
    const perRequest = (r: { rps: number }) => 1000 / r.rps;
    const added = perRequest(rows[1]![1]) - perRequest(rows[0]![1]);
    console.log(`\nadded latency per request at c=1 (from 1/throughput): ${added.toFixed(3)} ms (target ≤0.5 ms p50)`);
    console.log(`gateway req/s at c=50: ${Math.round(rows[3]![1].rps)} (target ≥5,000 per gateway process)`);
  } finally {
    child.kill('SIGTERM');
  }
}

void main();
