// The route schemas use zod's .openapi() extension, which the api module installs.
import '../../api';
import { legacyLogprobs } from './completions.routes';

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
