import type { BatchCounts, BatchKind, BatchRequestState, BatchSource, ChatBatch } from '../domain/batch';
import { EMPTY_COUNTS } from '../domain/batch';
import type { BatchCall, ChatBatchStore, ClaimedBatchRequest } from '../application/ports';
import type { PrismaClient } from '../generated/prisma/client';

type BatchRow = NonNullable<Awaited<ReturnType<PrismaClient['chatBatch']['findFirst']>>>;

/**
 * The claim: due pending requests of live batches (neither cancelled nor expired), locked with SKIP LOCKED so that
 * replicas take different ones, each counted as an attempt and pushed a lease ahead in the same statement.
 */
const CLAIM_SQL = `UPDATE chat_batch_requests r
  SET attempts = r.attempts + 1, next_at = now() + ($2::int * interval '1 millisecond')
  FROM chat_batches b
  WHERE b.id = r.batch_id AND (r.batch_id, r.position) IN (
    SELECT q.batch_id, q.position FROM chat_batch_requests q JOIN chat_batches qb ON qb.id = q.batch_id
    WHERE q.state = 'pending' AND q.next_at <= now() AND qb.cancel_initiated_at IS NULL AND qb.expires_at > now()
    ORDER BY q.next_at, q.batch_id, q.position
    LIMIT $1
    FOR UPDATE OF q SKIP LOCKED)
  RETURNING r.batch_id, b.kind, r.position, r.custom_id, r.response_id, r.call, r.request, r.attempts, b.team_id,
    b.key_id, b.user_id`;

/** Pending requests no worker holds, of cancelled batches (canceled) and of expired ones (expired); $2 one batch. */
const SWEEP_SQL = `UPDATE chat_batch_requests r
  SET state = CASE WHEN b.cancel_initiated_at IS NOT NULL THEN 'canceled' ELSE 'expired' END, finished_at = $1
  FROM chat_batches b
  WHERE b.id = r.batch_id AND r.state = 'pending' AND r.next_at <= now()
    AND (b.cancel_initiated_at IS NOT NULL OR b.expires_at <= $1)
    AND ($2::uuid IS NULL OR r.batch_id = $2::uuid)`;

/** A held request's lease pushed ahead, only while the claim that holds it is the latest (same attempt count). */
const RENEW_SQL = `UPDATE chat_batch_requests SET next_at = now() + ($4::int * interval '1 millisecond')
  WHERE batch_id = $1::uuid AND position = $2 AND state = 'pending' AND attempts = $3`;

const COUNTS_SQL = `SELECT batch_id, state, count(*)::int AS n, max(finished_at) AS last
  FROM chat_batch_requests WHERE batch_id = ANY($1::uuid[]) GROUP BY batch_id, state`;

interface CountRow {
  batch_id: string;
  state: BatchRequestState;
  n: number;
  last: Date | null;
}

const COUNT_OF: Record<BatchRequestState, keyof BatchCounts> = {
  pending: 'processing',
  succeeded: 'succeeded',
  errored: 'errored',
  canceled: 'canceled',
  expired: 'expired',
};

/** The rows with their counts, read off their requests in one grouped query. */
async function withCounts(prisma: PrismaClient, rows: BatchRow[]): Promise<ChatBatch[]> {
  if (!rows.length) return [];
  const grouped = await prisma.$queryRawUnsafe<CountRow[]>(
    COUNTS_SQL,
    rows.map((r) => r.id),
  );
  return rows.map((row) => {
    const counts = { ...EMPTY_COUNTS };
    let last: Date | null = null;
    for (const g of grouped.filter((c) => c.batch_id === row.id)) {
      counts[COUNT_OF[g.state]] += Number(g.n);
      if (g.last && (!last || g.last > last)) last = g.last;
    }
    return {
      id: row.id,
      teamId: row.teamId,
      kind: row.kind as BatchKind,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
      cancelInitiatedAt: row.cancelInitiatedAt,
      endedAt: counts.processing === 0 ? (last ?? row.createdAt) : null,
      counts,
      source: (row.source as BatchSource | null) ?? null,
    };
  });
}

/** One batch of the team with its counts; null when it is not the team's. */
async function oneBatch(prisma: PrismaClient, teamId: string, id: string): Promise<ChatBatch | null> {
  const row = await prisma.chatBatch.findFirst({ where: { id, teamId } });
  return row ? ((await withCounts(prisma, [row]))[0] ?? null) : null;
}

const callOf = (call: string): BatchCall => (call === 'embed' ? 'embed' : 'chat');

/** The request a response id was minted for, with its batch. */
async function findCall(prisma: PrismaClient, teamId: string, responseId: string) {
  const row = await prisma.chatBatchRequest.findFirst({
    where: { responseId, batch: { teamId } },
    select: { batchId: true, customId: true, state: true, attempts: true, call: true, request: true, result: true },
  });
  const batch = row ? await oneBatch(prisma, teamId, row.batchId) : null;
  if (!row || !batch) return null;
  const result = {
    customId: row.customId,
    state: row.state as BatchRequestState,
    result: row.result ? new Uint8Array(row.result) : null,
  };
  return { batch, attempts: row.attempts, call: callOf(row.call), request: new Uint8Array(row.request), result };
}

/** A new batch's row: its caller and, for an OpenAI batch, its source. */
function batchRow(batch: Parameters<ChatBatchStore['create']>[0]) {
  const { id, kind, caller, createdAt, expiresAt, source } = batch;
  return {
    id,
    kind,
    teamId: caller.teamId,
    keyId: caller.keyId,
    userId: caller.userId,
    createdAt,
    expiresAt,
    ...(source ? { source: sourceJson(source) } : {}),
  };
}

/** An OpenAI batch's source as the row's JSON. */
function sourceJson({ errors, ...source }: BatchSource) {
  const plain = errors?.map(({ code, message, line, param }) => ({ code, message, line, param }));
  return { ...source, ...(plain ? { errors: plain } : {}) };
}

/** Requests inserted per statement when a batch is stored. */
const INSERT_CHUNK = 5_000;
/** How long storing one batch may take (a 50,000-request batch took about 6 s on a 2-core machine). */
const CREATE_TIMEOUT_MS = 120_000;

/** Batches and their requests in the router's schema. */
export function prismaBatchStore(prisma: PrismaClient): ChatBatchStore {
  return {
    ...batchReads(prisma),
    ...batchWork(prisma),
    findCall: (teamId, responseId) => findCall(prisma, teamId, responseId),
  };
}

/** What the ChatBatchService's calls read and change. */
function batchReads(
  prisma: PrismaClient,
): Omit<ChatBatchStore, 'sweep' | 'claim' | 'finish' | 'retryLater' | 'renewLease' | 'findCall'> {
  const one = (teamId: string, id: string) => oneBatch(prisma, teamId, id);

  return {
    async create(batch, requests) {
      const { id } = batch;
      const rows = requests.map((r, position) => ({
        batchId: id,
        position,
        customId: r.customId,
        responseId: r.responseId,
        call: r.call,
        request: Buffer.from(r.request),
      }));
      // A batch of 50,000 requests takes seconds to insert: longer than Prisma's default 5 s for a transaction.
      await prisma.$transaction(
        async (tx) => {
          await tx.chatBatch.create({ data: batchRow(batch) });
          for (let at = 0; at < rows.length; at += INSERT_CHUNK)
            await tx.chatBatchRequest.createMany({ data: rows.slice(at, at + INSERT_CHUNK) });
        },
        { maxWait: 10_000, timeout: CREATE_TIMEOUT_MS },
      );
    },
    get: one,
    async list(teamId, page) {
      const cursorId = page.afterId ?? page.beforeId;
      const cursor = cursorId
        ? await prisma.chatBatch.findFirst({ where: { id: cursorId, teamId, kind: page.kind } })
        : null;
      if (cursorId && !cursor) return null;
      const older = !page.beforeId;
      const beyond = cursor
        ? older
          ? {
              OR: [{ createdAt: { lt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { lt: cursor.id } }],
            }
          : {
              OR: [{ createdAt: { gt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { gt: cursor.id } }],
            }
        : {};
      const order = older ? 'desc' : 'asc';
      const rows = await prisma.chatBatch.findMany({
        where: { teamId, kind: page.kind, ...beyond },
        orderBy: [{ createdAt: order }, { id: order }],
        take: page.limit + 1,
      });
      const hasMore = rows.length > page.limit;
      const shown = rows.slice(0, page.limit);
      return { batches: await withCounts(prisma, older ? shown : shown.reverse()), hasMore };
    },
    async cancel(teamId, batchId, at) {
      const marked = await prisma.chatBatch.updateMany({
        where: { id: batchId, teamId, cancelInitiatedAt: null },
        data: { cancelInitiatedAt: at },
      });
      if (marked.count) await prisma.$executeRawUnsafe(SWEEP_SQL, at, batchId);
      return one(teamId, batchId);
    },
    async delete(teamId, batchId) {
      return (await prisma.chatBatch.deleteMany({ where: { id: batchId, teamId } })).count > 0;
    },
    async results(teamId, batchId, offset, limit) {
      const rows = await prisma.chatBatchRequest.findMany({
        where: { batchId, batch: { teamId }, position: { gte: offset }, state: { not: 'pending' } },
        orderBy: { position: 'asc' },
        take: limit,
        select: { customId: true, state: true, result: true },
      });
      return rows.map((r) => ({
        customId: r.customId,
        state: r.state as BatchRequestState,
        result: r.result ? new Uint8Array(r.result) : null,
      }));
    },
  };
}

/** What the batch worker reads and changes. */
function batchWork(
  prisma: PrismaClient,
): Pick<ChatBatchStore, 'sweep' | 'claim' | 'finish' | 'retryLater' | 'renewLease'> {
  return {
    sweep: (at) => prisma.$executeRawUnsafe(SWEEP_SQL, at, null),
    async claim(limit, leaseMs) {
      const rows = await prisma.$queryRawUnsafe<
        {
          batch_id: string;
          kind: string;
          position: number;
          custom_id: string;
          response_id: string;
          call: string;
          request: Uint8Array;
          attempts: number;
          team_id: string;
          key_id: string;
          user_id: string;
        }[]
      >(CLAIM_SQL, limit, leaseMs);
      return rows.map((r): ClaimedBatchRequest => ({
        batchId: r.batch_id,
        kind: r.kind as BatchKind,
        position: Number(r.position),
        customId: r.custom_id,
        responseId: r.response_id,
        call: callOf(r.call),
        request: new Uint8Array(r.request),
        attempts: Number(r.attempts),
        caller: { teamId: r.team_id, keyId: r.key_id, userId: r.user_id },
      }));
    },
    async finish(batchId, position, state, result, at) {
      const done = await prisma.chatBatchRequest.updateMany({
        where: { batchId, position, state: 'pending' },
        data: { state, result: Buffer.from(result), finishedAt: at },
      });
      return done.count > 0;
    },
    async renewLease(batchId, position, attempts, leaseMs) {
      const renewed = await prisma.$executeRawUnsafe(RENEW_SQL, batchId, position, attempts, leaseMs);
      return renewed > 0;
    },
    async retryLater(batchId, position, at) {
      await prisma.chatBatchRequest.updateMany({
        where: { batchId, position, state: 'pending' },
        data: { nextAt: at },
      });
    },
  };
}
