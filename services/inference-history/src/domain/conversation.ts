/**
 * A conversation (OpenAI's Conversations API): an ordered list of items that Responses calls read as context and
 * extend. The rules here are what an item and the metadata must be; the gateway checks the public shapes first.
 */
import type { FieldError } from '@whetstone/errors';

export const ITEM_TYPES = ['message', 'function_call', 'function_call_output'] as const;
export type ConversationItemType = (typeof ITEM_TYPES)[number];

export interface ConversationItem {
  id: string;
  type: ConversationItemType;
  /** A message's role: user, assistant, system or developer; empty for other types. */
  role: string;
  /** A message's text parts, in order; empty for other types. */
  texts: string[];
  /** A function call's id, on the call and on its output. */
  callId: string;
  /** A function call's function name. */
  name: string;
  /** A function call's arguments (JSON text, not parsed here). */
  arguments: string;
  /** A function call output's output. */
  output: string;
  createdAt: Date;
}

/** An item to add: the service mints its id and time. */
export type NewConversationItem = Omit<ConversationItem, 'id' | 'createdAt'>;

/** An item as a caller sent it: its type is not known to be one of ours yet. */
export type ItemInput = Omit<NewConversationItem, 'type'> & { type: string };

export interface Conversation {
  id: string;
  teamId: string;
  createdAt: Date;
  metadata: Record<string, string>;
}

export const ROLES = ['user', 'assistant', 'system', 'developer'] as const;
/** Items a new conversation may start with, as OpenAI allows. */
export const MAX_CREATE_ITEMS = 20;
/** Items one append may add (a Responses call adds its input and output at once). */
export const MAX_ADD_ITEMS = 1_000;
/** Characters of text one item may hold (its parts, arguments and output together). */
export const MAX_ITEM_CHARS = 1_000_000;
/** Characters of a call id or a function name. */
export const MAX_NAME_CHARS = 200;
/** Items one page may list (the gateway's public limit is 100; a Responses call reads whole conversations). */
export const MAX_PAGE = 10_000;
/** Items a page holds when the caller does not say. */
export const DEFAULT_PAGE = 20;
export const MAX_METADATA_PAIRS = 16;
export const MAX_METADATA_KEY = 64;
export const MAX_METADATA_VALUE = 512;

export const ConversationReasons = {
  NOT_FOUND: 'CONVERSATION_NOT_FOUND',
  ITEM_NOT_FOUND: 'CONVERSATION_ITEM_NOT_FOUND',
} as const;

const NUL = '\u0000';
// Postgres text and jsonb cannot hold NUL: refused here rather than failing as an internal error on insert.
const NUL_MESSAGE = 'must not contain NUL (\\u0000) characters';

const isItemType = (type: string): type is ConversationItemType => (ITEM_TYPES as readonly string[]).includes(type);

/** Only the fields of the item's type: a message's stray `output` is not stored, nor counted. */
function ownFields(item: ItemInput, type: ConversationItemType): NewConversationItem {
  const none = { role: '', texts: [], callId: '', name: '', arguments: '', output: '' };
  if (type === 'message') return { ...none, type, role: item.role, texts: item.texts };
  if (type === 'function_call')
    return { ...none, type, callId: item.callId, name: item.name, arguments: item.arguments };
  return { ...none, type, callId: item.callId, output: item.output };
}

/** The field that carries most of an item's text, named when the item holds too much. */
const TEXT_FIELD: Record<ConversationItemType, string> = {
  message: 'texts',
  function_call: 'arguments',
  function_call_output: 'output',
};

function fieldProblems(item: NewConversationItem, need: (ok: boolean, field: string, message: string) => void) {
  const chars = item.texts.reduce((n, t) => n + t.length, 0) + item.arguments.length + item.output.length;
  need(chars <= MAX_ITEM_CHARS, TEXT_FIELD[item.type], `must hold at most ${MAX_ITEM_CHARS} characters in all`);
  const name = (value: string) => value.length > 0 && value.length <= MAX_NAME_CHARS;
  if (item.type === 'message') {
    need((ROLES as readonly string[]).includes(item.role), 'role', `must be one of ${ROLES.join(', ')}`);
    need(item.texts.length > 0, 'texts', 'must hold at least one text part');
  } else {
    need(name(item.callId), 'call_id', `must be 1 to ${MAX_NAME_CHARS} characters`);
    if (item.type === 'function_call') need(name(item.name), 'name', `must be 1 to ${MAX_NAME_CHARS} characters`);
  }
  const texts: [string, string[]][] = [
    ['texts', item.texts],
    ['call_id', [item.callId]],
    ['name', [item.name]],
    ['arguments', [item.arguments]],
    ['output', [item.output]],
  ];
  for (const [field, values] of texts) need(!values.some((v) => v.includes(NUL)), field, NUL_MESSAGE);
}

/**
 * The item with only its type's fields, or what is wrong with it, each field named under `at` (`items[3].role`).
 * Messages never quote the item's text.
 */
export function checkItem(input: ItemInput, at: string): { item: NewConversationItem } | { problems: FieldError[] } {
  if (!isItemType(input.type))
    return { problems: [{ field: `${at}.type`, message: `must be one of ${ITEM_TYPES.join(', ')}` }] };
  const item = ownFields(input, input.type);
  const problems: FieldError[] = [];
  fieldProblems(item, (ok, field, message) => {
    if (!ok) problems.push({ field: `${at}.${field}`, message });
  });
  return problems.length ? { problems } : { item };
}

/** What is wrong with a conversation's metadata: at most 16 pairs, keys 1–64 characters, values up to 512. */
export function metadataProblems(metadata: Record<string, string>): FieldError[] {
  const problems: FieldError[] = [];
  const keys = Object.keys(metadata);
  if (keys.length > MAX_METADATA_PAIRS)
    problems.push({ field: 'metadata', message: `must hold at most ${MAX_METADATA_PAIRS} pairs` });
  const badKey = (key: string) => key.length === 0 || key.length > MAX_METADATA_KEY || key.includes(NUL);
  if (keys.some(badKey))
    problems.push({ field: 'metadata', message: `keys must be 1 to ${MAX_METADATA_KEY} characters, without NUL` });
  for (const key of keys.filter((k) => !badKey(k))) {
    const value = metadata[key]!;
    if (value.length > MAX_METADATA_VALUE)
      problems.push({ field: `metadata.${key}`, message: `must be at most ${MAX_METADATA_VALUE} characters` });
    else if (value.includes(NUL)) problems.push({ field: `metadata.${key}`, message: NUL_MESSAGE });
  }
  return problems;
}
