import { loadDecoderBase } from './base';
import { DecoderState, forward } from './model';
import { tokenLogprob } from './logprobs';
import { loadDecoder } from './serve';
import { encodePrompt, encodeText, USER } from './tokenizer';

/** The natural-log softmax of `v` at `id`. */
function logSoftmaxAt(v: Float32Array, id: number): number {
  const max = Math.max(...v);
  const z = v.reduce((s, x) => s + Math.exp(x - max), 0);
  return v[id]! - max - Math.log(z);
}

describe("the prompt's log probabilities (OpenAI's echo)", () => {
  const base = loadDecoderBase();
  const decoder = loadDecoder(undefined, base);
  const collect = async (content: string, maxTokens: number) => {
    const stream = decoder.generate([{ role: 'user', content }], {
      temperature: 0,
      max_tokens: maxTokens,
      logprobs: 2,
      prompt_logprobs: true,
    });
    const pieces = [];
    for await (const p of stream) pieces.push(p);
    return { pieces, finish: stream.finishReason() };
  };

  it('when asked for, then the first piece scores each content byte after everything before it, as a full forward pass does', async () => {
    const content = 'hello there';
    const { pieces } = await collect(content, 4);
    const scored = pieces[0]!.prompt_logprobs!;
    expect(pieces[0]!.text).toBe('');
    expect(scored.map((t) => t.token).join('')).toBe(content);
    const ids = Int32Array.from([USER, ...encodeText(content)]);
    const logits = forward(base.config, base.weights, ids, 1, ids.length).data;
    const V = base.config.vocab;
    scored.forEach((t, k) => {
      const expected = logSoftmaxAt(logits.slice(k * V, (k + 1) * V), ids[k + 1]!);
      expect(t.logprob).toBeCloseTo(expected, 4);
      expect(t.top).toHaveLength(2);
    });
    expect(pieces.slice(1).every((p) => p.prompt_logprobs === undefined)).toBe(true);
  });

  it('when max_tokens is 0, then only the prompt is scored and the reply ends at its length; a prompt longer than the context slides', async () => {
    const { pieces, finish } = await collect('tell me', 0);
    expect(pieces).toHaveLength(1);
    expect(finish).toBe('length');
    const long = 'the quick brown fox jumps over the lazy dog. '.repeat(5);
    const { pieces: longPieces } = await collect(long, 0);
    const scored = longPieces[0]!.prompt_logprobs!;
    expect(scored).toHaveLength(encodeText(long).length);
    expect(scored.every((t) => Number.isFinite(t.logprob) && t.logprob <= 0)).toBe(true);
    expect(encodePrompt([{ role: 'user', content: long }]).length).toBeGreaterThan(base.config.context);
  });

  it('when a prompt is longer than the context, then each byte is scored as step-by-step generation would slide over it', async () => {
    const content = 'the quick brown fox jumps over the lazy dog, then naps. '.repeat(4);
    const { pieces } = await collect(content, 0);
    const scored = pieces[0]!.prompt_logprobs!;
    // The reference: one token at a time, re-reading the last half of the context whenever it is full.
    const prompt = encodePrompt([{ role: 'user', content }]);
    const to = prompt.length - 2;
    const expected: number[] = [];
    let state = new DecoderState(base.config, base.weights);
    let logits = state.step(prompt[0]!);
    for (let i = 1; i < to; i++) {
      expected.push(tokenLogprob(logits, prompt[i]!, 0).logprob);
      if (state.full) {
        state = new DecoderState(base.config, base.weights);
        for (const t of prompt.slice(i + 1 - base.config.context / 2, i + 1)) logits = state.step(t);
      } else logits = state.step(prompt[i]!);
    }
    expect(scored).toHaveLength(expected.length);
    scored.forEach((t, k) => expect(t.logprob).toBeCloseTo(expected[k]!, 4));
  });

  it('when the prompt to score is longer than 100,000 bytes, then the call is InvalidArgument naming prompt, before any work', () => {
    expect(() =>
      decoder.generate([{ role: 'user', content: 'x'.repeat(100_001) }], { logprobs: 0, prompt_logprobs: true }),
    ).toThrow(/at most 100,000 bytes; this one is 100,001/);
    expect(() => decoder.generate([{ role: 'user', content: 'x'.repeat(100_001) }], { max_tokens: 1 })).not.toThrow();
  });
});
