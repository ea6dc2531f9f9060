/**
 * OpenAI's `n` through the gateway (bench:chat, decoder section): one JSON call with n = 4 against the same four
 * replies asked one after another with n = 1 (seeds s … s + 3, which is what n = 4 samples), and a single n = 1
 * call. Every n = 4 reply is checked against the four single replies, or the bench stops.
 */
import type { Api } from '../lib/api';
import { pct } from '../serving/load';

const N = 4;
const ROUNDS = Number(process.env.BENCH_CHOICE_ROUNDS ?? 10);

interface Completion {
  choices: { message: { content: string } }[];
  usage: { completion_tokens: number };
}

export async function measureChoices(api: Api, jobId: string) {
  const url = `${api.base}/v1/chat/completions`;
  const call = async (seed: number, n: number) => {
    const body = { model: jobId, max_tokens: 32, seed, n, messages: [{ role: 'user', content: 'hi, I am Ada' }] };
    const t0 = performance.now();
    const res = await fetch(url, { method: 'POST', headers: api.headers, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`n = ${n}: HTTP ${res.status} ${await res.text()}`);
    const json = (await res.json()) as Completion;
    return { ms: performance.now() - t0, texts: json.choices.map((c) => c.message.content), json };
  };
  const rows = { single: [] as number[], together: [] as number[], inTurn: [] as number[] };
  let tokens = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const seed = 100 + round * N;
    // Which way goes first alternates, so neither always meets a warmer process.
    const together = async () => {
      const r = await call(seed, N);
      rows.together.push(r.ms);
      tokens = r.json.usage.completion_tokens;
      return r.texts;
    };
    const inTurn = async () => {
      const t0 = performance.now();
      const texts: string[] = [];
      for (let i = 0; i < N; i++) texts.push(...(await call(seed + i, 1)).texts);
      rows.inTurn.push(performance.now() - t0);
      return texts;
    };
    const [a, b] = round % 2 ? [await inTurn(), await together()] : [await together(), await inTurn()];
    if (JSON.stringify(a) !== JSON.stringify(b))
      throw new Error(`round ${round}: n = ${N} is not seeds s … s + ${N - 1}`);
    rows.single.push((await call(seed, 1)).ms);
  }
  return { rows, tokens };
}

export type ChoiceFigures = Awaited<ReturnType<typeof measureChoices>>;

export function reportChoices({ rows, tokens }: ChoiceFigures): void {
  const m = (xs: number[]) => pct(xs, 50).toFixed(1);
  console.log(
    `  n = ${N} choices of the LoRA decoder job (JSON, 32 tokens each, ${tokens} completion tokens per n = ${N} call; ` +
      `medians of ${rows.single.length} rounds, checked equal to seeds s … s + ${N - 1}):`,
  );
  console.log(
    `    one n = 1 call ${m(rows.single)} ms; n = ${N} side by side ${m(rows.together)} ms; ` +
      `the same ${N} replies as n = 1 calls in turn ${m(rows.inTurn)} ms`,
  );
}
