import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import {
  type Conversation,
  type ConversationItem,
  ConversationItemType,
  type ConversationService,
} from '@whetstone/proto/history/v1';
import type {
  ConversationItemView,
  ConversationsPort,
  ConversationView,
  NewConversationItem,
} from '../application/history-ports';
import { callerOf } from './caller';

const TYPE_OF: Record<ConversationItemType, ConversationItemView['type']> = {
  [ConversationItemType.UNSPECIFIED]: 'message',
  [ConversationItemType.MESSAGE]: 'message',
  [ConversationItemType.FUNCTION_CALL]: 'function_call',
  [ConversationItemType.FUNCTION_CALL_OUTPUT]: 'function_call_output',
};
const TYPE: Record<ConversationItemView['type'], ConversationItemType> = {
  message: ConversationItemType.MESSAGE,
  function_call: ConversationItemType.FUNCTION_CALL,
  function_call_output: ConversationItemType.FUNCTION_CALL_OUTPUT,
};

const conversationView = (c: Conversation | undefined): ConversationView => ({
  id: c?.id ?? '',
  createdAt: c?.createdAt ? timestampDate(c.createdAt) : new Date(0),
  metadata: { ...c?.metadata },
});

const itemView = (i: ConversationItem): ConversationItemView => ({
  id: i.id,
  type: TYPE_OF[i.type],
  role: i.role,
  texts: [...i.texts],
  callId: i.callId,
  name: i.name,
  arguments: i.arguments,
  output: i.output,
  createdAt: i.createdAt ? timestampDate(i.createdAt) : new Date(0),
});

const itemPb = (i: NewConversationItem) => ({ ...i, type: TYPE[i.type] });

/** inference-history's ConversationService over gRPC, in the gateway's plain shapes. */
export function conversationsOverRpc(client: Client<typeof ConversationService>): ConversationsPort {
  return {
    async create(principal, metadata, items) {
      const res = await client.createConversation({ caller: callerOf(principal), metadata, items: items.map(itemPb) });
      return { conversation: conversationView(res.conversation), items: res.items.map(itemView) };
    },
    async get(principal, conversationId) {
      return conversationView(
        (await client.getConversation({ caller: callerOf(principal), conversationId })).conversation,
      );
    },
    async update(principal, conversationId, metadata) {
      const res = await client.updateConversation({ caller: callerOf(principal), conversationId, metadata });
      return conversationView(res.conversation);
    },
    async delete(principal, conversationId) {
      return (await client.deleteConversation({ caller: callerOf(principal), conversationId })).conversationId;
    },
    async addItems(principal, conversationId, items, idempotencyKey = '') {
      const res = await client.addConversationItems({
        caller: callerOf(principal),
        conversationId,
        items: items.map(itemPb),
        idempotencyKey,
      });
      return res.items.map(itemView);
    },
    async listItems(principal, conversationId, page) {
      const res = await client.listConversationItems({
        caller: callerOf(principal),
        conversationId,
        limit: page.limit,
        afterId: page.afterId ?? '',
        ascending: page.ascending,
      });
      return { items: res.items.map(itemView), hasMore: res.hasMore };
    },
    async getItem(principal, conversationId, itemId) {
      const res = await client.getConversationItem({ caller: callerOf(principal), conversationId, itemId });
      return itemView(res.item!);
    },
    async deleteItem(principal, conversationId, itemId) {
      const res = await client.deleteConversationItem({ caller: callerOf(principal), conversationId, itemId });
      return conversationView(res.conversation);
    },
  };
}
