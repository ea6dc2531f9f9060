import type { ConversationStore } from '../application/ports';
import type { Conversation, ConversationItem, ConversationItemType } from '../domain/conversation';
import type { PrismaClient } from '../generated/prisma/client';

type ConversationRow = NonNullable<Awaited<ReturnType<PrismaClient['conversation']['findFirst']>>>;
type ItemRow = NonNullable<Awaited<ReturnType<PrismaClient['conversationItem']['findFirst']>>>;

/**
 * An append holds the conversation's row lock from reserving its positions to its commit: long enough for 1,000
 * large items, short enough that a stuck one does not hold the next Responses call of the conversation for long.
 */
const APPEND_TRANSACTION = { maxWait: 10_000, timeout: 30_000 };

const conversationOf = (row: ConversationRow): Conversation => ({
  id: row.id,
  teamId: row.teamId,
  createdAt: row.createdAt,
  metadata: row.metadata as Record<string, string>,
});

const itemOf = (row: ItemRow): ConversationItem => ({
  id: row.id,
  type: row.type as ConversationItemType,
  role: row.role,
  texts: row.texts as string[],
  callId: row.callId,
  name: row.name,
  arguments: row.arguments,
  output: row.output,
  createdAt: row.createdAt,
});

const itemRow = (conversationId: string, position: number, item: ConversationItem) => ({
  id: item.id,
  conversationId,
  position,
  type: item.type,
  role: item.role,
  texts: item.texts,
  callId: item.callId,
  name: item.name,
  arguments: item.arguments,
  output: item.output,
  createdAt: item.createdAt,
});

/** Conversations and their items in the history schema; every conversation lookup is by id and team. */
export function prismaConversationStore(prisma: PrismaClient): ConversationStore {
  return {
    async create(conversation, items) {
      const { id, teamId, createdAt, metadata } = conversation;
      await prisma.$transaction([
        prisma.conversation.create({ data: { id, teamId, createdAt, metadata, nextPosition: items.length } }),
        prisma.conversationItem.createMany({ data: items.map((item, i) => itemRow(id, i, item)) }),
      ]);
    },
    async get(teamId, id) {
      const row = await prisma.conversation.findFirst({ where: { id, teamId } });
      return row ? conversationOf(row) : null;
    },
    async updateMetadata(teamId, id, metadata) {
      const rows = await prisma.conversation.updateManyAndReturn({ where: { id, teamId }, data: { metadata } });
      return rows[0] ? conversationOf(rows[0]) : null;
    },
    async delete(teamId, id) {
      // The items go with it (ON DELETE CASCADE).
      return (await prisma.conversation.deleteMany({ where: { id, teamId } })).count > 0;
    },
    async append(teamId, id, items) {
      return prisma.$transaction(async (tx) => {
        // The UPDATE takes the row lock until commit: concurrent appends queue here, and each gets the next block
        // of positions, so one call's items are never interleaved with another's.
        const reserved = await tx.$queryRaw<{ next_position: number }[]>`
          UPDATE conversations SET next_position = next_position + ${items.length}::int
          WHERE id = ${id}::uuid AND team_id = ${teamId} RETURNING next_position`;
        if (!reserved[0]) return false;
        const first = reserved[0].next_position - items.length;
        await tx.conversationItem.createMany({ data: items.map((item, i) => itemRow(id, first + i, item)) });
        return true;
      }, APPEND_TRANSACTION);
    },
    async listItems(conversationId, page) {
      const cursor = page.afterId
        ? await prisma.conversationItem.findFirst({
            where: { id: page.afterId, conversationId },
            select: { position: true },
          })
        : null;
      if (page.afterId && !cursor) return null;
      const beyond = cursor ? { position: page.ascending ? { gt: cursor.position } : { lt: cursor.position } } : {};
      const rows = await prisma.conversationItem.findMany({
        where: { conversationId, ...beyond },
        orderBy: { position: page.ascending ? 'asc' : 'desc' },
        take: page.limit + 1,
      });
      return { items: rows.slice(0, page.limit).map(itemOf), hasMore: rows.length > page.limit };
    },
    async getItem(conversationId, itemId) {
      const row = await prisma.conversationItem.findFirst({ where: { id: itemId, conversationId } });
      return row ? itemOf(row) : null;
    },
    async deleteItem(conversationId, itemId) {
      return (await prisma.conversationItem.deleteMany({ where: { id: itemId, conversationId } })).count > 0;
    },
  };
}
