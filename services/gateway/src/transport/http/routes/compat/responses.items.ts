/** The Response object's output items, for live answers and stored ones read back alike. */

export type Item = Record<string, unknown> & { type: string; id: string };

export const reasoningItem = (id: string, text: string): Item => ({
  type: 'reasoning',
  id: `rs_${id}`,
  summary: text ? [{ type: 'summary_text', text }] : [],
});
/** The assistant's message; `logprobs` are its text's tokens when the call asked for them (`include`). */
export const messageItem = (id: string, text: string | null, logprobs: unknown[] = []): Item => ({
  type: 'message',
  id: `msg_${id}`,
  status: text === null ? 'in_progress' : 'completed',
  role: 'assistant',
  content: text === null ? [] : [{ type: 'output_text', text, annotations: [], logprobs }],
});
export const callItem = (id: string, index: number, callId: string, name: string, args: string | null): Item => ({
  type: 'function_call',
  id: `fc_${id}_${index}`,
  call_id: callId,
  name,
  arguments: args ?? '',
  status: args === null ? 'in_progress' : 'completed',
});
