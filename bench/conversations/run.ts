/**
 * Conversation benchmark: what `conversation` adds to a Responses call (reading the conversation's items before the
 * call and appending the call's items after it) as the conversation grows. Run with --help for what it measures.
 */
import { loadavg } from 'node:os';
import { startFakeAnthropicUpstream, startFakeOpenAIUpstream } from '@whetstone/testing';
import { grantCredits, OPENAI_MODEL, upstreamEnv } from '../../test/e2e/compat-helpers';
import { signUpWithKey, startSystem } from '../../test/e2e/system';
import { pct } from '../serving/load';

const USAGE = `bench:conversations — POST /v1/responses with and without a conversation, through the whole system

  pnpm --filter @whetstone/bench bench:conversations [--help]

Starts the whole system as \`pnpm start\` does, with fake upstreams (packages/testing, in this process, no artificial
delay) as providers, then, one call at a time, alternating rounds of BENCH_CALLS calls each:
  - plain: POST /v1/responses with a short input, no conversation;
  - conversation: the same calls with \`conversation\` naming one conversation, which grows by 2 items per call
    (the input and the answer), so its last calls read about 2 × BENCH_CALLS × BENCH_ROUNDS items.
Prints p50 and p95 per round, and for the conversation rounds the size it had. The upstream sees the whole
conversation each time, so part of the growth is the fake upstream's own work on a longer prompt.
Nothing here is timed by a test.

Settings (environment):
  BENCH_CALLS   calls per round (default 100)
  BENCH_ROUNDS  rounds of each kind (default 3)
Options:
  --help        this text`;

const CALLS = Number(process.env.BENCH_CALLS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

type Api = (path: string, body?: unknown) => Promise<Response>;

async function round(api: Api, conversation: string | undefined): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const body = { model: OPENAI_MODEL, input: `benchmark turn ${i}`, ...(conversation ? { conversation } : {}) };
    const t = performance.now();
    const res = await api('/v1/responses', body);
    if (res.status !== 200) throw new Error(`POST /v1/responses: HTTP ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
    latencies.push(performance.now() - t);
  }
  return latencies;
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
  const [openai, anthropic] = [await startFakeOpenAIUpstream(), await startFakeAnthropicUpstream()];
  setInterval(() => openai.requests.splice(0, openai.requests.length), 1000).unref();
  const system = await startSystem({ env: upstreamEnv(openai, anthropic) });
  try {
    const { key, teamId } = await signUpWithKey(system.baseUrl, 'bench-conversations');
    await grantCredits(system.baseUrl, teamId, 1000);
    const headers = { 'x-api-key': key, 'content-type': 'application/json' };
    const api: Api = (path, body) =>
      fetch(`${system.baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body ?? {}) });
    const { id } = (await (await api('/v1/conversations', {})).json()) as { id: string };
    await round(api, undefined); // warm-up, not reported
    console.log('| round | conversation items before → after | p50 ms | p95 ms |');
    console.log('|---|---|---|---|');
    let items = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const plain = await round(api, undefined);
      console.log(`| plain ${r + 1} | | ${pct(plain, 50).toFixed(1)} | ${pct(plain, 95).toFixed(1)} |`);
      const joined = await round(api, id);
      const before = items;
      items += 2 * CALLS;
      console.log(
        `| conversation ${r + 1} | ${before} → ${items} | ${pct(joined, 50).toFixed(1)} | ${pct(joined, 95).toFixed(1)} |`,
      );
    }
  } finally {
    console.log(`load average at the end: ${load()}`);
    await system.stop();
    await openai.close();
    await anthropic.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
