/**
 * Byte-level tokenizer with four chat markers: ids 0–255 are UTF-8 bytes,
 * then `<|system|>`, `<|user|>`, `<|assistant|>` and `<|end|>`.
 */
export const SYSTEM = 256;
export const USER = 257;
export const ASSISTANT = 258;
export const END = 259;
export const VOCAB_SIZE = 260;
export const TOKENIZER_NAME = 'whetstone-bytes-chat/1';

export type Role = 'system' | 'user' | 'assistant';
export interface ChatMessage {
  role: Role;
  content: string;
  /** OpenAI's fine-tuning weight on an assistant message: 0 leaves it out of the loss; absent or 1 trains on it. */
  weight?: 0 | 1;
}

const ROLE_TOKEN: Record<Role, number> = { system: SYSTEM, user: USER, assistant: ASSISTANT };
const encoder = new TextEncoder();

export function encodeText(text: string): number[] {
  return Array.from(encoder.encode(text));
}

/**
 * A conversation as tokens, with `trainable[i]` true where token i belongs to
 * an assistant reply (its bytes and its closing `<|end|>`) not given `weight: 0`:
 * the only tokens a chat fine-tune is scored on.
 */
export function encodeChat(messages: readonly ChatMessage[]): { tokens: number[]; trainable: boolean[] } {
  const tokens: number[] = [];
  const trainable: boolean[] = [];
  for (const m of messages) {
    const body = [...encodeText(m.content), END];
    tokens.push(ROLE_TOKEN[m.role]);
    trainable.push(false);
    for (const t of body) {
      tokens.push(t);
      trainable.push(m.role === 'assistant' && m.weight !== 0);
    }
  }
  return { tokens, trainable };
}

/**
 * Where a prompt prefix ends, by the same template as `encodeChat`: every turn
 * before `turn` whole (role marker, UTF-8 bytes, `<|end|>`), then turn `turn`'s
 * marker and the bytes of its first `chars` UTF-16 code units. A cut inside a
 * surrogate pair moves back before the pair, so the prefix is always a prefix of
 * the prompt's tokens. `tokens` counts every prompt token of the prefix,
 * `contentBytes` only the content bytes (the unit of a call's input tokens).
 * Null when `turn` is not a turn of `messages`.
 */
export function prefixEnd(
  messages: readonly ChatMessage[],
  turn: number,
  chars: number,
): { tokens: number; contentBytes: number } | null {
  if (!Number.isInteger(turn) || turn < 0 || turn >= messages.length) return null;
  let tokens = 0;
  let contentBytes = 0;
  for (let i = 0; i < turn; i++) {
    const n = encoder.encode(messages[i]!.content).length;
    tokens += n + 2;
    contentBytes += n;
  }
  const content = messages[turn]!.content;
  let cut = Math.max(0, Math.min(Math.trunc(chars), content.length));
  const high = content.charCodeAt(cut - 1);
  const low = content.charCodeAt(cut);
  if (cut > 0 && high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) cut--;
  const n = encoder.encode(content.slice(0, cut)).length;
  return { tokens: tokens + 1 + n, contentBytes: contentBytes + n };
}

/** The prompt for a reply: the conversation so far, then `<|assistant|>`. */
export function encodePrompt(messages: readonly ChatMessage[]): number[] {
  return [...encodeChat(messages).tokens, ASSISTANT];
}
