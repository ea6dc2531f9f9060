import type { ServiceImpl } from '@connectrpc/connect';
import type { Caller } from '@whetstone/proto/common/v1';
import type { ConversationService } from '@whetstone/proto/history/v1';
import { requireCaller } from '@whetstone/rpc';
import {
  addItems,
  type ConversationDeps,
  createConversation,
  deleteConversation,
  deleteItem,
  getConversation,
  getItem,
  listItems,
  updateConversation,
} from '../../application/conversations';
import { conversationToPb, itemInputOf, itemToPb } from './conversations.mapper';

const teamOf = (req: { caller?: Caller | undefined }) => requireCaller(req.caller).teamId;

/** ConversationService: proto in, use case, proto out. The caller's team scopes every call. */
export function conversationsHandler(deps: ConversationDeps): ServiceImpl<typeof ConversationService> {
  return {
    async createConversation(req) {
      const made = await createConversation(deps, teamOf(req), { ...req.metadata }, req.items.map(itemInputOf));
      return { conversation: conversationToPb(made.conversation), items: made.items.map(itemToPb) };
    },
    async getConversation(req) {
      return { conversation: conversationToPb(await getConversation(deps, teamOf(req), req.conversationId)) };
    },
    async updateConversation(req) {
      const updated = await updateConversation(deps, teamOf(req), req.conversationId, { ...req.metadata });
      return { conversation: conversationToPb(updated) };
    },
    async deleteConversation(req) {
      return { conversationId: await deleteConversation(deps, teamOf(req), req.conversationId) };
    },
    async addConversationItems(req) {
      const added = await addItems(
        deps,
        teamOf(req),
        req.conversationId,
        req.items.map(itemInputOf),
        req.idempotencyKey,
      );
      return { items: added.map(itemToPb) };
    },
    async listConversationItems(req) {
      const page = await listItems(deps, teamOf(req), req.conversationId, {
        limit: req.limit,
        afterId: req.afterId,
        ascending: req.ascending,
      });
      return { items: page.items.map(itemToPb), hasMore: page.hasMore };
    },
    async getConversationItem(req) {
      return { item: itemToPb(await getItem(deps, teamOf(req), req.conversationId, req.itemId)) };
    },
    async deleteConversationItem(req) {
      const conversation = await deleteItem(deps, teamOf(req), req.conversationId, req.itemId);
      return { conversation: conversationToPb(conversation) };
    },
  };
}
