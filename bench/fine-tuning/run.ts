/**
 * Fine-tuning benchmark: how long `POST /v1/fine_tuning/jobs` takes as the training file grows (its files are
 * imported and validated before the answer), and a small job's time from create to succeeded. Run with --help.
 */
import { loadavg } from 'node:os';
import { ADMIN_TOKEN, grantCredits } from '../../test/e2e/compat-helpers';
import { signUpWithKey, startSystem } from '../../test/e2e/system';

const USAGE = `bench:fine-tuning — OpenAI's fine-tuning API through the whole system

  pnpm --filter @whetstone/bench bench:fine-tuning [--help]

Starts the whole system as \`pnpm start\` does, then over HTTP with an API key:
  - for each size in BENCH_SIZES, uploads a chat file of that many rows (purpose fine-tune, about 145 bytes a
    row) and times POST /v1/fine_tuning/jobs, which imports the file as a dataset version and validates every row
    before it answers; the job is cancelled at once, so no training runs beside the next size;
  - times one job on 30 rows (whetstone-decoder-base, 3 epochs, the defaults) from create to succeeded, polling
    every 100 ms.
Nothing here is timed by a test.

Settings (environment):
  BENCH_SIZES   rows per training file, comma-separated (default 1000,10000,100000)
Options:
  --help        this text`;

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);

const row = (i: number) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: `hi, I am customer number ${i}` },
      { role: 'assistant', content: `Hello customer ${i}! How can I help?` },
    ],
  });

type Api = (method: string, path: string, body?: unknown) => Promise<Record<string, unknown>>;

function apiOf(baseUrl: string, key: string): Api {
  return async (method, path, body) => {
    const init: RequestInit = { method, headers: { 'x-api-key': key } };
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { 'x-api-key': key, 'content-type': 'application/json' };
    }
    const res = await fetch(`${baseUrl}${path}`, init);
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200) throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
}

/** Uploads a chat file of `rows` rows (purpose fine-tune); its id and size. */
async function upload(api: Api, rows: number): Promise<{ id: string; bytes: number }> {
  const body = Buffer.from(Array.from({ length: rows }, (_, i) => row(i)).join('\n'));
  const form = new FormData();
  form.append('purpose', 'fine-tune');
  form.append('file', new Blob([body]), 'chat.jsonl');
  const file = await api('POST', '/v1/files', form);
  return { id: String(file.id), bytes: body.length };
}

const create = (api: Api, fileId: string) =>
  api('POST', '/v1/fine_tuning/jobs', { model: 'whetstone-decoder-base', training_file: fileId });

async function timedCreate(api: Api, rows: number): Promise<{ ms: number; bytes: number }> {
  const file = await upload(api, rows);
  const t = performance.now();
  const job = await create(api, file.id);
  const ms = performance.now() - t;
  await api('POST', `/v1/fine_tuning/jobs/${String(job.id)}/cancel`);
  return { ms, bytes: file.bytes };
}

async function timedTraining(api: Api): Promise<{ createMs: number; totalMs: number }> {
  const file = await upload(api, 30);
  const t = performance.now();
  const job = await create(api, file.id);
  const createMs = performance.now() - t;
  for (;;) {
    const now = await api('GET', `/v1/fine_tuning/jobs/${String(job.id)}`);
    if (now.status === 'succeeded') return { createMs, totalMs: performance.now() - t };
    if (now.status === 'failed' || now.status === 'cancelled') throw new Error(`job ended ${String(now.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(USAGE);
    return;
  }
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  console.log(`load average at start: ${load()}`);
  const system = await startSystem({ env: { ADMIN_TOKEN } });
  try {
    const { key, teamId } = await signUpWithKey(system.baseUrl, 'bench-fine-tuning');
    await grantCredits(system.baseUrl, teamId, 1000);
    const api = apiOf(system.baseUrl, key);
    await timedCreate(api, 10); // warm-up, not reported
    console.log('| training file rows | bytes | POST /v1/fine_tuning/jobs ms (import + validation + job) |');
    console.log('|---|---|---|');
    for (const rows of SIZES) {
      const { ms, bytes } = await timedCreate(api, rows);
      console.log(`| ${rows.toLocaleString('en-US')} | ${bytes.toLocaleString('en-US')} | ${ms.toFixed(0)} |`);
    }
    const { createMs, totalMs } = await timedTraining(api);
    console.log(
      `\n30 rows, 3 epochs: create ${createMs.toFixed(0)} ms, create → succeeded ${(totalMs / 1000).toFixed(1)} s`,
    );
  } finally {
    console.log(`load average at the end: ${load()}`);
    await system.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
