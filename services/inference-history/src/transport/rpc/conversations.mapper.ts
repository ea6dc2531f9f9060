import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import {
  ConversationItemSchema,
  ConversationItemType as PbItemType,
  ConversationSchema,
  type Conversation as PbConversation,
  type ConversationItem as PbConversationItem,
} from '@whetstone/proto/history/v1';
import type { Conversation, ConversationItem, ConversationItemType, ItemInput } from '../../domain/conversation';

const TYPE_PB: Record<ConversationItemType, PbItemType> = {
  message: PbItemType.MESSAGE,
  function_call: PbItemType.FUNCTION_CALL,
  function_call_output: PbItemType.FUNCTION_CALL_OUTPUT,
};
const TYPE_OF = new Map(Object.entries(TYPE_PB).map(([word, pb]) => [pb, word]));

export function conversationToPb(c: Conversation): PbConversation {
  return create(ConversationSchema, { id: c.id, createdAt: timestampFromDate(c.createdAt), metadata: c.metadata });
}

export function itemToPb(i: ConversationItem): PbConversationItem {
  return create(ConversationItemSchema, {
    id: i.id,
    type: TYPE_PB[i.type],
    role: i.role,
    texts: i.texts,
    callId: i.callId,
    name: i.name,
    arguments: i.arguments,
    output: i.output,
    createdAt: timestampFromDate(i.createdAt),
  });
}

/** An item to add, as sent (its id and time are ignored); an unspecified or unknown type is left for the domain to refuse. */
export function itemInputOf(i: PbConversationItem): ItemInput {
  return {
    type: TYPE_OF.get(i.type) ?? `unknown (${i.type})`,
    role: i.role,
    texts: i.texts,
    callId: i.callId,
    name: i.name,
    arguments: i.arguments,
    output: i.output,
  };
}
