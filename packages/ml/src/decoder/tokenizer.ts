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
}

const ROLE_TOKEN: Record<Role, number> = { system: SYSTEM, user: USER, assistant: ASSISTANT };
const encoder = new TextEncoder();

export function encodeText(text: string): number[] {
  return Array.from(encoder.encode(text));
}

/**
 * A conversation as tokens, with `trainable[i]` true where token i belongs to
 * an assistant reply (its bytes and its closing `<|end|>`): the only tokens a
 * chat fine-tune is scored on.
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
      trainable.push(m.role === 'assistant');
    }
  }
  return { tokens, trainable };
}

/** The prompt for a reply: the conversation so far, then `<|assistant|>`. */
export function encodePrompt(messages: readonly ChatMessage[]): number[] {
  return [...encodeChat(messages).tokens, ASSISTANT];
}
