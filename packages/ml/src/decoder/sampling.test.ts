import { Rng } from '../nn';
import { AppError } from '@whetstone/errors';
import { loadDecoder, logitBiasOf, penalize, sampleToken } from './serve';
import { END } from './tokenizer';

describe('decoder sampling controls', () => {
  it('when top_k is 1, then sampling at any temperature picks the most likely token; top_k 2 never picks the third', () => {
    const logits = Float32Array.of(0.1, 2, 1.9, 1.8);
    const rng = new Rng(3);
    for (let i = 0; i < 50; i++) expect(sampleToken(logits, 2, 1, rng, 1)).toBe(1);
    const picked = new Set(Array.from({ length: 200 }, () => sampleToken(logits, 2, 1, rng, 2)));
    expect(picked).toEqual(new Set([1, 2]));
  });

  it('when penalties are set, then each generated token loses frequency × count plus presence once', () => {
    const logits = Float32Array.of(1, 1, 1);
    const counts = Uint32Array.of(0, 1, 3);
    expect(Array.from(penalize(logits, counts, 0.5, 0.25))).toEqual([1, 0.25, -0.75]);
    expect(penalize(logits, counts, 0, 0)).toBe(logits);
  });

  it('when a greedy reply repeats itself, then a frequency penalty makes it repeat less, and no penalty changes nothing', async () => {
    const decoder = loadDecoder();
    const messages = [{ role: 'user' as const, content: 'tell me about it' }];
    const reply = async (options: Parameters<typeof decoder.generate>[1]) => {
      let text = '';
      for await (const p of decoder.generate(messages, { temperature: 0, max_tokens: 48, ...options })) text += p.text;
      return text;
    };
    const distinct = (s: string) => new Set(s).size / Math.max(1, s.length);
    const plain = await reply({});
    expect(await reply({ frequency_penalty: 0, presence_penalty: 0, top_k: 0 })).toBe(plain);
    const penalized = await reply({ frequency_penalty: 2, presence_penalty: 1 });
    expect(penalized).not.toBe(plain);
    expect(distinct(penalized)).toBeGreaterThan(distinct(plain));
  });

  it('when logit_bias lists tokens, then each listed logit moves by its bias after the penalties', () => {
    const logits = Float32Array.of(1, 1, 1);
    const bias = logitBiasOf({ 0: -100, 2: 0.5 }, 3);
    expect(Array.from(penalize(logits, Uint32Array.of(0, 1, 0), 0.5, 0, bias))).toEqual([-99, 0.5, 1.5]);
    expect(logitBiasOf({}, 3)).toBeNull();
  });

  it("when a logit_bias key is not one of the model's token ids or a bias is out of range, then InvalidArgument names logit_bias", () => {
    const refused = (bias: Record<number, number>) => {
      try {
        logitBiasOf(bias, 260);
      } catch (err) {
        return err as AppError;
      }
      throw new Error('accepted');
    };
    const key = refused({ 260: 1 });
    expect(key.kind).toBe('InvalidArgument');
    expect(key.message).toMatch(/Invalid key in 'logit_bias': 260\. Maximum value is 259/);
    expect(key.fieldErrors[0]?.field).toBe('logit_bias');
    expect(refused({ 65: 101 }).message).toMatch(/from -100 to 100/);
    expect(refused({ 65: Number.NaN }).fieldErrors[0]?.field).toBe('logit_bias');
  });

  it('when a greedy reply is biased against its first byte, or its end marker is banned, then the reply changes as asked', async () => {
    const decoder = loadDecoder();
    const messages = [{ role: 'user' as const, content: 'tell me about it' }];
    const reply = async (options: Parameters<typeof decoder.generate>[1]) => {
      const stream = decoder.generate(messages, { temperature: 0, max_tokens: 24, ...options });
      let text = '';
      for await (const p of stream) text += p.text;
      return { text, finish: stream.finishReason() };
    };
    const plain = await reply({});
    const first = plain.text.charCodeAt(0);
    const banned = await reply({ logit_bias: { [first]: -100 } });
    expect(banned.text.charCodeAt(0)).not.toBe(first);
    const onlyX = await reply({ logit_bias: { 120: 100 }, max_tokens: 5 });
    expect(onlyX.text).toBe('xxxxx');
    const endless = await reply({ logit_bias: { 256: -100, 257: -100, 258: -100, [END]: -100 } });
    expect(endless.text.length).toBeGreaterThan(0);
    expect(endless.finish).toBe('length');
    expect(() => decoder.generate(messages, { logit_bias: { 999: 1 } })).toThrow(/Maximum value is 259/);
  });
});
