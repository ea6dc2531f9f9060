// The route schemas use zod's .openapi() extension, which the api module installs.
import '../../api';
import { AppError } from '@whetstone/errors';
import { CompletionsBody, completionsInputOf, legacyLogprobs } from './completions.routes';

const token = (bytes: number[], logprob = -1) => ({
  token: bytes.length === 1 && bytes[0]! < 0x80 ? String.fromCharCode(bytes[0]!) : 'bytes:',
  logprob,
  bytes,
  top_logprobs: [{ token: 'x', logprob: -2, bytes: [0x78] }],
});

describe('legacy completions logprobs', () => {
  it('when tokens are bytes of a longer character or not UTF-8 at all, then offsets move once text is made', () => {
    // "a", "é" as two bytes, an invalid byte (one U+FFFD), "b"; the prompt is 5 characters long.
    const out = legacyLogprobs([token([0x61]), token([0xc3]), token([0xa9]), token([0xff]), token([0x62])], 5);
    expect(out.text_offset).toEqual([5, 6, 6, 7, 8]);
    expect(out.token_logprobs).toEqual([-1, -1, -1, -1, -1]);
    expect(out.top_logprobs[0]).toEqual({ x: -2 });
    expect(out.tokens[0]).toBe('a');
  });
});

describe('the completions prompt', () => {
  const problem = (prompt: unknown) => {
    const parsed = CompletionsBody.safeParse({ model: 'm', prompt });
    return parsed.success ? 'ok' : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  };

  it('when it is a string or a list of 1–16 strings, then it is taken; token arrays, too many and none say what is wrong', () => {
    expect([problem('a'), problem(['a', 'b'])]).toEqual(['ok', 'ok']);
    const shape = 'prompt: must be a string or a list of 1–16 strings (token arrays are not taken)';
    expect([problem([[1, 2]]), problem([5]), problem(Array(17).fill('a'))]).toEqual([shape, shape, shape]);
    expect(problem([])).toBe('prompt: must hold at least 1 prompt');
  });
});

describe('echo', () => {
  const input = (body: Record<string, unknown>) =>
    completionsInputOf(CompletionsBody.parse({ model: 'm', prompt: 'hi', ...body }));
  const refusal = (body: Record<string, unknown>) => {
    try {
      input(body);
    } catch (err) {
      return (err as AppError).fieldErrors[0]?.field;
    }
    return 'ok';
  };

  it('when echo asks for the prompt, then a batch line refuses it, and max_tokens 0 needs it', () => {
    expect(refusal({ echo: true })).toBe('echo');
    expect(refusal({ max_tokens: 0 })).toBe('max_tokens');
    expect(refusal({ echo: false, max_tokens: 1 })).toBe('ok');
    expect(input({ logprobs: 1 })).not.toHaveProperty('promptLogprobs');
    expect(refusal({ best_of: 2 })).toBe('best_of');
  });
});
