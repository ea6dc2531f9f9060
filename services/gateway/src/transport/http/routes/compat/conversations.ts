import { AppError, isUuid } from '@whetstone/errors';
import { invalidBody } from '../../validate';
import type {
  ConversationItemView,
  ConversationsPort,
  ConversationView,
  NewConversationItem,
} from '../../../../application/history-ports';
import type { ChatToolCall, Principal } from '../../../../application/ports';
import type { ResponseInputItem, ResponsesBody } from './responses.schema';
import { CONVERSATION_PREFIX } from '../../../../application/history-ports';

/**
 * OpenAI's conversations as the Responses surface uses them: a conversation's items become the call's leading input,
 * and once the call has answered, its own input items and its output are appended to the conversation.
 */

export { CONVERSATION_PREFIX };
/** Public item id prefixes by type, as OpenAI's (`msg_`, `fc_`, `fco_`). */
const ITEM_PREFIX: Record<ConversationItemView['type'], string> = {
  message: 'msg_',
  function_call: 'fc_',
  function_call_output: 'fco_',
};

export const conversationNotFound = (id: string) =>
  new AppError('NotFound', 'CONVERSATION_NOT_FOUND', `Conversation '${id.slice(0, 100)}' was not found.`);

/** The UUID inside a public `conv_…` id; NotFound for anything else. */
export function conversationIdOf(publicId: string): string {
  const id = publicId.startsWith(CONVERSATION_PREFIX) ? publicId.slice(CONVERSATION_PREFIX.length) : '';
  if (!isUuid(id)) throw conversationNotFound(publicId);
  return id;
}

/** The UUID inside a public item id (any of the item prefixes); null for anything else. */
export function itemIdOf(publicId: string): string | null {
  for (const prefix of Object.values(ITEM_PREFIX))
    if (publicId.startsWith(prefix) && isUuid(publicId.slice(prefix.length))) return publicId.slice(prefix.length);
  return null;
}

const unix = (d: Date) => Math.floor(d.getTime() / 1000);

/** OpenAI's Conversation object. */
export const conversationObject = (c: ConversationView) => ({
  id: `${CONVERSATION_PREFIX}${c.id}`,
  object: 'conversation',
  created_at: unix(c.createdAt),
  metadata: c.metadata,
});

/** An item as OpenAI's Conversations API lists it. */
export function itemObject(item: ConversationItemView): Record<string, unknown> {
  const id = `${ITEM_PREFIX[item.type]}${item.id}`;
  if (item.type === 'function_call')
    return {
      type: 'function_call',
      id,
      call_id: item.callId,
      name: item.name,
      arguments: item.arguments,
      status: 'completed',
    };
  if (item.type === 'function_call_output')
    return { type: 'function_call_output', id, call_id: item.callId, output: item.output, status: 'completed' };
  const assistant = item.role === 'assistant';
  const content = item.texts.map((text) =>
    assistant ? { type: 'output_text', text, annotations: [] } : { type: 'input_text', text },
  );
  return { type: 'message', id, role: item.role, status: 'completed', content };
}

const empty = { role: '', texts: [], callId: '', name: '', arguments: '', output: '' };

/** A Responses input item as a conversation item to store. */
export function newItemOf(item: ResponseInputItem): NewConversationItem {
  if (item.type === 'function_call')
    return { ...empty, type: 'function_call', callId: item.call_id, name: item.name, arguments: item.arguments };
  if (item.type === 'function_call_output')
    return { ...empty, type: 'function_call_output', callId: item.call_id, output: item.output };
  const texts = typeof item.content === 'string' ? [item.content] : item.content.map((p) => p.text);
  return { ...empty, type: 'message', role: item.role, texts };
}

/** A stored item as a Responses input item (what the model reads). */
function inputItemOf(item: ConversationItemView): ResponseInputItem {
  if (item.type === 'function_call')
    return { type: 'function_call', call_id: item.callId, name: item.name, arguments: item.arguments };
  if (item.type === 'function_call_output')
    return { type: 'function_call_output', call_id: item.callId, output: item.output };
  const type = item.role === 'assistant' ? ('output_text' as const) : ('input_text' as const);
  const role = item.role as 'user' | 'assistant' | 'system' | 'developer';
  return { type: 'message', role, content: item.texts.map((text) => ({ type, text })) };
}

/** Every item of a conversation, oldest first. */
async function allItems(conversations: ConversationsPort, principal: Principal, conversationId: string) {
  const items: ConversationItemView[] = [];
  let afterId: string | undefined;
  for (;;) {
    const page = await conversations.listItems(principal, conversationId, { limit: 10_000, afterId, ascending: true });
    items.push(...page.items);
    if (!page.hasMore || !page.items.length) return items;
    afterId = page.items.at(-1)!.id;
  }
}

/** Input items one call may append (the service takes 1,000 at once; the rest is room for the output). */
const MAX_APPENDED_INPUT = 900;

/**
 * What the conversation could not keep is refused before the call, not after it has been answered and billed: too
 * many input items, or a message without a text part.
 */
function checkAppendable(items: ResponseInputItem[]): void {
  if (items.length > MAX_APPENDED_INPUT)
    throw invalidBody('input', `holds at most ${MAX_APPENDED_INPUT} items with a conversation`);
  const at = emptyMessageAt(items);
  if (at >= 0) throw invalidBody(`input.${at}.content`, 'must hold at least one part with a conversation');
}

/** The index of the first message with no content part, which a conversation cannot keep; -1 when none. */
export const emptyMessageAt = (items: ResponseInputItem[]): number =>
  items.findIndex(
    (item) =>
      item.type !== 'function_call' &&
      item.type !== 'function_call_output' &&
      Array.isArray(item.content) &&
      item.content.length === 0,
  );

/** The request's own input as items. */
const requestItems = (body: ResponsesBody): ResponseInputItem[] =>
  typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;

/**
 * A Responses body whose input is the conversation's items then its own, and what to append once it has answered.
 * NotFound naming `conversation` when it is not the team's.
 */
export async function withConversation(
  conversations: ConversationsPort,
  principal: Principal,
  body: ResponsesBody,
  publicId: string,
): Promise<{ body: ResponsesBody; id: string; append: (reply: ReplyItems) => Promise<void> }> {
  const notFound = () =>
    new AppError('NotFound', 'CONVERSATION_NOT_FOUND', `Conversation '${publicId.slice(0, 100)}' was not found.`, {
      fieldErrors: [{ field: 'conversation', message: 'names no conversation of this team' }],
    });
  const id = publicId.startsWith(CONVERSATION_PREFIX) ? publicId.slice(CONVERSATION_PREFIX.length) : '';
  if (!isUuid(id)) throw notFound();
  // One read: listing the items is also the check that the conversation is the team's.
  const stored = await allItems(conversations, principal, id).catch((err: unknown) => {
    throw err instanceof AppError && err.kind === 'NotFound' ? notFound() : err;
  });
  const earlier = stored.map(inputItemOf);
  const own = requestItems(body);
  checkAppendable(own);
  const append = async (reply: ReplyItems) => {
    const output: NewConversationItem[] = [];
    if (reply.text || !reply.toolCalls.length)
      output.push({ ...empty, type: 'message', role: 'assistant', texts: [reply.text] });
    // A call the model named no id for is kept under its position, so its output can still name it.
    reply.toolCalls.forEach((c, i) =>
      output.push({
        ...empty,
        type: 'function_call',
        callId: c.id || `call_${i}`,
        name: c.name,
        arguments: c.arguments,
      }),
    );
    const items = [...own.map(newItemOf), ...output];
    // Keyed by the call's id, the append can be retried while inference-history restarts: a repeat of one that
    // was stored (its answer lost) adds nothing. The call has answered and is billed by now, so it is worth waiting.
    const key = isUuid(reply.responseId) ? reply.responseId : undefined;
    await withRetries(() => conversations.addItems(principal, id, items, key));
  };
  return { body: { ...body, input: [...earlier, ...own] }, id, append };
}

/** Waits before each retry of an append inference-history could not take (about 8 s in all). */
const APPEND_RETRY_MS = [250, 500, 1000, 2000, 4000];

/** Runs `call`, again after each delay while it fails as unavailable or timed out. */
async function withRetries<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      const transient = err instanceof AppError && (err.kind === 'Unavailable' || err.kind === 'DeadlineExceeded');
      const delay = APPEND_RETRY_MS[attempt];
      if (!transient || delay === undefined) throw err;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** What a reply adds to its conversation: its text and its function calls, under the call's response id. */
export interface ReplyItems {
  responseId: string;
  text: string;
  toolCalls: ChatToolCall[];
}
