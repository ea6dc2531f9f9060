import type { Sse } from './chat-run';

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

/** The output items of a streamed Response: each opens when its kind of delta first arrives and closes before the next. */
export class OutputItems {
  readonly output: Item[] = [];
  private seq = 0;
  private open: { key: string; text: string; close: (text: string) => Item } | null = null;

  constructor(private readonly sse: Sse) {}

  send(type: string, data: Record<string, unknown>): void {
    this.sse.send({ type, sequence_number: this.seq++, ...data }, type);
  }

  /** Where the open item is, for its delta events. */
  at() {
    const index = this.output.length - 1;
    return { item_id: this.output[index]!.id, output_index: index };
  }

  /** Append to the item of `key`, opening it (and closing the previous one) first when needed. */
  append(key: string, delta: string, item: () => Item, onOpen: () => void, onClose: (text: string) => Item): void {
    if (this.open?.key !== key) {
      this.close();
      this.output.push(item());
      this.send('response.output_item.added', { output_index: this.output.length - 1, item: this.output.at(-1) });
      this.open = { key, text: '', close: onClose };
      onOpen();
    }
    this.open!.text += delta;
  }

  close(): void {
    if (!this.open) return;
    const index = this.output.length - 1;
    this.output[index] = this.open.close(this.open.text);
    this.send('response.output_item.done', { output_index: index, item: this.output[index] });
    this.open = null;
  }
}
