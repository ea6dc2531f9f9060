import { z } from 'zod';
import { AppError } from '@whetstone/errors';
import type { ConversationsPort } from '../../../../application/history-ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';
import { invalidBody, parseParams } from '../../validate';
import { Metadata, openAiList } from './blocks';
import {
  conversationIdOf,
  conversationObject,
  CONVERSATION_PREFIX,
  emptyMessageAt,
  itemIdOf,
  itemObject,
  newItemOf,
} from './conversations';
import { InputItem, type ResponseInputItem } from './responses.schema';

/**
 * OpenAI's Conversations API (the `openai` client's `conversations` and `conversations.items`): a conversation is an
 * ordered list of items kept by inference-history; `POST /v1/responses` with `conversation` reads it as context and
 * appends its own input and output.
 */

/** Items per create or add call, as OpenAI allows. */
const MAX_ITEMS = 20;

const CreateBody = z
  .object({
    items: z.array(InputItem).max(MAX_ITEMS, `must hold at most ${MAX_ITEMS} items`).nullish(),
    metadata: Metadata.nullish(),
  })
  .openapi('ConversationCreateRequest');
const UpdateBody = z.object({ metadata: Metadata.nullable() }).openapi('ConversationUpdateRequest');
const ItemsBody = z
  .object({
    items: z
      .array(InputItem)
      .min(1, 'must hold at least 1 item')
      .max(MAX_ITEMS, `must hold at most ${MAX_ITEMS} items`),
  })
  .openapi('ConversationItemsCreateRequest');
const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  after: z.string().max(200).optional(),
  order: z.enum(['asc', 'desc']).optional(),
  include: z.union([z.string(), z.array(z.string())]).optional(),
});

const tag = 'Compatible surfaces';

const itemNotFound = (itemId: string, conversationId: string) =>
  new AppError(
    'NotFound',
    'CONVERSATION_ITEM_NOT_FOUND',
    `Item '${itemId.slice(0, 100)}' was not found in conversation '${conversationId.slice(0, 100)}'.`,
  );

/** The conversation and item UUIDs of an item's path; NotFound when either names none. */
function itemPath(params: Record<string, unknown>): { id: string; itemId: string } {
  const id = conversationIdOf(String(params.conversation_id));
  const itemId = itemIdOf(String(params.item_id));
  if (!itemId) throw itemNotFound(String(params.item_id), String(params.conversation_id));
  return { id, itemId };
}

/** A message with no content part cannot be kept: 422 naming it. */
function checkParts(items: ResponseInputItem[]): void {
  const at = emptyMessageAt(items);
  if (at >= 0) throw invalidBody(`items.${at}.content`, 'must hold at least one part');
}

/** POST /v1/conversations, GET/POST/DELETE /v1/conversations/:conversation_id. */
export function registerConversationRoutes(api: Api, conversations: ConversationsPort): void {
  api.route(
    {
      method: 'post',
      path: '/v1/conversations',
      summary: `OpenAI-compatible conversation: \`{items?, metadata?}\` with up to ${MAX_ITEMS} Responses input items`,
      tag,
      auth: 'key',
      body: CreateBody,
      response: { status: 200, description: 'The `conversation` object' },
    },
    async ({ res, body }) => {
      checkParts(body.items ?? []);
      const items = (body.items ?? []).map(newItemOf);
      const made = await conversations.create(authOf(res).principal, body.metadata ?? {}, items);
      return conversationObject(made.conversation);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/conversations/:conversation_id',
      summary: 'One conversation',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) =>
      conversationObject(
        await conversations.get(authOf(res).principal, conversationIdOf(String(req.params.conversation_id))),
      ),
  );

  api.route(
    {
      method: 'post',
      path: '/v1/conversations/:conversation_id',
      summary: "Replace a conversation's metadata (`null` clears it)",
      tag,
      auth: 'key-or-session',
      body: UpdateBody,
    },
    async ({ req, res, body }) => {
      const id = conversationIdOf(String(req.params.conversation_id));
      return conversationObject(await conversations.update(authOf(res).principal, id, body.metadata ?? {}));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/v1/conversations/:conversation_id',
      summary: 'Delete a conversation and its items: `{id, object: "conversation.deleted", deleted: true}`',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const id = conversationIdOf(String(req.params.conversation_id));
      await conversations.delete(authOf(res).principal, id);
      return { id: `${CONVERSATION_PREFIX}${id}`, object: 'conversation.deleted', deleted: true };
    },
  );

  registerItemRoutes(api, conversations);
}

/** The items of a conversation: add, list, read and delete. */
function registerItemRoutes(api: Api, conversations: ConversationsPort): void {
  api.route(
    {
      method: 'post',
      path: '/v1/conversations/:conversation_id/items',
      summary: `Append up to ${MAX_ITEMS} items to a conversation: the list of items added`,
      tag,
      auth: 'key-or-session',
      body: ItemsBody,
    },
    async ({ req, res, body }) => {
      const id = conversationIdOf(String(req.params.conversation_id));
      checkParts(body.items);
      const added = await conversations.addItems(authOf(res).principal, id, body.items.map(newItemOf));
      return openAiList(added.map(itemObject), false);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/conversations/:conversation_id/items',
      summary:
        'A conversation\'s items: `{object: "list", data, first_id, last_id, has_more}`; `limit` (1–100, default 20), `order` (desc by default), `after` an item id',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const q = parseParams(ListQuery, req.query, 'query');
      const id = conversationIdOf(String(req.params.conversation_id));
      const afterId = q.after === undefined ? undefined : (itemIdOf(q.after) ?? q.after);
      const page = await conversations.listItems(authOf(res).principal, id, {
        limit: q.limit ?? 20,
        afterId,
        ascending: q.order === 'asc',
      });
      return openAiList(page.items.map(itemObject), page.hasMore);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/conversations/:conversation_id/items/:item_id',
      summary: 'One item of a conversation',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const { id, itemId } = itemPath(req.params);
      return itemObject(await conversations.getItem(authOf(res).principal, id, itemId));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/v1/conversations/:conversation_id/items/:item_id',
      summary: 'Delete one item of a conversation: the `conversation` object',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const { id, itemId } = itemPath(req.params);
      return conversationObject(await conversations.deleteItem(authOf(res).principal, id, itemId));
    },
  );
}
