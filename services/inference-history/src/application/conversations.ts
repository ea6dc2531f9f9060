/** Conversation use cases: the caller's team scopes every call; items are checked here, positions handed out by the store. */
import { createHash } from 'node:crypto';
import { errors, type FieldError, isUuid, Reasons, uuidv7 } from '@whetstone/errors';
import {
  checkItem,
  type Conversation,
  type ConversationItem,
  ConversationReasons,
  DEFAULT_PAGE,
  type ItemInput,
  MAX_ADD_ITEMS,
  MAX_CREATE_ITEMS,
  MAX_PAGE,
  metadataProblems,
} from '../domain/conversation';
import type { ConversationStore, ItemPage } from './ports';

export interface ConversationDeps {
  conversations: ConversationStore;
  now: () => Date;
}

/** A page as the caller asks for it: `limit` 0 means the default; `afterId` empty or absent starts at the first. */
export interface PageRequest {
  limit: number;
  afterId?: string | undefined;
  ascending: boolean;
}

/**
 * Field errors sent back at most: they travel in the status trailer, which clients cap (8 KiB by default in grpc-js),
 * and the first few are enough to fix a request.
 */
const MAX_FIELD_ERRORS = 20;

const invalid = (problems: FieldError[]) =>
  errors.invalid(
    Reasons.VALIDATION_FAILED,
    `${problems[0]!.field} ${problems[0]!.message}.`,
    problems.slice(0, MAX_FIELD_ERRORS),
  );

/** An id as quoted in a message: a valid one whole, garbage cut short (it travels in a header). */
const shown = (id: string) => (id.length > 100 ? `${id.slice(0, 100)}…` : id);

const notFound = (id: string) =>
  errors.notFound(ConversationReasons.NOT_FOUND, `Conversation '${shown(id)}' was not found.`);

const itemNotFound = (itemId: string, id: string) =>
  errors.notFound(
    ConversationReasons.ITEM_NOT_FOUND,
    `Item '${shown(itemId)}' was not found in conversation '${shown(id)}'.`,
  );

/** The canonical (lower-case) id, or null for a string that is no UUID (so it can name no row). */
const uuidOf = (id: string) => (isUuid(id) ? id.toLowerCase() : null);

/** The items checked and minted: ids in time order, one clock reading for the call. */
function mintedItems(inputs: ItemInput[], range: { min: number; max: number }, now: Date): ConversationItem[] {
  if (inputs.length < range.min || inputs.length > range.max)
    throw invalid([{ field: 'items', message: `must hold ${range.min} to ${range.max} items` }]);
  const problems: FieldError[] = [];
  const items: ConversationItem[] = [];
  inputs.forEach((input, i) => {
    const checked = checkItem(input, `items[${i}]`);
    if ('problems' in checked) problems.push(...checked.problems);
    else items.push({ ...checked.item, id: uuidv7(now.getTime()), createdAt: now });
  });
  if (problems.length) throw invalid(problems);
  return items;
}

function checkedMetadata(metadata: Record<string, string>): Record<string, string> {
  const problems = metadataProblems(metadata);
  if (problems.length) throw invalid(problems);
  return metadata;
}

/** The team's conversation; NotFound for an unknown, malformed or another team's id. */
export async function getConversation(deps: ConversationDeps, teamId: string, id: string): Promise<Conversation> {
  const uuid = uuidOf(id);
  const found = uuid ? await deps.conversations.get(teamId, uuid) : null;
  if (!found) throw notFound(id);
  return found;
}

/** Stores a new conversation of the team with its first 0–20 items, at positions 0, 1, … */
export async function createConversation(
  deps: ConversationDeps,
  teamId: string,
  metadata: Record<string, string>,
  inputs: ItemInput[],
): Promise<{ conversation: Conversation; items: ConversationItem[] }> {
  const now = deps.now();
  const conversation = { id: uuidv7(now.getTime()), teamId, createdAt: now, metadata: checkedMetadata(metadata) };
  const items = mintedItems(inputs, { min: 0, max: MAX_CREATE_ITEMS }, now);
  await deps.conversations.create(conversation, items);
  return { conversation, items };
}

/** Replaces the metadata of the team's conversation; returns it updated. */
export async function updateConversation(
  deps: ConversationDeps,
  teamId: string,
  id: string,
  metadata: Record<string, string>,
): Promise<Conversation> {
  const checked = checkedMetadata(metadata);
  const uuid = uuidOf(id);
  const updated = uuid ? await deps.conversations.updateMetadata(teamId, uuid, checked) : null;
  if (!updated) throw notFound(id);
  return updated;
}

/** Deletes the team's conversation and its items; resolves with its id. */
export async function deleteConversation(deps: ConversationDeps, teamId: string, id: string): Promise<string> {
  const uuid = uuidOf(id);
  if (!uuid || !(await deps.conversations.delete(teamId, uuid))) throw notFound(id);
  return uuid;
}

/** The id of an append's k-th item under an idempotency key: a UUID (version 8) from a hash of the key and k. */
export function keyedItemId(key: string, k: number): string {
  const hex = createHash('sha256').update(`${key.toLowerCase()}:${k}`).digest('hex').slice(0, 32).split('');
  hex[12] = '8';
  hex[16] = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The items an earlier append under the same key stored, when it did (its first item is there); else null. */
async function repeated(deps: ConversationDeps, conversationId: string, items: ConversationItem[]) {
  if (!(await deps.conversations.getItem(conversationId, items[0]!.id))) return null;
  const ids = items.map((i) => i.id);
  return deps.conversations.getItems(conversationId, ids);
}

/**
 * Appends 1–1,000 items after every item already there, in order and next to each other; returns them stored. With
 * an idempotency key the items' ids come from it, and a repeat of an append that was stored answers what it stored
 * (also when the two ran at once and the later one met the earlier's ids).
 */
export async function addItems(
  deps: ConversationDeps,
  teamId: string,
  id: string,
  inputs: ItemInput[],
  idempotencyKey = '',
): Promise<ConversationItem[]> {
  if (idempotencyKey && !isUuid(idempotencyKey))
    throw invalid([{ field: 'idempotency_key', message: 'must be a UUID' }]);
  const minted = mintedItems(inputs, { min: 1, max: MAX_ADD_ITEMS }, deps.now());
  const items = idempotencyKey ? minted.map((item, k) => ({ ...item, id: keyedItemId(idempotencyKey, k) })) : minted;
  const uuid = uuidOf(id);
  if (!uuid) throw notFound(id);
  if (idempotencyKey) {
    await getConversation(deps, teamId, uuid);
    const earlier = await repeated(deps, uuid, items);
    if (earlier) return earlier;
  }
  let appended: boolean;
  try {
    appended = await deps.conversations.append(teamId, uuid, items);
  } catch (err) {
    const earlier = idempotencyKey ? await repeated(deps, uuid, items) : null;
    if (earlier) return earlier;
    throw err;
  }
  if (!appended) throw notFound(id);
  return items;
}

/**
 * A page of the conversation's items by position (ascending or newest first), strictly beyond `afterId` in that
 * order. A limit outside 1–10,000 is InvalidArgument on `limit` (not clamped: a caller asking for more than it can
 * get should know); an `afterId` that is not one of the conversation's items is InvalidArgument on `after`.
 */
export async function listItems(
  deps: ConversationDeps,
  teamId: string,
  id: string,
  page: PageRequest,
): Promise<ItemPage> {
  const limit = page.limit === 0 ? DEFAULT_PAGE : page.limit;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE)
    throw invalid([{ field: 'limit', message: `must be 1 to ${MAX_PAGE}` }]);
  const conversation = await getConversation(deps, teamId, id);
  const afterId = page.afterId ? uuidOf(page.afterId) : undefined;
  const found =
    afterId === null
      ? null
      : await deps.conversations.listItems(conversation.id, { limit, afterId, ascending: page.ascending });
  if (!found) throw invalid([{ field: 'after', message: 'must name an item of this conversation' }]);
  return found;
}

/** One item of the team's conversation. */
export async function getItem(
  deps: ConversationDeps,
  teamId: string,
  id: string,
  itemId: string,
): Promise<ConversationItem> {
  const conversation = await getConversation(deps, teamId, id);
  const uuid = uuidOf(itemId);
  const item = uuid ? await deps.conversations.getItem(conversation.id, uuid) : null;
  if (!item) throw itemNotFound(itemId, id);
  return item;
}

/** Deletes one item of the team's conversation (the positions of the others stay); returns the conversation. */
export async function deleteItem(
  deps: ConversationDeps,
  teamId: string,
  id: string,
  itemId: string,
): Promise<Conversation> {
  const conversation = await getConversation(deps, teamId, id);
  const uuid = uuidOf(itemId);
  if (!uuid || !(await deps.conversations.deleteItem(conversation.id, uuid))) throw itemNotFound(itemId, id);
  return conversation;
}
