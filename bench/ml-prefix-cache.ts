/**
 * pnpm --filter @whetstone/bench bench:prefix-cache
 * The decoder prefix cache (issue 15): time to first token and total
 * generation time of a call whose system prompt is a cache breakpoint, on a
 * miss (an empty cache: the prefix is computed and written) and on a hit (the
 * same call again: the prefix's attention state is read). Every measured call
 * is checked: a miss must report cache_write = the prefix and read 0, a hit
 * read = the prefix, and both the same text as a call without a cache, or the
 * benchmark stops.
 *
 * A third row, "none", is the same call without a cache: what a miss adds by
 * writing. Three cases:
 * - whetstone-decoder-base (context 64 tokens) with the longest system prompt
 *   it reads whole next to the user turn "hi" and a 16-token reply;
 * - the same base with a 1,500-byte system prompt: the prompt is shortened
 *   from the start to the tokens the model reads, so nothing is cacheable;
 * - a decoder of the base's shape with a 2,048-token context and seeded random
 *   weights (no such trained base ships: this measures the compute a hit saves
 *   at the prompt length, not the text), 1,500-byte system prompt.
 * BENCH_PREFIX_REPS sets the repetitions of the long case (default 5; the
 * short ones run 10x as many); medians are printed.
 */
import { loadDecoder, PrefixCache } from '@whetstone/ml';
import { DECODER_DEFAULT_CONFIG, initDecoderWeights } from '@whetstone/ml/internals';
import { loadavg } from 'node:os';

type ChatMessage = { role: 'system' | 'user'; content: string };
type Decoder = ReturnType<typeof loadDecoder>;

const REPS = Number(process.env.BENCH_PREFIX_REPS ?? 5);

const SENTENCE = 'The assistant answers questions about the account, its invoices and its payments, in plain words. ';
const longSystem = SENTENCE.repeat(Math.ceil(1500 / SENTENCE.length)).slice(0, 1500);

interface Measured {
  ttftMs: number;
  totalMs: number;
  text: string;
  read: number;
  write: number;
}

async function call(
  decoder: Decoder,
  messages: ChatMessage[],
  maxTokens: number,
  cache: PrefixCache | undefined,
): Promise<Measured> {
  const started = process.hrtime.bigint();
  const stream = decoder.generate(messages, {
    temperature: 0,
    max_tokens: maxTokens,
    prefix_cache: cache,
    cache_breakpoints: [{ turn: 0, chars: messages[0]!.content.length }],
  });
  let ttftMs = NaN;
  let text = '';
  for await (const chunk of stream) {
    if (Number.isNaN(ttftMs)) ttftMs = Number(process.hrtime.bigint() - started) / 1e6;
    text += chunk.text;
  }
  const totalMs = Number(process.hrtime.bigint() - started) / 1e6;
  const usage = stream.cacheUsage();
  return { ttftMs, totalMs, text, read: usage.readTokens, write: usage.writeTokens };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`bench:prefix-cache measured something else than it says: ${what}`);
}

/** Misses on a fresh cache each time, hits on one warm cache, interleaved so load drifts hit both alike. */
async function compare(
  label: string,
  decoder: Decoder,
  messages: ChatMessage[],
  maxTokens: number,
  reps: number,
  expectCached: boolean,
): Promise<void> {
  const prefixBytes = Buffer.byteLength(messages[0]!.content);
  const reference = await call(decoder, messages, maxTokens, undefined);
  check(reference.text.length > 0, `${label}: the reply is empty, so there is no first token to time`);
  const newCache = () => new PrefixCache({ maxBytes: 256 << 20, defaultTtlSeconds: 300, minPrefixTokens: 16 });
  const warm = newCache();
  await call(decoder, messages, maxTokens, warm);
  const none: Measured[] = [];
  const miss: Measured[] = [];
  const hit: Measured[] = [];
  for (let i = 0; i < reps; i++) {
    none.push(await call(decoder, messages, maxTokens, undefined));
    const m = await call(decoder, messages, maxTokens, newCache());
    const h = await call(decoder, messages, maxTokens, warm);
    check(m.text === reference.text && h.text === reference.text, `${label}: a cached reply differs from the uncached`);
    if (expectCached) {
      check(m.read === 0 && m.write === prefixBytes, `${label}: the miss read ${m.read}, wrote ${m.write}`);
      check(h.read === prefixBytes && h.write === 0, `${label}: the hit read ${h.read}, wrote ${h.write}`);
    } else check(m.read + m.write + h.read + h.write === 0, `${label}: a shortened prompt was cached`);
    miss.push(m);
    hit.push(h);
  }
  const row = (name: string, xs: Measured[]) =>
    `  ${name.padEnd(5)} ttft ${median(xs.map((x) => x.ttftMs))
      .toFixed(2)
      .padStart(8)} ms   total ${median(xs.map((x) => x.totalMs))
      .toFixed(2)
      .padStart(8)} ms   cache read ${xs[0]!.read} / write ${xs[0]!.write} bytes`;
  const ttftUp = median(miss.map((x) => x.ttftMs)) / median(hit.map((x) => x.ttftMs));
  const totalUp = median(miss.map((x) => x.totalMs)) / median(hit.map((x) => x.totalMs));
  const promptBytes = messages.reduce((n, m) => n + Buffer.byteLength(m.content), 0);
  process.stdout.write(
    `${label}\n  prompt ${promptBytes} bytes (system ${prefixBytes}), reply ${reference.text.length} characters, ${reps} runs each, medians\n` +
      (expectCached
        ? `${row('none', none)}\n${row('miss', miss)}\n${row('hit', hit)}\n` +
          `  speed-up of a hit: time to first token ${ttftUp.toFixed(2)}x, total ${totalUp.toFixed(2)}x\n\n`
        : `${row('none', none)}\n${row('fresh', miss)}\n${row('again', hit)}\n` +
          `  nothing was cached, so there is no hit: again/fresh ${ttftUp.toFixed(2)}x, ${totalUp.toFixed(2)}x is noise\n\n`),
  );
}

async function main(): Promise<void> {
  process.stdout.write(
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n\n`,
  );
  const base = loadDecoder();
  // 1 + 41 + 1 system, 1 + 2 + 1 user, 1 assistant marker: all 48 prompt tokens a 16-token reply leaves.
  const shortSystem = 'Answer in one short line; be kind, brief.';
  await compare(
    'whetstone-decoder-base, the longest system prompt it reads whole beside "hi" (41 bytes), 16-token reply',
    base,
    [
      { role: 'system', content: shortSystem },
      { role: 'user', content: 'hi' },
    ],
    16,
    REPS * 10,
    true,
  );
  await compare(
    'whetstone-decoder-base, 1,500-byte system prompt (shortened to its last 32 tokens: not cacheable), 32-token reply',
    base,
    [
      { role: 'system', content: longSystem },
      { role: 'user', content: 'How do I pay an invoice?' },
    ],
    32,
    REPS * 10,
    false,
  );
  const config = { ...DECODER_DEFAULT_CONFIG, context: 2048 };
  const wide = loadDecoder(undefined, { config, weights: initDecoderWeights(config, 7, false) });
  await compare(
    'base shape (3 layers, dim 128) with a 2,048-token context, random weights, 1,500-byte system prompt, 32-token reply',
    wide,
    [
      { role: 'system', content: longSystem },
      { role: 'user', content: 'How do I pay an invoice?' },
    ],
    32,
    REPS,
    true,
  );
  process.stdout.write(
    `load average at end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
