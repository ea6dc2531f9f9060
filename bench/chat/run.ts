/**
 * Chat benchmark (issue 15): the compatible chat surface through the gateway against its upstream called directly.
 * Run `pnpm --filter @whetstone/bench bench:chat --help` for what it measures and its settings.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fixtureDataset } from '@whetstone/testing';
import { ADMIN_TOKEN, grantCredits } from '../../test/e2e/compat-helpers';
import { signUpWithKey, startSystem } from '../../test/e2e/system';
import { apiOf, type Api } from '../lib/api';
import { breakdownOf, type Breakdown } from './breakdown';
import { cpuPerCall, type CpuPerCall } from '../serving/cpu';
import { closedLoop, httpPoster, pct, type LoadResult } from '../serving/load';
import { measureChoices, reportChoices } from './choices';
import { EMBED_MODEL, EMBED_UPSTREAM_MODEL, measureEmbeddings, reportEmbeddings } from './embeddings';
import { report } from './report';
import { streamPoster, type StreamedReply } from './stream';

const USAGE = `bench:chat — the compatible chat surface through the gateway against its upstream called directly

  pnpm --filter @whetstone/bench bench:chat [--no-decoder] [--help]

Starts the whole system as \`pnpm start\` does, with a fake OpenAI-compatible upstream (packages/testing, in its own
process, no artificial delay) as the provider of model 'bench-gpt', grants the team credits with the admin CLI,
and measures with one closed-loop load generator, the same body sent to both targets:
  - non-streamed /v1/chat/completions, short prompt: gateway vs the fake directly, c=1 (p50/p99, added p50,
    target ≤1 ms), in alternating rounds;
  - the same at c=50: throughput of both, and CPU ms per call by process;
  - streamed: time to the first content chunk, gateway vs direct, c=1 (added p50, target ≤2 ms);
  - the decoder prefix cache through the API: a LoRA decoder job trained on the greetings fixture, called with a
    system prompt carrying cache_control (miss, then the same call again: hit) and without it (none); every call is
    checked against its usage (miss writes, hit reads what the miss wrote, same text), or the bench stops;
  - OpenAI's n through the same job: one n = 4 JSON call against its four replies asked in turn with n = 1;
  - /v1/embeddings of the fake's embedding model ('bench-embed', task embedding), one short text, gateway vs the
    fake directly, c=1 (added p50), in alternating rounds.
Prints the machine's load average at the start and the end.

Settings (environment):
  BENCH_SECONDS         seconds of each c=50 run (default 10)
  BENCH_ROUND_SECONDS   seconds of each c=1 run (default 3)
  BENCH_ROUNDS          alternating direct/gateway c=1 rounds (default 3)
  BENCH_PREFIX_CALLS    none/miss/hit triples through the decoder (default 20)
  BENCH_CHOICE_ROUNDS   n = 4 rounds through the decoder (default 10)
  BENCH_LOG_FILE        where to write the system's logs at the end (default: not written)
Options:
  --no-decoder          skip the decoder (no training job)
  --help                this text`;

const MODEL = 'bench-gpt';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PREFIX_CALLS = Number(process.env.BENCH_PREFIX_CALLS ?? 20);

/** The short prompt of every upstream call (the fake echoes it). */
const BODY = { model: MODEL, messages: [{ role: 'user', content: 'Say hello to the benchmark.' }] };
const EXPECTED = 'Echo: SAY HELLO TO THE BENCHMARK.';

interface Upstream {
  url: string;
  apiKey: string;
  pid: number;
  stop(): void;
}

async function startUpstream(): Promise<Upstream> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--require', 'tsx/cjs', path.join(__dirname, 'fake-upstream.ts')],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`fake upstream exited with ${code}`)));
  });
  const { url, apiKey } = JSON.parse(line) as { url: string; apiKey: string };
  return { url, apiKey, pid: child.pid!, stop: () => child.stdin!.end() };
}

/** CPU seconds (user + system) of one process, from /proc. */
function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** cpuPerCall over the system's processes, plus the fake upstream's own process. */
async function cpuWithUpstream(portOffset: number, upstream: Upstream, run: () => Promise<LoadResult>) {
  const { result, cpu } = await cpuPerCall(portOffset, async () => {
    const before = cpuSecondsOf(upstream.pid);
    const r = await run();
    return { ...r, upstreamSeconds: cpuSecondsOf(upstream.pid) - before };
  });
  const byProcess: CpuPerCall['byProcess'] = [
    ...cpu.byProcess,
    ['fake upstream', (result.upstreamSeconds * 1000) / Math.max(1, result.requests)],
  ];
  byProcess.sort((a, b) => b[1] - a[1]);
  return { result, cpu: { byProcess, totalMs: byProcess.reduce((n, [, ms]) => n + ms, 0) } };
}

/** The call, counting its failures by message (`HTTP 503`, …), warm-up calls included. */
function countingFailures(call: () => Promise<void>) {
  const failures = new Map<string, number>();
  const counted = () =>
    call().catch((err: unknown) => {
      const key = err instanceof Error ? err.message : String(err);
      failures.set(key, (failures.get(key) ?? 0) + 1);
      throw err;
    });
  return { counted, failures };
}

/** A closed-loop run of a streamed call whose figure is the time to the first content chunk of its measured calls. */
async function ttfbLoop(seconds: number, call: () => Promise<StreamedReply>) {
  const samples: number[] = [];
  const result = await closedLoop(1, seconds, async () => samples.push((await call()).ttfbMs));
  // At c=1 the measured calls are the last ones; the ones before are closedLoop's warm-up.
  return { result, ttfbP50: pct(samples.slice(-result.requests), 50) };
}

/** Both targets answer the fake's text, JSON and streamed, before anything is timed: the labels are what is measured. */
async function checkSameReplies(
  targets: { url: string; headers: Record<string, string> }[],
  streams: (() => Promise<StreamedReply>)[],
) {
  const replies: string[] = [];
  for (const { url, headers } of targets) {
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(BODY) });
    const json = (await res.json()) as { choices?: { message: { content: string } }[] };
    replies.push(res.status === 200 ? String(json.choices?.[0]?.message.content) : `HTTP ${res.status}`);
  }
  for (const stream of streams) replies.push((await stream()).text);
  if (replies.some((r) => r !== EXPECTED))
    throw new Error(`direct and gateway do not all answer "${EXPECTED}": ${JSON.stringify(replies)}`);
}

async function measureUpstream(api: Api, upstream: Upstream, portOffset: number) {
  const direct = {
    url: `${upstream.url}/v1/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${upstream.apiKey}` },
  };
  const viaGateway = { url: `${api.base}/v1/chat/completions`, headers: api.headers };
  const body = JSON.stringify(BODY);
  const streamBody = JSON.stringify({ ...BODY, stream: true });
  const directCall = httpPoster(direct.url, direct.headers, body);
  const gatewayCall = httpPoster(viaGateway.url, viaGateway.headers, body);
  const directStream = streamPoster(direct.url, direct.headers, streamBody);
  const gatewayStream = streamPoster(viaGateway.url, viaGateway.headers, streamBody);

  await checkSameReplies([direct, viaGateway], [directStream, gatewayStream]);

  process.stderr.write(`c=1, ${ROUNDS} rounds of ${ROUND_SECONDS} s per target, non-streamed then streamed…\n`);
  const c1: { direct: LoadResult; gateway: LoadResult }[] = [];
  const ttfb: { direct: number; gateway: number }[] = [];
  const breakdowns: Breakdown[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const directRound = await closedLoop(1, ROUND_SECONDS, directCall);
    const { result, breakdown } = await breakdownOf(portOffset, () => closedLoop(1, ROUND_SECONDS, gatewayCall));
    c1.push({ direct: directRound, gateway: result });
    breakdowns.push(breakdown);
  }
  for (let r = 0; r < ROUNDS; r++) {
    ttfb.push({
      direct: (await ttfbLoop(ROUND_SECONDS, directStream)).ttfbP50,
      gateway: (await ttfbLoop(ROUND_SECONDS, gatewayStream)).ttfbP50,
    });
  }
  process.stderr.write(`c=50, ${SECONDS} s per target…\n`);
  const direct50 = await cpuWithUpstream(portOffset, upstream, () => closedLoop(50, SECONDS, directCall));
  const gateway = countingFailures(gatewayCall);
  const gateway50 = await cpuWithUpstream(portOffset, upstream, () => closedLoop(50, SECONDS, gateway.counted));
  return { c1, breakdowns, ttfb, direct50, gateway50, gatewayFailures: [...gateway.failures] };
}

/** Uploads the greetings fixture and trains a LoRA decoder job on it; returns the job id once complete. */
async function trainDecoder(api: Api): Promise<string> {
  process.stderr.write('training a LoRA decoder job on the greetings fixture…\n');
  const { upload_url } = (await api.post('/core/datasets/upload/url', {
    dataset_name: 'greetings',
    dataset_type: 'generation',
    format: 'jsonl',
    filename: 'greetings.jsonl',
  })) as { upload_url: string };
  await fetch(upload_url, { method: 'PUT', body: readFileSync(fixtureDataset('chat/greetings.jsonl')) });
  await api.post('/core/datasets/upload/process', { dataset_name: 'greetings' });
  while ((await api.get('/core/datasets/greetings/1')).status !== 'ready') await new Promise((r) => setTimeout(r, 200));
  const job = await api.post('/core/training-jobs', {
    base_model: 'whetstone-decoder-base',
    datasets: [{ name: 'greetings' }],
    training_type: 'lora',
    nr_epochs: 2,
    learning_rate: 0.01,
  });
  const id = job.id as string;
  if (!id) throw new Error(`training job not created: ${JSON.stringify(job)}`);
  for (;;) {
    const status = (await api.get(`/core/training-jobs/${id}`)).status;
    if (status === 'complete') return id;
    if (status === 'failed' || status === 'cancelled') throw new Error(`decoder job ${status}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * The decoder's prefix cache through the gateway: per round a fresh system prompt (all of one length), called
 * without a marker (none), with one (miss: the prefix is written), and the same again (hit: it is read). Streamed, so
 * each call gives its time to first content chunk, its total time and its usage.
 */
async function measurePrefixCache(api: Api, jobId: string) {
  const url = `${api.base}/v1/chat/completions`;
  const call = (system: string, marker: boolean) =>
    streamPoster(
      url,
      api.headers,
      JSON.stringify({
        model: jobId,
        max_tokens: 8,
        seed: 1,
        stream: true,
        messages: [
          {
            role: 'system',
            content: [{ type: 'text', text: system, ...(marker ? { cache_control: { type: 'ephemeral' } } : {}) }],
          },
          { role: 'user', content: 'hi, I am Ada' },
        ],
      }),
    )();
  // The job loads on its first call (425 until it is warm).
  for (;;) {
    const ok = await call('Greet the warm-up guest.', false).then(
      () => true,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const rows = { none: [] as StreamedReply[], miss: [] as StreamedReply[], hit: [] as StreamedReply[] };
  const read = (r: StreamedReply) => r.usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const written = (r: StreamedReply) => r.usage?.prompt_tokens_details?.cache_write_tokens ?? 0;
  for (let i = 0; i < PREFIX_CALLS; i++) {
    const system = `Greet guest ${String(i).padStart(4, '0')} warmly, by name.`;
    const none = await call(system, false);
    const miss = await call(system, true);
    const hit = await call(system, true);
    const ok =
      read(none) === 0 &&
      written(none) === 0 &&
      read(miss) === 0 &&
      written(miss) > 0 &&
      read(hit) === written(miss) &&
      written(hit) === 0 &&
      miss.text === none.text &&
      hit.text === none.text;
    if (!ok) throw new Error(`call ${i}: not a miss then a hit: ${JSON.stringify({ none, miss, hit })}`);
    rows.none.push(none);
    rows.miss.push(miss);
    rows.hit.push(hit);
  }
  return {
    rows,
    system: 'Greet guest 0000 warmly, by name.',
    writeTokens: written(rows.miss[0]!),
    readTokens: read(rows.hit[0]!),
  };
}

export type UpstreamFigures = Awaited<ReturnType<typeof measureUpstream>>;
export type PrefixFigures = Awaited<ReturnType<typeof measurePrefixCache>>;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) return console.log(USAGE);
  const unknown = args.filter((a) => a !== '--no-decoder');
  if (unknown.length) throw new Error(`unknown option ${unknown.join(' ')}\n\n${USAGE}`);
  const loadAtStart = loadavg();

  const upstream = await startUpstream();
  process.stderr.write('starting the system…\n');
  const price = { unit: '1m', input: 100, output: 400 };
  const system = await startSystem({
    env: {
      ADMIN_TOKEN,
      UPSTREAM_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
      BENCH_FAKE_OPENAI_KEY: upstream.apiKey,
      CATALOG_UPSTREAMS: JSON.stringify([
        {
          name: 'bench-fake-openai',
          kind: 'openai-compatible',
          base_url: upstream.url,
          api_key_env: 'BENCH_FAKE_OPENAI_KEY',
          models: [
            { id: MODEL, price },
            {
              id: EMBED_MODEL,
              upstream_model: EMBED_UPSTREAM_MODEL,
              task: 'embedding',
              price: { unit: '1m', input: 2 },
            },
          ],
        },
      ]),
      RATE_LIMIT_CHAT_PER_MINUTE: '10000000',
      RATE_LIMIT_INFERENCE_PER_MINUTE: '10000000',
      RATE_LIMIT_IP_PER_MINUTE: '10000000',
      RATE_LIMIT_IP_PER_HOUR: '100000000',
      RATE_LIMIT_EDGE_PER_MINUTE: '10000000',
      LOG_LEVEL: 'warn',
    },
  });
  try {
    const portOffset = Number(new URL(system.baseUrl).port) - 8080;
    const account = await signUpWithKey(system.baseUrl, 'bench-chat');
    await grantCredits(system.baseUrl, account.teamId, 1_000_000);
    const api = apiOf(system.baseUrl, account.key);
    const upstreamFigures = await measureUpstream(api, upstream, portOffset);
    const embeddings = await measureEmbeddings(api, upstream, ROUNDS, ROUND_SECONDS);
    const jobId = args.includes('--no-decoder') ? null : await trainDecoder(api);
    const prefix = jobId ? await measurePrefixCache(api, jobId) : null;
    const choices = jobId ? await measureChoices(api, jobId) : null;
    report(upstreamFigures, prefix, { start: loadAtStart, end: loadavg() });
    reportEmbeddings(embeddings);
    if (choices) reportChoices(choices);
  } finally {
    if (process.env.BENCH_LOG_FILE) writeFileSync(process.env.BENCH_LOG_FILE, system.logs());
    await system.stop();
    upstream.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
