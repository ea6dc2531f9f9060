import { AppError, Reasons } from '@whetstone/errors';
import type { DecoderConfig, Window } from './model';
import { type ChatMessage, encodeChat } from './tokenizer';

export interface ChatRow {
  messages: ChatMessage[];
}

const ROLES = new Set(['system', 'user', 'assistant']);

/** Rejects rows that are not chat-formatted, with one field error per bad row. */
export function validateChatRows(rows: readonly unknown[], name: string): ChatRow[] {
  const fieldErrors: { field: string; message: string; code: string }[] = [];
  rows.forEach((row, i) => {
    const messages = (row as { messages?: unknown })?.messages;
    if (!Array.isArray(messages) || messages.length === 0) {
      fieldErrors.push({
        field: `${name}.${i}.messages`,
        message: 'a chat example needs a non-empty messages array',
        code: 'required',
      });
      return;
    }
    messages.forEach((m: { role?: unknown; content?: unknown }, j) => {
      if (!ROLES.has(m?.role as string))
        fieldErrors.push({
          field: `${name}.${i}.messages.${j}.role`,
          message: 'role must be system, user or assistant',
          code: 'invalid_enum',
        });
      if (typeof m?.content !== 'string')
        fieldErrors.push({
          field: `${name}.${i}.messages.${j}.content`,
          message: 'content must be a string',
          code: 'invalid_type',
        });
    });
    if (
      !messages.some(
        (m: { role?: unknown; content?: unknown; weight?: unknown }) =>
          m?.role === 'assistant' && typeof m.content === 'string' && m.content.length > 0 && m.weight !== 0,
      )
    ) {
      fieldErrors.push({
        field: `${name}.${i}.messages`,
        message: 'a chat example needs a non-empty assistant message to learn from (one not given weight 0)',
        code: 'required',
      });
    }
  });
  if (rows.length === 0) fieldErrors.push({ field: name, message: 'no examples', code: 'too_small' });
  if (fieldErrors.length)
    throw new AppError(
      'InvalidArgument',
      Reasons.VALIDATION_FAILED,
      `${fieldErrors.length} problem(s) in ${name} data`,
      { fieldErrors },
    );
  return rows as ChatRow[];
}

/**
 * A conversation cut into windows of at most `context` inputs; only targets
 * inside assistant replies carry weight.
 */
export function chatWindows(config: DecoderConfig, row: ChatRow): Window[] {
  const { tokens, trainable } = encodeChat(row.messages);
  const windows: Window[] = [];
  for (let start = 0; start < tokens.length - 1; start += config.context) {
    const end = Math.min(tokens.length, start + config.context + 1);
    const inputs = tokens.slice(start, end - 1);
    const targets = tokens.slice(start + 1, end);
    const weights = trainable.slice(start + 1, end).map((t) => (t ? 1 : 0));
    if (weights.some((w) => w > 0)) windows.push({ inputs, targets, weights });
  }
  return windows;
}
