import { Rng } from '../nn';
import { loadDecoder, penalize, sampleToken } from './serve';

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
});
