/** Decoder tokens are bytes. */
export const byteTokens = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Whitespace-and-punctuation token count, the unit extraction is priced in. */
export function countTokens(text: string): number {
  return text.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)?.length ?? 0;
}
