/**
 * What tracing costs on the inference path (issue 18): the whole system as `pnpm start` runs it, twice, once
 * with tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT) and once exporting every span over OTLP/HTTP to a receiver
 * in this process that discards them; the same closed-loop /inference load through the gateway on the
 * zero-shot base model at c=1 and c=10 each time, with the CPU each process spent per call at c=10 (which
 * other load on the machine disturbs less than calls/s do). The runs are sequential on a shared machine, so
 * compare the figures of one invocation only.
 *
 *   pnpm --filter @whetstone/bench bench:tracing
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { signUpWithKey, startSystem } from '../../test/e2e/system';
import { cpuPerCall, type CpuPerCall } from './cpu';
import { closedLoop, httpPoster, type LoadResult } from './load';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BODY = JSON.stringify({
  model_id: 'whetstone-extract-base',
  text: 'Ada Lovelace and Charles Babbage met at the Royal Society in London on a cold morning.',
  schema: { entities: ['person', 'organization', 'location'] },
});

/** An OTLP/HTTP endpoint that counts what it is sent and keeps nothing. */
async function sink(): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function measure(otel: Record<string, string>): Promise<{ loads: LoadResult[]; cpu: CpuPerCall }> {
  const system = await startSystem({
    env: {
      RATE_LIMIT_INFERENCE_PER_MINUTE: '10000000',
      RATE_LIMIT_IP_PER_MINUTE: '10000000',
      RATE_LIMIT_EDGE_PER_MINUTE: '10000000',
      FREE_ALLOWANCE_CREDITS: '100000',
      ...otel,
    },
  });
  try {
    const { key } = await signUpWithKey(system.baseUrl, 'bench-tracing');
    const call = httpPoster(
      `${system.baseUrl}/inference`,
      { 'content-type': 'application/json', 'x-api-key': key },
      BODY,
    );
    const portOffset = Number(new URL(system.baseUrl).port) - 8080;
    const c1 = await closedLoop(1, SECONDS, call);
    const c10 = await cpuPerCall(portOffset, () => closedLoop(10, SECONDS, call));
    return { loads: [c1, c10.result], cpu: c10.cpu };
  } finally {
    await system.stop();
  }
}

async function main(): Promise<void> {
  const receiver = await sink();
  try {
    const off = await measure({});
    const on = await measure({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    const row = (label: string, r: LoadResult) =>
      `| ${label} | ${r.concurrency} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.errors} |`;
    console.log(`tracing overhead, ${SECONDS} s per run, load average ${loadavg()[0]!.toFixed(1)} at the end`);
    console.log('| tracing | concurrency | calls/s | p50 ms | p99 ms | errors |');
    console.log('|---|---|---|---|---|---|');
    for (let i = 0; i < off.loads.length; i++) {
      console.log(row('off', off.loads[i]!));
      console.log(row('on', on.loads[i]!));
    }
    const services = (cpu: CpuPerCall) =>
      cpu.byProcess
        .filter(([name]) => name !== 'load generator' && name !== 'postgres')
        .map(([name, ms]) => `${name} ${ms.toFixed(2)}`)
        .join(', ');
    console.log(`CPU ms per call at c=10, off: total ${off.cpu.totalMs.toFixed(2)} (${services(off.cpu)})`);
    console.log(`CPU ms per call at c=10, on: total ${on.cpu.totalMs.toFixed(2)} (${services(on.cpu)})`);
    console.log(`OTLP export requests received while tracing was on: ${receiver.requests()}`);
  } finally {
    await receiver.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
