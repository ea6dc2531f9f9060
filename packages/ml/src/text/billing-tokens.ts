/**
 * The token units the built-in models are metered in: the model-server counts
 * what a call used, and the router counts a prompt before any call (count_tokens,
 * credit checks), with these same two functions.
 */

/** The built-in decoder reads UTF-8 bytes: one byte, one token. */
export const decoderTokens = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Extraction is priced in words (letters and digits) and single symbols; whitespace is free. */
export function extractionTokens(text: string): number {
  return text.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)?.length ?? 0;
}
