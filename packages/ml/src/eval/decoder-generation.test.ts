import type { GenerateOptions, GenerateStream } from '../decoder/serve';
import type { ChatMessage } from '../decoder/tokenizer';
import { DECODER_GENERATION_EVAL, scoreGenerations } from './decoder-generation';
import { meanTokenPRF, normalizeAnswer, tokenPRF } from './token-f1';

/** A decoder whose reply to a prompt is scripted by its last user turn; it remembers what it was asked. */
function scripted(replies: Record<string, string>) {
  const asked: { prompt: ChatMessage[]; options: GenerateOptions }[] = [];
  const generate = (prompt: readonly ChatMessage[], options: GenerateOptions = {}): GenerateStream => {
    asked.push({ prompt: [...prompt], options });
    const text = replies[prompt.at(-1)?.content ?? ''] ?? '';
    return Object.assign(
      (async function* () {
        // In two pieces, as a stream delivers it.
        yield { text: text.slice(0, 3) };
        yield { text: text.slice(3) };
      })(),
      {
        finishReason: () => 'stop' as const,
        stopSequence: () => null,
        cacheUsage: () => ({ readTokens: 0, writeTokens: 0 }),
      },
    );
  };
  return { decoder: { generate }, asked };
}

const row = (user: string, reply: string, extra: ChatMessage[] = []) => ({
  messages: [{ role: 'user', content: user }, { role: 'assistant', content: reply }, ...extra],
});

describe('token-overlap F1 as SQuAD scores it', () => {
  it('when texts are normalised, then case, ASCII punctuation, the articles and extra spaces go', () => {
    expect(normalizeAnswer('  The Cat,  sat on A mat!  ')).toBe('cat sat on mat');
    expect(normalizeAnswer('An "apple" - the end.')).toBe('apple end');
    // Articles only as whole words, with word characters as Python's Unicode \w sees them.
    expect(normalizeAnswer('Theory of anthems; éthe and an état')).toBe('theory of anthems éthe and état');
  });

  it('when a prediction shares tokens with the reference, then precision, recall and F1 count them with multiplicity', () => {
    const s = tokenPRF('the cat sat on the mat', 'a cat on a mat');
    expect(s.precision).toBeCloseTo(3 / 4, 10);
    expect(s.recall).toBe(1);
    expect(s.f1).toBeCloseTo(6 / 7, 10);
    expect(tokenPRF('x x y', 'x y y')).toEqual({ precision: 2 / 3, recall: 2 / 3, f1: 2 / 3 });
    expect(tokenPRF('hello', 'goodbye')).toEqual({ precision: 0, recall: 0, f1: 0 });
  });

  it('when either text is empty after normalising, then it scores 1 only if both are (SQuAD v2.0)', () => {
    expect(tokenPRF('', 'The.')).toEqual({ precision: 1, recall: 1, f1: 1 });
    expect(tokenPRF('', 'an answer')).toEqual({ precision: 0, recall: 0, f1: 0 });
    expect(tokenPRF('an answer', '!')).toEqual({ precision: 0, recall: 0, f1: 0 });
  });

  it('when examples are averaged, then each counts once (macro), and none gives zeros', () => {
    const m = meanTokenPRF([
      { prediction: 'a b', reference: 'a b' },
      { prediction: 'c', reference: 'd' },
    ]);
    expect(m).toEqual({ precision: 0.5, recall: 0.5, f1: 0.5 });
    expect(meanTokenPRF([])).toEqual({ precision: 0, recall: 0, f1: 0 });
  });
});

describe('scoreGenerations', () => {
  it('when held-out rows are scored, then each last trained reply is the reference of a greedy reply to the turns before it', async () => {
    const { decoder, asked } = scripted({ 'hi, I am Ada': 'Hello Ada! How can I help?', 'hi, I am Bob': 'Bye.' });
    const rows = [
      row('hi, I am Ada', 'Hello Ada! How can I help?'),
      // A reply left out of training (weight 0) is not a reference; the one before it is.
      {
        messages: [
          { role: 'system', content: 'Be kind.' },
          { role: 'user', content: 'hi, I am Bob' },
          { role: 'assistant', content: 'Hello Bob! How can I help?' },
          { role: 'user', content: 'thanks' },
          { role: 'assistant', content: 'You are welcome.', weight: 0 },
        ],
      },
    ];
    const scores = await scoreGenerations(decoder, rows);
    expect(asked.map((a) => a.prompt)).toEqual([
      [{ role: 'user', content: 'hi, I am Ada' }],
      [
        { role: 'system', content: 'Be kind.' },
        { role: 'user', content: 'hi, I am Bob' },
      ],
    ]);
    expect(asked.every((a) => a.options.temperature === 0 && a.options.max_tokens === 64)).toBe(true);
    expect(scores).toEqual({
      precision: 0.5,
      recall: 0.5,
      f1: 0.5,
      generation_examples: 2,
      generation_max_tokens: DECODER_GENERATION_EVAL.maxTokens,
    });
  });

  it('when there are more rows than the bound, then only the first are generated, each within the token bound', async () => {
    const { decoder, asked } = scripted({});
    const rows = Array.from({ length: 40 }, (_, i) => row(`q${i}`, `a${i}`));
    expect(DECODER_GENERATION_EVAL).toEqual({ maxExamples: 32, maxTokens: 64 });
    expect((await scoreGenerations(decoder, rows)).generation_examples).toBe(32);
    expect(asked.map((a) => a.prompt[0]!.content)).toEqual(rows.slice(0, 32).map((r) => r.messages[0]!.content));
    const small = await scoreGenerations(decoder, rows, { maxExamples: 3, maxTokens: 8 });
    expect(small).toMatchObject({ generation_examples: 3, generation_max_tokens: 8 });
    expect(asked.at(-1)!.options.max_tokens).toBe(8);
  });

  it('when the signal is aborted, then scoring stops with Cancelled; rows that are not chat are a validation error', async () => {
    const { decoder } = scripted({});
    const stop = new AbortController();
    stop.abort();
    await expect(scoreGenerations(decoder, [row('q', 'a')], { signal: stop.signal })).rejects.toMatchObject({
      kind: 'Cancelled',
    });
    await expect(scoreGenerations(decoder, [{ text: 'not chat' }])).rejects.toMatchObject({
      kind: 'InvalidArgument',
    });
  });
});
