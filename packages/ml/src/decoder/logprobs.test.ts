import { LogprobQueue, tokenLogprob, tokenOf, type TokenLogprob } from './logprobs';
import { loadDecoder, type GenerateStream } from './serve';
import { END } from './tokenizer';

async function pieces(stream: GenerateStream) {
  const out: { text: string; logprobs: TokenLogprob[] }[] = [];
  for await (const p of stream) out.push({ text: p.text, logprobs: p.logprobs ?? [] });
  return out;
}

const bytesOf = (entries: TokenLogprob[]) => entries.flatMap((e) => e.bytes);

describe('token log probabilities', () => {
  it('when a token is written, then ASCII is its character, other bytes bytes:\\xNN, and markers their names', () => {
    expect(tokenOf(72)).toEqual({ token: 'H', bytes: [72] });
    expect(tokenOf(0xe2)).toEqual({ token: 'bytes:\\xe2', bytes: [0xe2] });
    expect(tokenOf(END)).toEqual({ token: '<|end|>', bytes: [] });
  });

  it('when logits are scored, then the log probabilities are the softmax’s and the top ones come most likely first', () => {
    const logits = Float32Array.of(1, 3, 2);
    const entry = tokenLogprob(logits, 2, 2);
    const z = Math.log(Math.exp(1) + Math.exp(3) + Math.exp(2));
    expect(entry.logprob).toBeCloseTo(2 - z, 5);
    expect(entry.top.map((t) => t.bytes[0])).toEqual([1, 2]);
    expect(entry.top[0]!.logprob).toBeCloseTo(3 - z, 5);
    expect(tokenLogprob(logits, 0, 0).top).toEqual([]);
  });

  it('when a character spans several bytes, then its tokens wait until it is whole', () => {
    const queue = new LogprobQueue();
    const e = (b: number) => ({ ...tokenOf(b), logprob: -1, top: [] });
    queue.push(e(0x61), 1);
    queue.push(e(0xc3), 1);
    expect(queue.take(1).map((t) => t.bytes[0])).toEqual([0x61]);
    queue.push(e(0xa9), 2);
    expect(queue.take(1)).toEqual([]);
    expect(queue.take(2).map((t) => t.bytes[0])).toEqual([0xc3, 0xa9]);
    expect(queue.size).toBe(0);
  });

  it('when a reply is generated with logprobs, then every byte of its text has one, in order, and greedy picks the top token', async () => {
    const stream = loadDecoder().generate([{ role: 'user', content: 'hello there' }], {
      temperature: 0,
      max_tokens: 24,
      logprobs: 3,
    });
    const out = await pieces(stream);
    const text = out.map((p) => p.text).join('');
    const entries = out.flatMap((p) => p.logprobs);
    // Decoded as the reply was (a sequence that is not UTF-8 as U+FFFD), the tokens' bytes are its text, piece by piece.
    const decode = (e: TokenLogprob[]) => new TextDecoder().decode(Uint8Array.from(bytesOf(e)));
    expect(decode(entries)).toBe(text);
    for (const p of out) expect(decode(p.logprobs)).toBe(p.text);
    for (const entry of entries) {
      expect(entry.logprob).toBeLessThanOrEqual(0);
      expect(entry.top).toHaveLength(3);
      expect(entry.top[0]!.token).toBe(entry.token);
      expect(entry.top[0]!.logprob).toBeCloseTo(entry.logprob, 6);
      expect(entry.top[1]!.logprob).toBeLessThanOrEqual(entry.top[0]!.logprob);
    }
  });

  it('when a stop sequence ends the reply, then only the returned text’s tokens are reported; without logprobs none are', async () => {
    const decoder = loadDecoder();
    const messages = [{ role: 'user' as const, content: 'say something' }];
    const full = (await pieces(decoder.generate(messages, { temperature: 0, max_tokens: 30, logprobs: 0 })))
      .map((p) => p.text)
      .join('');
    const stop = full.slice(3, 5);
    const cut = await pieces(decoder.generate(messages, { temperature: 0, max_tokens: 30, stop: [stop], logprobs: 0 }));
    const text = cut.map((p) => p.text).join('');
    expect(text).toBe(full.slice(0, full.indexOf(stop)));
    expect(new TextDecoder().decode(Uint8Array.from(bytesOf(cut.flatMap((p) => p.logprobs))))).toBe(text);
    for await (const p of decoder.generate(messages, { temperature: 0, max_tokens: 5 }))
      expect(p.logprobs).toBeUndefined();
  });
});
