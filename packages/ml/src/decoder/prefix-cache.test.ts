import { AppError } from '@whetstone/errors';
import { loadDecoderBase } from './base';
import { DecoderState, forward, initWeights } from './model';
import { PrefixCache } from './prefix-cache';
import { type CacheBreakpoint, type GenerateOptions, loadDecoder } from './serve';
import { type ChatMessage, encodeChat, encodePrompt, prefixEnd } from './tokenizer';

const SYSTEM_PROMPT = 'You answer in one short line, politely.'; // 39 bytes
const conversation = (user: string): ChatMessage[] => [
  { role: 'system', content: SYSTEM_PROMPT },
  { role: 'user', content: user },
];
const AT_SYSTEM_END: CacheBreakpoint = { turn: 0, chars: SYSTEM_PROMPT.length };

function newCache(overrides: Partial<ConstructorParameters<typeof PrefixCache>[0]> = {}): PrefixCache {
  return new PrefixCache({ maxBytes: 16 << 20, defaultTtlSeconds: 300, minPrefixTokens: 16, ...overrides });
}

async function run(
  messages: ChatMessage[],
  options: GenerateOptions,
  decoder = loadDecoder(),
): Promise<{ text: string; read: number; write: number; steps: number }> {
  const step = jest.spyOn(DecoderState.prototype, 'step');
  try {
    const stream = decoder.generate(messages, { temperature: 0, max_tokens: 12, ...options });
    let text = '';
    for await (const chunk of stream) text += chunk.text;
    const usage = stream.cacheUsage();
    return { text, read: usage.readTokens, write: usage.writeTokens, steps: step.mock.calls.length };
  } finally {
    step.mockRestore();
  }
}

describe('decoder key/value cache', () => {
  it('when a prompt is read one token at a time with the cache, then every position’s logits equal the full forward pass', () => {
    const { config, weights } = loadDecoderBase();
    const ids = encodePrompt(conversation('hi there'));
    const full = forward(config, weights, Int32Array.from(ids), 1, ids.length).data;
    const state = new DecoderState(config, weights);
    let maxDiff = 0;
    ids.forEach((t, pos) => {
      const logits = state.step(t);
      for (let v = 0; v < config.vocab; v++)
        maxDiff = Math.max(maxDiff, Math.abs(logits[v]! - full[pos * config.vocab + v]!));
    });
    expect(maxDiff).toBeLessThan(1e-4);
  });

  it('when generating greedily, then the cached decoder picks the same tokens as recomputing the whole sequence per token', async () => {
    const { config, weights } = loadDecoderBase();
    const messages = conversation('hi');
    const ids = encodePrompt(messages);
    const recomputed: number[] = [];
    for (let n = 0; n < 12; n++) {
      const seq = Int32Array.from([...ids, ...recomputed]);
      const logits = forward(config, weights, seq, 1, seq.length).data.slice(-config.vocab);
      const next = logits.indexOf(Math.max(...logits));
      if (next >= 256) break;
      recomputed.push(next);
    }
    const { text } = await run(messages, {});
    expect(recomputed.length).toBeGreaterThan(0);
    expect(Array.from(Buffer.from(text, 'utf8'))).toEqual(recomputed);
  });

  it('when a state is restored from a snapshot, then it continues with bit-identical logits', () => {
    const { config, weights } = loadDecoderBase();
    const ids = encodePrompt(conversation('hi there'));
    const a = new DecoderState(config, weights);
    for (const t of ids.slice(0, 20)) a.step(t);
    const b = DecoderState.restore(config, weights, a.snapshot());
    expect(b.length).toBe(20);
    for (const t of ids.slice(20)) expect(Array.from(b.step(t))).toEqual(Array.from(a.step(t)));
  });
});

describe('prompt prefixes of cache breakpoints', () => {
  it('when a breakpoint cuts a turn, then its end is the prompt position of that cut by the chat template, in UTF-8 bytes', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Réponds 🙂 vite' },
      { role: 'user', content: 'ça va?' },
    ];
    const prompt = encodePrompt(messages);
    for (const [turn, chars] of [
      [0, 0],
      [0, 3],
      [0, 15],
      [1, 2],
      [1, 6],
    ] as const) {
      const end = prefixEnd(messages, turn, chars)!;
      const cut = [
        ...messages.slice(0, turn),
        { ...messages[turn]!, content: messages[turn]!.content.slice(0, chars) },
      ];
      const expected = encodeChat(cut).tokens.slice(0, -1); // without the cut turn's <|end|>
      expect(prompt.slice(0, end.tokens)).toEqual(expected);
      expect(end.contentBytes).toBe(cut.reduce((n, m) => n + Buffer.byteLength(m.content), 0));
    }
    // 'Réponds ' is 8 code units; 9 ends inside the emoji's surrogate pair and moves back before it.
    expect(prefixEnd(messages, 0, 9)).toEqual(prefixEnd(messages, 0, 8));
    expect(prefixEnd(messages, 0, 10)!.contentBytes).toBe(Buffer.byteLength('Réponds 🙂'));
    expect(prefixEnd(messages, 0, 999)).toEqual(prefixEnd(messages, 0, messages[0]!.content.length));
    expect(prefixEnd(messages, 2, 0)).toBeNull();
  });
});

describe('decoder prefix cache', () => {
  it('when a prefix is written on a first call and read on a second, then both replies equal an uncached one and the hit skips the prefix’s compute', async () => {
    const cache = newCache();
    const messages = conversation('hi');
    const reference = await run(messages, {});
    const first = await run(messages, { prefix_cache: cache, cache_breakpoints: [AT_SYSTEM_END] });
    const second = await run(messages, { prefix_cache: cache, cache_breakpoints: [AT_SYSTEM_END] });

    expect(reference.text.length).toBeGreaterThan(0);
    expect(first).toMatchObject({ text: reference.text, read: 0, write: 39, steps: reference.steps });
    expect(second).toMatchObject({ text: reference.text, read: 39, write: 0 });
    // The prefix is the system marker and its 39 bytes: 40 prompt tokens not recomputed.
    expect(second.steps).toBe(reference.steps - 40);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1, entries: 1 });
    expect(cache.stats().bytes).toBeGreaterThan(3 * 2 * 40 * 128 * 4);
  });

  it('when sampling with a seed, then a hit gives the same text as a miss', async () => {
    const cache = newCache();
    const options = { temperature: 1, seed: 7, prefix_cache: cache, cache_breakpoints: [AT_SYSTEM_END] };
    const miss = await run(conversation('tell me'), options);
    const hit = await run(conversation('tell me'), options);
    expect(hit.read).toBe(39);
    expect(hit.text).toBe(miss.text);
    expect(hit.text).toBe((await run(conversation('tell me'), { temperature: 1, seed: 7 })).text);
  });

  it('when the user turn changes, then the shared system prefix is read and the longer breakpoint is written anew', async () => {
    const cache = newCache();
    const both = (user: string): CacheBreakpoint[] => [AT_SYSTEM_END, { turn: 1, chars: user.length }];
    const first = await run(conversation('hi Ada'), { prefix_cache: cache, cache_breakpoints: both('hi Ada') });
    expect(first).toMatchObject({ read: 0, write: 39 + 6 });
    const other = await run(conversation('hi Bob'), { prefix_cache: cache, cache_breakpoints: both('hi Bob') });
    expect(other).toMatchObject({ read: 39, write: 6 });
    expect(other.text).toBe((await run(conversation('hi Bob'), {})).text);
    const again = await run(conversation('hi Ada'), { prefix_cache: cache, cache_breakpoints: both('hi Ada') });
    expect(again).toMatchObject({ read: 45, write: 0, text: first.text });
    expect(cache.stats()).toMatchObject({ hits: 2, misses: 1, entries: 3 });
  });

  it('when a breakpoint’s prefix is under the minimum, then it is neither read nor written', async () => {
    const cache = newCache({ minPrefixTokens: 41 });
    const options = { prefix_cache: cache, cache_breakpoints: [AT_SYSTEM_END] };
    await run(conversation('hi'), options);
    expect(await run(conversation('hi'), options)).toMatchObject({ read: 0, write: 0 });
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 0, entries: 0, bytes: 0 });
  });

  it('when a call sets more than 4 breakpoints, then it is refused as an invalid argument', () => {
    const five = [1, 2, 3, 4, 5].map((chars) => ({ turn: 0, chars }));
    const err = (() => {
      try {
        loadDecoder().generate(conversation('hi'), { prefix_cache: newCache(), cache_breakpoints: five });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('InvalidArgument');
  });

  it('when an entry goes unused past its ttl, then it expires; each use renews it', async () => {
    let now = 0;
    const cache = newCache({ now: () => now });
    const options = { prefix_cache: cache, cache_breakpoints: [{ ...AT_SYSTEM_END, ttl_seconds: 10 }] };
    expect(await run(conversation('hi'), options)).toMatchObject({ write: 39 });
    now = 9_000;
    expect(await run(conversation('hi'), options)).toMatchObject({ read: 39 });
    now = 18_000; // 9 s after the last use
    expect(await run(conversation('hi'), options)).toMatchObject({ read: 39 });
    now = 28_001;
    expect(await run(conversation('hi'), options)).toMatchObject({ read: 0, write: 39 });
    expect(cache.stats()).toMatchObject({ expirations: 1, entries: 1 });
  });

  it('when a breakpoint sets no ttl, then the cache default applies', async () => {
    let now = 0;
    const cache = newCache({ now: () => now, defaultTtlSeconds: 300 });
    const options = { prefix_cache: cache, cache_breakpoints: [AT_SYSTEM_END] };
    await run(conversation('hi'), options);
    now = 299_000;
    expect(await run(conversation('hi'), options)).toMatchObject({ read: 39 });
    now = 599_000;
    expect(cache.stats().entries).toBe(0);
  });

  it('when two breakpoints end at the same place, then the entry lives as long as the longer ttl says', async () => {
    let now = 0;
    const cache = newCache({ now: () => now, defaultTtlSeconds: 300 });
    const options = { prefix_cache: cache, cache_breakpoints: [{ ...AT_SYSTEM_END, ttl_seconds: 10 }, AT_SYSTEM_END] };
    expect(await run(conversation('hi'), options)).toMatchObject({ write: 39 });
    now = 200_000;
    expect(cache.stats().entries).toBe(1);
  });

  it('when entries exceed the byte limit, then the least recently used go first', async () => {
    const probe = newCache();
    await run(conversation('a'), { prefix_cache: probe, cache_breakpoints: [AT_SYSTEM_END] });
    const entryBytes = probe.stats().bytes;
    const cache = newCache({ maxBytes: 2 * entryBytes + 100 });
    const system = (s: string): ChatMessage[] => [
      { role: 'system', content: s },
      { role: 'user', content: 'hi' },
    ];
    const at = (s: string) => ({ prefix_cache: cache, cache_breakpoints: [{ turn: 0, chars: s.length }] });
    const [a, b, c] = ['A', 'B', 'C'].map((x) => SYSTEM_PROMPT.slice(1) + x);
    await run(system(a!), at(a!));
    await run(system(b!), at(b!));
    expect(await run(system(a!), at(a!))).toMatchObject({ read: 39 }); // a is now the most recent
    await run(system(c!), at(c!)); // evicts b
    expect(cache.stats()).toMatchObject({ entries: 2, evictions: 1, bytes: 2 * entryBytes });
    expect(await run(system(a!), at(a!))).toMatchObject({ read: 39 });
    expect(await run(system(b!), at(b!))).toMatchObject({ read: 0, write: 39 });
  });

  it('when another decoder (other weights) sends the same prompt, then it does not read the first one’s state', async () => {
    const cache = newCache();
    const { config } = loadDecoderBase();
    const other = loadDecoder(undefined, { config, weights: initWeights(config, 5, false) });
    expect(other.identity).not.toBe(loadDecoder().identity);
    const options = { prefix_cache: cache, cache_breakpoints: [AT_SYSTEM_END] };
    await run(conversation('hi'), options);
    expect(await run(conversation('hi'), options, other)).toMatchObject({ read: 0, write: 39 });
    expect(await run(conversation('hi'), options, other)).toMatchObject({ read: 39 });
  });

  it('when the prompt is too long for the context and is shortened, then nothing is cached', async () => {
    const cache = newCache();
    const long: ChatMessage[] = [
      { role: 'system', content: SYSTEM_PROMPT.repeat(4) },
      { role: 'user', content: 'hi' },
    ];
    const options = { prefix_cache: cache, cache_breakpoints: [{ turn: 0, chars: long[0]!.content.length }] };
    expect(await run(long, options)).toMatchObject({ read: 0, write: 0 });
    expect(cache.stats()).toMatchObject({ entries: 0, misses: 0 });
  });
});
