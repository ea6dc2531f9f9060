import { randomUUID } from 'node:crypto';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import { rpcError } from '@whetstone/testing';
import { type ConversationItem, ConversationItemType, ConversationService } from '@whetstone/proto/history/v1';
import { closeRpcChannels, createRpcClient, createRpcServer, type RpcServer } from '@whetstone/rpc';
import type { Logger } from '@whetstone/telemetry';
import { inProcessIngestSignal } from '../../src/adapters/ingest-signal';
import { prismaConversationStore } from '../../src/adapters/prisma-conversations';
import { prismaHistoryStore } from '../../src/adapters/prisma-history-store';
import { prismaJudgeStore } from '../../src/adapters/prisma-judge-store';
import { buildApp } from '../../src/app';
import { createHistoryDatabase } from '../factories/database';

/** In every item's text, so a test can tell whether item text reached a log line. */
const MARKER = 'item-text-never-logged-5c1d';
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const caller = (teamId: string) => ({ teamId, keyId: '', userId: randomUUID() });
const message = (text: string, role = 'user') => ({
  type: ConversationItemType.MESSAGE,
  role,
  texts: [`${MARKER} ${text}`],
});
const functionCall = (callId: string) => ({
  type: ConversationItemType.FUNCTION_CALL,
  callId,
  name: 'lookup',
  arguments: `{"q":"${MARKER}"}`,
});
const functionOutput = (callId: string) => ({
  type: ConversationItemType.FUNCTION_CALL_OUTPUT,
  callId,
  output: `${MARKER} found`,
});
/** What an item says, for comparing orders: a message's text, a call's id. */
const said = (items: ConversationItem[]) => items.map((i) => i.texts.join('').replace(`${MARKER} `, '') || i.callId);

/** A Logger that keeps every line, so a test can check that no item text was logged. */
function recordingLogger(): Logger & { lines: unknown[] } {
  const lines: unknown[] = [];
  const at = (level: string) => (fields: object, message?: string) => void lines.push({ level, fields, message });
  const logger = {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger;
}

/** ConversationService over real gRPC (the service in-process on port 0) and real Postgres. */
describe('ConversationService over gRPC (real Postgres)', () => {
  const logger = recordingLogger();
  let db: Awaited<ReturnType<typeof createHistoryDatabase>>;
  let server: RpcServer;
  let client: Client<typeof ConversationService>;

  beforeAll(async () => {
    db = await createHistoryDatabase('histconv');
    const app = buildApp({
      store: prismaHistoryStore(db.prisma),
      signal: inProcessIngestSignal(),
      now: () => new Date(),
      readWaitMs: 0,
      inFlightWindowMs: 30_000,
      judgeStore: prismaJudgeStore(db.prisma),
      conversations: prismaConversationStore(db.prisma),
      logger,
    });
    server = await createRpcServer({
      name: 'inference-history',
      port: 0,
      host: '127.0.0.1',
      logger,
      register: (router) => app.registerRoutes(router),
    });
    client = createRpcClient(ConversationService, { addr: `127.0.0.1:${server.port}`, caller: 'history-test' });
  });

  afterAll(async () => {
    closeRpcChannels();
    await server?.close();
    await db?.close();
  });

  const list = (
    team: string,
    conversationId: string,
    page: { limit?: number; afterId?: string; ascending?: boolean } = {},
  ) => client.listConversationItems({ caller: caller(team), conversationId, ...page });
  const all = async (team: string, conversationId: string) =>
    said((await list(team, conversationId, { limit: 10_000, ascending: true })).items);

  it('when a conversation is made, read, updated, extended, paged and an item deleted, then each step reads back', async () => {
    const team = randomUUID();
    const made = await client.createConversation({
      caller: caller(team),
      metadata: { topic: 'intro' },
      items: [message('a'), message('b', 'assistant')],
    });
    const conversation = made.conversation!;
    expect(conversation.id).toMatch(UUID_V7);
    expect(Math.abs(timestampDate(conversation.createdAt!).getTime() - Date.now())).toBeLessThan(60_000);
    expect(made.items.map((i) => [i.type, i.role])).toEqual([
      [ConversationItemType.MESSAGE, 'user'],
      [ConversationItemType.MESSAGE, 'assistant'],
    ]);
    expect(made.items.every((i) => UUID_V7.test(i.id) && i.createdAt)).toBe(true);
    const id = conversation.id;
    expect((await client.getConversation({ caller: caller(team), conversationId: id })).conversation).toEqual(
      conversation,
    );

    const updated = await client.updateConversation({ caller: caller(team), conversationId: id, metadata: { a: '1' } });
    expect(updated.conversation).toMatchObject({ id, metadata: { a: '1' } });
    expect((await client.getConversation({ caller: caller(team), conversationId: id })).conversation?.metadata).toEqual(
      { a: '1' },
    );

    const added = await client.addConversationItems({
      caller: caller(team),
      conversationId: id,
      items: [functionCall('call_1'), functionOutput('call_1'), message('c', 'assistant')],
    });
    expect(added.items[0]).toMatchObject({
      type: ConversationItemType.FUNCTION_CALL,
      callId: 'call_1',
      name: 'lookup',
    });
    expect(added.items[1]).toMatchObject({ output: `${MARKER} found`, name: '', texts: [] });
    expect(await all(team, id)).toEqual(['a', 'b', 'call_1', 'call_1', 'c']);

    // Oldest first, two at a time.
    const p1 = await list(team, id, { limit: 2, ascending: true });
    expect([said(p1.items), p1.hasMore]).toEqual([['a', 'b'], true]);
    const p2 = await list(team, id, { limit: 2, ascending: true, afterId: p1.items[1]!.id });
    expect([p2.items.map((i) => i.type), p2.hasMore]).toEqual([
      [ConversationItemType.FUNCTION_CALL, ConversationItemType.FUNCTION_CALL_OUTPUT],
      true,
    ]);
    const p3 = await list(team, id, { limit: 2, ascending: true, afterId: p2.items[1]!.id });
    expect([said(p3.items), p3.hasMore]).toEqual([['c'], false]);
    // Newest first, and the default page (limit 0 → 20) holds all five.
    const n1 = await list(team, id, { limit: 3 });
    expect([said(n1.items), n1.hasMore]).toEqual([['c', 'call_1', 'call_1'], true]);
    const n2 = await list(team, id, { limit: 3, afterId: n1.items[2]!.id });
    expect([said(n2.items), n2.hasMore]).toEqual([['b', 'a'], false]);
    expect(said((await list(team, id)).items)).toEqual(['c', 'call_1', 'call_1', 'b', 'a']);

    const item = { caller: caller(team), conversationId: id, itemId: added.items[0]!.id };
    expect((await client.getConversationItem(item)).item).toEqual(added.items[0]);
    expect((await client.deleteConversationItem(item)).conversation).toEqual(updated.conversation);
    expect(await all(team, id)).toEqual(['a', 'b', 'call_1', 'c']);
    for (const call of [client.getConversationItem(item), client.deleteConversationItem(item)])
      expect(await rpcError(call)).toMatchObject({
        kind: 'NotFound',
        reason: 'CONVERSATION_ITEM_NOT_FOUND',
        message: `Item '${item.itemId}' was not found in conversation '${id}'.`,
      });
    // An item of another conversation is not in this one.
    const other = await client.createConversation({ caller: caller(team), items: [message('elsewhere')] });
    expect(await rpcError(client.getConversationItem({ ...item, itemId: other.items[0]!.id }))).toMatchObject({
      reason: 'CONVERSATION_ITEM_NOT_FOUND',
    });
  });

  it('when another team names a conversation or its items, then every call is NotFound and nothing changes', async () => {
    const team = randomUUID();
    const stranger = caller(randomUUID());
    const made = await client.createConversation({
      caller: caller(team),
      metadata: { k: 'v' },
      items: [message('mine')],
    });
    const conversationId = made.conversation!.id;
    const itemId = made.items[0]!.id;
    const calls = [
      client.getConversation({ caller: stranger, conversationId }),
      client.updateConversation({ caller: stranger, conversationId, metadata: { k: 'theirs' } }),
      client.addConversationItems({ caller: stranger, conversationId, items: [message('planted')] }),
      client.listConversationItems({ caller: stranger, conversationId }),
      client.getConversationItem({ caller: stranger, conversationId, itemId }),
      client.deleteConversationItem({ caller: stranger, conversationId, itemId }),
      client.deleteConversation({ caller: stranger, conversationId }),
    ];
    for (const call of calls)
      expect(await rpcError(call)).toMatchObject({
        kind: 'NotFound',
        reason: 'CONVERSATION_NOT_FOUND',
        message: `Conversation '${conversationId}' was not found.`,
      });
    for (const bad of ['not-a-uuid', randomUUID()])
      expect(await rpcError(client.getConversation({ caller: caller(team), conversationId: bad }))).toMatchObject({
        reason: 'CONVERSATION_NOT_FOUND',
        message: `Conversation '${bad}' was not found.`,
      });
    expect((await client.getConversation({ caller: caller(team), conversationId })).conversation?.metadata).toEqual({
      k: 'v',
    });
    expect(await all(team, conversationId)).toEqual(['mine']);
  });

  it('when items, metadata or paging are wrong, then InvalidArgument names the field and nothing is stored', async () => {
    const team = randomUUID();
    const conversationId = (await client.createConversation({ caller: caller(team) })).conversation!.id;
    const invalid = async (call: Promise<unknown>) => {
      const err = await rpcError(call);
      expect(err).toMatchObject({ kind: 'InvalidArgument', reason: 'VALIDATION_FAILED' });
      return err.fieldErrors.map((f) => f.field);
    };
    const add = (items: object[]) => client.addConversationItems({ caller: caller(team), conversationId, items });

    expect(await invalid(add([message('ok'), message('ok'), message('x', 'robot')]))).toEqual(['items[2].role']);
    expect(await invalid(add([{ ...message('x'), texts: [] }]))).toEqual(['items[0].texts']);
    expect(await invalid(add([{ ...functionCall(''), name: '' }]))).toEqual(['items[0].call_id', 'items[0].name']);
    expect(await invalid(add([functionOutput('c'.repeat(201))]))).toEqual(['items[0].call_id']);
    expect(await invalid(add([{ ...message('x'), type: ConversationItemType.UNSPECIFIED }]))).toEqual([
      'items[0].type',
    ]);
    expect(await invalid(add([]))).toEqual(['items']);
    expect(await invalid(add(Array.from({ length: 1_001 }, () => message('x'))))).toEqual(['items']);
    const create = (fields: object) => client.createConversation({ caller: caller(team), ...fields });
    expect(await invalid(create({ items: Array.from({ length: 21 }, () => message('x')) }))).toEqual(['items']);
    expect(await invalid(create({ metadata: { ['k'.repeat(65)]: 'v' } }))).toEqual(['metadata']);
    expect(await invalid(create({ metadata: { topic: 'v'.repeat(513) } }))).toEqual(['metadata.topic']);
    const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    expect(
      await invalid(client.updateConversation({ caller: caller(team), conversationId, metadata: seventeen })),
    ).toEqual(['metadata']);
    expect(await invalid(list(team, conversationId, { limit: 10_001 }))).toEqual(['limit']);
    expect(await invalid(list(team, conversationId, { limit: -1 }))).toEqual(['limit']);
    const elsewhere = await create({ items: [message('elsewhere')] });
    expect(await invalid(list(team, conversationId, { afterId: elsewhere.items[0]!.id }))).toEqual(['after']);
    expect(await invalid(list(team, conversationId, { afterId: 'nope' }))).toEqual(['after']);
    expect(await invalid(client.getConversation({ conversationId }))).toEqual(['caller.team_id']);

    expect(await all(team, conversationId)).toEqual([]);
    expect((await client.getConversation({ caller: caller(team), conversationId })).conversation?.metadata).toEqual({});
    // Validation messages name fields, never the text they were given.
    const err = await rpcError(add([{ ...message('x', 'robot') }]));
    expect(JSON.stringify(err.toJSON())).not.toContain(MARKER);
  });

  it('when ten calls append three items each at once, then positions are 0–29 and each call’s items are contiguous', async () => {
    const team = randomUUID();
    const conversationId = (await client.createConversation({ caller: caller(team) })).conversation!.id;
    const calls = await Promise.all(
      Array.from({ length: 10 }, (_, c) =>
        client.addConversationItems({
          caller: caller(team),
          conversationId,
          items: [0, 1, 2].map((k) => message(`${c}:${k}`)),
        }),
      ),
    );
    const rows = await db.prisma.conversationItem.findMany({ where: { conversationId }, orderBy: { position: 'asc' } });
    expect(rows.map((r) => r.position)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    const ids = rows.map((r) => r.id);
    for (const call of calls) {
      const start = ids.indexOf(call.items[0]!.id);
      expect(start % 3).toBe(0);
      expect(ids.slice(start, start + 3)).toEqual(call.items.map((i) => i.id));
    }
    const stored = await all(team, conversationId);
    for (let block = 0; block < 30; block += 3) {
      const c = stored[block]!.split(':')[0];
      expect(stored.slice(block, block + 3)).toEqual([`${c}:0`, `${c}:1`, `${c}:2`]);
    }
  });

  it('when an append is repeated under its idempotency key, even at once, then its items are stored once and each call answers them', async () => {
    const team = randomUUID();
    const conversationId = (await client.createConversation({ caller: caller(team) })).conversation!.id;
    const key = randomUUID();
    const add = (texts: string[], idempotencyKey: string = key, who = team) =>
      client.addConversationItems({
        caller: caller(who),
        conversationId,
        items: texts.map((t) => message(t)),
        idempotencyKey,
      });
    const first = await add(['asked', 'answered']);
    const again = await add(['asked', 'answered']);
    expect(again.items).toEqual(first.items);
    expect(await all(team, conversationId)).toEqual(['asked', 'answered']);

    // Two repeats at once: one stores, the other meets its ids and answers the same items.
    const racing = randomUUID();
    const [a, b] = await Promise.all([add(['x', 'y'], racing), add(['x', 'y'], racing)]);
    expect(a.items.map((i) => i.id)).toEqual(b.items.map((i) => i.id));
    expect(await all(team, conversationId)).toEqual(['asked', 'answered', 'x', 'y']);
    // Without a key every call appends.
    await client.addConversationItems({ caller: caller(team), conversationId, items: [message('x')] });
    await client.addConversationItems({ caller: caller(team), conversationId, items: [message('x')] });
    expect((await all(team, conversationId)).slice(4)).toEqual(['x', 'x']);

    expect(await rpcError(add(['z'], 'not-a-uuid'))).toMatchObject({
      kind: 'InvalidArgument',
      fieldErrors: [{ field: 'idempotency_key' }],
    });
    expect(await rpcError(add(['asked', 'answered'], key, randomUUID()))).toMatchObject({ kind: 'NotFound' });
  });

  it('when a conversation is deleted, then it and its items are gone and every call on it is NotFound', async () => {
    const team = randomUUID();
    const made = await client.createConversation({ caller: caller(team), items: [message('a'), message('b')] });
    const conversationId = made.conversation!.id;
    const kept = await client.createConversation({ caller: caller(team), items: [message('kept')] });
    expect(await client.deleteConversation({ caller: caller(team), conversationId })).toMatchObject({ conversationId });
    expect(await db.prisma.conversationItem.count({ where: { conversationId } })).toBe(0);
    for (const call of [
      client.getConversation({ caller: caller(team), conversationId }),
      client.deleteConversation({ caller: caller(team), conversationId }),
      client.addConversationItems({ caller: caller(team), conversationId, items: [message('late')] }),
      client.listConversationItems({ caller: caller(team), conversationId }),
      client.getConversationItem({ caller: caller(team), conversationId, itemId: made.items[0]!.id }),
    ])
      expect(await rpcError(call)).toMatchObject({ kind: 'NotFound', reason: 'CONVERSATION_NOT_FOUND' });
    expect(await all(team, kept.conversation!.id)).toEqual(['kept']);
  });

  it('when all of the above has run, then no log line carries item text', () => {
    // Every test put MARKER in every item, including the ones refused and the failed calls.
    expect(logger.lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(logger.lines)).not.toContain(MARKER);
  });
});
