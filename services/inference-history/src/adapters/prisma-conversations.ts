import type { ConversationStore } from '../application/ports';
import type { Conversation, ConversationItem, ConversationItemType } from '../domain/conversation';
import type { PrismaClient } from '../generated/prisma/client';

type ConversationRow = NonNullable<Awaited<ReturnType<PrismaClient['conversation']['findFirst']>>>;
type ItemRow = NonNullable<Awaited<ReturnType<PrismaClient['conversationItem']['findFirst']>>>;

/**
 * An append in one statement (one round trip, one implicit transaction): the UPDATE reserves a block of positions and
 * holds the conversation's row lock until the statement commits, so concurrent appends queue there and one call's
 * items are never interleaved with another's; the INSERT writes the items at `first + k`. Nothing is inserted when
 * the conversation is not the team's.
 */
const APPEND_SQL = `WITH reserved AS (
    UPDATE conversations SET next_position = next_position + $3::int
    WHERE id = $1::uuid AND team_id = $2 RETURNING next_position - $3::int AS first
  )
  INSERT INTO conversation_items
    (id, conversation_id, position, type, role, texts, call_id, name, arguments, output, created_at)
  SELECT i.id, $1::uuid, r.first + i.k, i.type, i.role, i.texts, i."callId", i.name, i.arguments, i.output,
    i."createdAt"
  FROM reserved r
  CROSS JOIN jsonb_to_recordset($4::jsonb) AS i(id uuid, k int, type text, role text, texts jsonb, "callId" text,
    name text, arguments text, output text, "createdAt" timestamptz)
  RETURNING 1`;

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
      const rows = items.map((item, k) => ({ ...itemRow(id, k, item), k }));
      const inserted = await prisma.$queryRawUnsafe<unknown[]>(
        APPEND_SQL,
        id,
        teamId,
        items.length,
        JSON.stringify(rows),
      );
      return inserted.length > 0;
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
    async getItems(conversationId, itemIds) {
      const rows = await prisma.conversationItem.findMany({
        where: { id: { in: itemIds }, conversationId },
        orderBy: { position: 'asc' },
      });
      return rows.map(itemOf);
    },
    async deleteItem(conversationId, itemId) {
      return (await prisma.conversationItem.deleteMany({ where: { id: itemId, conversationId } })).count > 0;
    },
  };
}
