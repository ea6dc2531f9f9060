/**
 * Message-batch benchmark: how fast the router's batch worker answers a batch, against the same calls made one by
 * one through POST /v1/messages at the worker's concurrency. Run with --help for what it measures.
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { startFakeAnthropicUpstream, startFakeOpenAIUpstream } from '@whetstone/testing';
import { ANTHROPIC_MODEL, grantCredits, upstreamEnv } from '../../test/e2e/compat-helpers';
import { signUpWithKey, startSystem } from '../../test/e2e/system';
import { pct } from '../serving/load';

const USAGE = `bench:batches — Anthropic's Message Batches and OpenAI's Batch API through the whole system

  pnpm --filter @whetstone/bench bench:batches [--help]

Starts the whole system as \`pnpm start\` does, with fake OpenAI- and Anthropic-compatible upstreams
(packages/testing, in this process, no artificial delay) as providers, grants the team credits, then:
  - creates batches of BENCH_REQUESTS Messages requests (model '${ANTHROPIC_MODEL}', a short prompt; every
    BENCH_SLOW_EVERY-th one is a slow call, answered after BENCH_SLOW_MS) and
    measures the create call, the time until processing_status is "ended" (polled every 50 ms), requests answered
    per second, and reading the JSON Lines results back; every result must have succeeded;
  - with BENCH_SURFACE openai or both, does the same through OpenAI's Files and Batch APIs: uploads a JSON Lines
    file of the same requests as chat completions (POST /v1/files), creates a batch of it (POST /v1/batches: the
    file is read back and every line checked), polls until "completed" and reads the output file; it measures the
    upload, the create call (with the check of every line), the time until completed, and the output file read;
  - makes the same number of POST /v1/messages calls with c = the worker's concurrency (BATCH_CONCURRENCY,
    4 by default) as the baseline: what the worker does, made by a client;
  - with BENCH_SURFACE embeddings instead: OpenAI batches of BENCH_REQUESTS /v1/embeddings requests (one short
    text each, model whetstone-extract-base, run on the model-server), measured as above, against the same calls
    through POST /v1/embeddings with c = BATCH_CONCURRENCY.
Prints the machine's load average at the start and the end. Nothing here is timed by a test.

Settings (environment):
  BENCH_REQUESTS   requests per batch (default 1000)
  BENCH_BATCHES    batches, run one after another (default 3)
  BENCH_SLOW_EVERY every how many requests one is slow (default 10; 0: none)
  BENCH_SURFACE    messages, openai, both (default: each batch once per surface, alternating) or embeddings
  BENCH_SLOW_MS    how long the fake upstream takes to answer a slow one (default 500)
  BENCH_CREATE_ONLY=1  OpenAI batches only: upload and create each batch (the gateway checks every line while a
                   probe calls GET /livez), print the create time, the probe's latencies and the gateway's
                   peak resident memory, then cancel it; no baseline
Options:
  --help           this text`;

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 3);
const CONCURRENCY = Number(process.env.BATCH_CONCURRENCY ?? 4);
const SLOW_EVERY = Number(process.env.BENCH_SLOW_EVERY ?? 10);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 500);
const SURFACE = process.env.BENCH_SURFACE ?? 'both';
const CREATE_ONLY = process.env.BENCH_CREATE_ONLY === '1';
const slow = (i: number) => SLOW_EVERY > 0 && i % SLOW_EVERY === 0;

const params = (i: number) => ({
  model: ANTHROPIC_MODEL,
  max_tokens: 16,
  messages: [{ role: 'user', content: `benchmark call ${i}${slow(i) ? ' slow' : ''}` }],
});

const embedParams = (i: number) => ({
  model: 'whetstone-extract-base',
  input: `benchmark text ${i}: my card payment was declined twice`,
});

type Api = (path: string, init?: RequestInit) => Promise<Response>;

/** One batch: created, polled until ended, its results read back; its row of the table. */
async function runBatch(api: Api, b: number): Promise<string[]> {
  const requests = Array.from({ length: REQUESTS }, (_, i) => ({ custom_id: `r${i}`, params: params(i) }));
  const t0 = performance.now();
  const created = await api('/v1/messages/batches', { method: 'POST', body: JSON.stringify({ requests }) });
  if (created.status !== 200) throw new Error(`create: ${created.status} ${await created.text()}`);
  const { id } = (await created.json()) as { id: string };
  const createMs = performance.now() - t0;
  for (;;) {
    const batch = (await (await api(`/v1/messages/batches/${id}`)).json()) as { processing_status: string };
    if (batch.processing_status === 'ended') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const endedMs = performance.now() - t0;
  const t1 = performance.now();
  const text = await (await api(`/v1/messages/batches/${id}/results`)).text();
  const resultsMs = performance.now() - t1;
  const lines = text.trim().split('\n');
  const succeeded = lines.filter((l) => (JSON.parse(l) as { result: { type: string } }).result.type === 'succeeded');
  if (succeeded.length !== REQUESTS) throw new Error(`batch ${id}: ${succeeded.length} of ${REQUESTS} succeeded`);
  return [
    `message batch ${b + 1}`,
    createMs.toFixed(0),
    (endedMs / 1000).toFixed(2),
    (REQUESTS / (endedMs / 1000)).toFixed(0),
    resultsMs.toFixed(0),
    (text.length / 1024).toFixed(0),
  ];
}

/**
 * One OpenAI batch of the same requests as chat completions (or of embeddings requests): uploaded, created, polled,
 * its output read.
 */
async function runOpenAiBatch(
  api: Api,
  b: number,
  url = '/v1/chat/completions',
  body: (i: number) => object = params,
): Promise<string[]> {
  const lines = Array.from({ length: REQUESTS }, (_, i) =>
    JSON.stringify({ custom_id: `r${i}`, method: 'POST', url, body: body(i) }),
  );
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([lines.join('\n')]), 'requests.jsonl');
  const t0 = performance.now();
  const uploaded = await api('/v1/files', { method: 'POST', body: form });
  if (uploaded.status !== 200) throw new Error(`upload: ${uploaded.status} ${await uploaded.text()}`);
  const file = (await uploaded.json()) as { id: string; bytes: number };
  const uploadMs = performance.now() - t0;
  const t1 = performance.now();
  // While the gateway checks every line, a probe asks its /livez every 10 ms: how long other calls wait meanwhile.
  const probe = probeWhile(api);
  const created = await api('/v1/batches', {
    method: 'POST',
    body: JSON.stringify({ input_file_id: file.id, endpoint: url, completion_window: '24h' }),
  });
  const createMs = performance.now() - t1;
  const stalls = await probe.stop();
  if (created.status !== 200) throw new Error(`create: ${created.status} ${await created.text()}`);
  const { id, status } = (await created.json()) as { id: string; status: string };
  if (status !== 'in_progress') throw new Error(`batch ${id}: ${status}`);
  const createCell = `${createMs.toFixed(0)} (GET /livez meanwhile: ${stalls.count} calls, p50 ${stalls.p50.toFixed(1)} ms, max ${stalls.max.toFixed(0)} ms; gateway peak RSS ${await gatewayRssMb()} MB)`;
  const what = `openai batch ${b + 1}${url === '/v1/embeddings' ? ' of embeddings' : ''} (upload ${uploadMs.toFixed(0)} ms, ${(file.bytes / 1024).toFixed(0)} KiB)`;
  if (CREATE_ONLY) {
    await api(`/v1/batches/${id}/cancel`, { method: 'POST' });
    return [what, createCell, '', '', '', ''];
  }
  let batch: { status: string; output_file_id: string | null };
  for (;;) {
    batch = (await (await api(`/v1/batches/${id}`)).json()) as typeof batch;
    if (batch.status !== 'in_progress') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const endedMs = performance.now() - t1;
  const t2 = performance.now();
  const text = await (await api(`/v1/files/${batch.output_file_id}/content`)).text();
  const outputMs = performance.now() - t2;
  const answered = text.trim().split('\n').length;
  if (batch.status !== 'completed' || answered !== REQUESTS)
    throw new Error(`batch ${id}: ${batch.status}, ${answered} of ${REQUESTS} answered`);
  return [
    what,
    createCell,
    (endedMs / 1000).toFixed(2),
    (REQUESTS / (endedMs / 1000)).toFixed(0),
    outputMs.toFixed(0),
    (text.length / 1024).toFixed(0),
  ];
}

/** The gateway process's peak resident memory so far in MB (Linux /proc), or '?'. */
async function gatewayRssMb(): Promise<string> {
  const status = gatewayPid ? await readFile(`/proc/${gatewayPid}/status`, 'utf8').catch(() => '') : '';
  const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
  return kb ? (Number(kb) / 1024).toFixed(0) : '?';
}
let gatewayPid = 0;

/** Calls GET /livez one after another, 10 ms apart, until stopped: their latencies while something else runs. */
function probeWhile(api: Api): { stop(): Promise<{ count: number; p50: number; max: number }> } {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      await (await api('/livez')).arrayBuffer();
      latencies.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { count: latencies.length, p50: pct(latencies, 50), max: Math.max(0, ...latencies) };
    },
  };
}

/** The baseline: the same number of calls through POST /v1/messages (or another path), `CONCURRENCY` at a time. */
async function runDirect(
  api: Api,
  path = '/v1/messages',
  body: (i: number) => object = params,
): Promise<{ seconds: number; p50: number }> {
  let sent = 0;
  const latencies: number[] = [];
  const t2 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < REQUESTS) {
        const i = sent++;
        const t = performance.now();
        const res = await api(path, { method: 'POST', body: JSON.stringify(body(i)) });
        if (res.status !== 200) throw new Error(`POST ${path}: HTTP ${res.status}`);
        await res.arrayBuffer();
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { seconds: (performance.now() - t2) / 1000, p50: pct(latencies, 50) };
}

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(USAGE);
    return;
  }
  console.log(
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const delayMs = (req: { body: unknown }) => (JSON.stringify(req.body).includes(' slow') ? SLOW_MS : 0);
  const [openai, anthropic] = [await startFakeOpenAIUpstream(), await startFakeAnthropicUpstream({ delayMs })];
  // The fakes keep every request for tests; a benchmark's thousands would only grow the heap.
  setInterval(() => anthropic.requests.splice(0, anthropic.requests.length), 1000).unref();
  const system = await startSystem({ env: upstreamEnv(openai, anthropic) });
  gatewayPid = system.pids('gateway')[0] ?? 0;
  try {
    const { key, teamId } = await signUpWithKey(system.baseUrl, 'bench-batches');
    await grantCredits(system.baseUrl, teamId, 1000);
    const headers = { 'x-api-key': key, 'content-type': 'application/json' };
    // A multipart body brings its own content type (with the boundary).
    const api: Api = (path, init = {}) =>
      fetch(`${system.baseUrl}${path}`, {
        headers: init.body instanceof FormData ? { 'x-api-key': key } : headers,
        ...init,
      });

    const embeddings = SURFACE === 'embeddings';
    const rows: string[][] = [];
    for (let b = 0; b < BATCHES; b++) {
      if (embeddings) rows.push(await runOpenAiBatch(api, b, '/v1/embeddings', embedParams));
      else {
        if (SURFACE !== 'openai') rows.push(await runBatch(api, b));
        if (SURFACE !== 'messages') rows.push(await runOpenAiBatch(api, b));
      }
      for (const row of rows.slice(SURFACE === 'both' ? -2 : -1)) console.log(`${row[0]}: ${row.slice(1).join(' | ')}`);
    }

    if (CREATE_ONLY) return;
    const direct = embeddings ? await runDirect(api, '/v1/embeddings', embedParams) : await runDirect(api);
    console.log(
      `\n| ${REQUESTS} requests (${embeddings ? 'embeddings, one text each' : SLOW_EVERY ? `1 in ${SLOW_EVERY} answered after ${SLOW_MS} ms` : 'none slow'}), c=${CONCURRENCY} (BATCH_CONCURRENCY) | create ms | s until ended | requests/s | results (output file) ms | KiB |`,
    );
    console.log('|---|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.join(' | ')} |`);
    console.log(
      `| the same calls through POST ${embeddings ? '/v1/embeddings' : '/v1/messages'}, c=${CONCURRENCY} | | ${direct.seconds.toFixed(2)} | ${(REQUESTS / direct.seconds).toFixed(0)} (p50 ${direct.p50.toFixed(1)} ms a call) | | |`,
    );
  } finally {
    console.log(
      `load average at the end: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    await system.stop();
    await openai.close();
    await anthropic.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
