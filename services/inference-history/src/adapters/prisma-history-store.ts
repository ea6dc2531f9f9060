import { isUuid } from '@whetstone/errors';
import { TOTAL_CAP, type HistoryStore, type Page } from '../application/ports';
import type { JudgeKind, JudgeStatus } from '../domain/judge';
import type { Feedback, InferenceRecord, ListFilter, Status, Surface, Verdict } from '../domain/record';
import { Prisma, type PrismaClient } from '../generated/prisma/client';
import { deletedOutboxRow, feedbackOutboxRow } from './feedback-outbox';

type Row = Prisma.InferenceRecordGetPayload<object>;
type Json = Prisma.InputJsonValue;

const json = (v: unknown): Json => v as Json;

const COLUMNS = `id uuid, team_id uuid, key_id text, user_id text, project_id text, model_id text, training_job_id text,
  base_model text, task text, surface text, inputs jsonb, messages jsonb, schema jsonb, outputs jsonb, input_tokens bigint,
  output_tokens bigint, cache_read_tokens bigint, cache_write_tokens bigint, reasoning_tokens bigint,
  cost_micro_credits bigint, latency_ms double precision, status text, error_code text, created_at timestamptz,
  completed_at timestamptz, metadata jsonb, metadata_pairs text[], conversation_id uuid`;
const NAMES = COLUMNS.split(',')
  .map((c) => c.trim().split(' ')[0]!)
  .join(', ');

const R_NAMES = NAMES.split(', ')
  .map((n) => `r.${n}`)
  .join(', ');

/**
 * Idempotent by inference id: a redelivered record is skipped, never an error, and so is a deleted one. A record of a project that judges
 * its inferences is queued for the judge in the same statement when a hash of its id falls below the sample rate
 * (the same id always samples the same way), so nothing is lost between storing and judging.
 */
const INGEST_SQL = `INSERT INTO inference_records (${NAMES}, judge_status, judge_next_at)
  SELECT ${R_NAMES},
    CASE WHEN j.enabled AND ('x' || substr(md5(r.id::text), 1, 8))::bit(32)::bigint / 4294967296.0 < j.sample_rate
      THEN 'pending' END,
    CASE WHEN j.enabled AND ('x' || substr(md5(r.id::text), 1, 8))::bit(32)::bigint / 4294967296.0 < j.sample_rate
      THEN now() END
  FROM jsonb_to_recordset($1::jsonb) AS r(${COLUMNS})
  LEFT JOIN judge_settings j ON j.project_id = r.project_id AND j.team_id = r.team_id
  WHERE NOT EXISTS (SELECT 1 FROM deleted_inferences d WHERE d.id = r.id)
  ON CONFLICT (id) DO NOTHING`;

/**
 * Metadata as its indexed pairs: the team, then each `[key, value]` as JSON (so no key or value can run into
 * another). With the team inside, the GIN index answers one team's matches exactly.
 */
const metadataPairs = (teamId: string, metadata: Record<string, string>): string[] =>
  Object.entries(metadata).map((pair) => `${teamId} ${JSON.stringify(pair)}`);

/**
 * A metadata filter with at most this many matches in the team is answered from the GIN index (then sorted);
 * beyond it, matches are common enough for the page-order scan to find a page soon.
 */
const METADATA_CANDIDATES = 2_000;

/** The metadata filter as a where clause: the matching ids when they are few, else the containment itself. */
async function metadataWhere(
  prisma: PrismaClient,
  teamId: string,
  metadata: Record<string, string>,
): Promise<Prisma.InferenceRecordWhereInput> {
  const pairs = metadataPairs(teamId, metadata);
  // Containment alone, so the planner takes the GIN index; with the team's conditions it would rather walk the
  // page-order index and filter, which reads every row of the team when nothing matches.
  const ids = await prisma.$queryRaw<{ id: string }[]>`
    SELECT id FROM inference_records WHERE metadata_pairs @> ${pairs}::text[] LIMIT ${METADATA_CANDIDATES + 1}`;
  return ids.length <= METADATA_CANDIDATES
    ? { id: { in: ids.map((r) => r.id) } }
    : { metadataPairs: { hasEvery: pairs } };
}

/** A record as one JSON row of INGEST_SQL (snake_case columns; bigints as strings). */
function ingestRow(r: InferenceRecord): Record<string, unknown> {
  return {
    id: r.inferenceId,
    team_id: r.teamId,
    key_id: r.keyId,
    user_id: r.userId,
    project_id: r.projectId,
    model_id: r.modelId,
    training_job_id: r.trainingJobId,
    base_model: r.baseModel,
    task: r.task,
    surface: r.surface,
    inputs: r.inputs,
    messages: r.messages,
    schema: r.schema,
    outputs: r.outputs,
    input_tokens: String(r.usage.inputTokens),
    output_tokens: String(r.usage.outputTokens),
    cache_read_tokens: String(r.usage.cacheReadTokens),
    cache_write_tokens: String(r.usage.cacheWriteTokens),
    reasoning_tokens: String(r.usage.reasoningTokens),
    cost_micro_credits: r.usage.costMicroCredits.toString(),
    latency_ms: r.latencyMs,
    status: r.status,
    error_code: r.errorCode,
    created_at: r.createdAt.toISOString(),
    completed_at: r.completedAt.toISOString(),
    metadata: r.metadata,
    metadata_pairs: metadataPairs(r.teamId, r.metadata),
    conversation_id: r.conversationId ?? null,
  };
}

export function fromRow(row: Row): InferenceRecord {
  return {
    inferenceId: row.id,
    teamId: row.teamId,
    keyId: row.keyId,
    userId: row.userId,
    projectId: row.projectId,
    modelId: row.modelId,
    trainingJobId: row.trainingJobId,
    baseModel: row.baseModel,
    task: row.task,
    surface: row.surface as Surface,
    inputs: row.inputs as string[],
    messages: row.messages as unknown as InferenceRecord['messages'],
    schema: (row.schema as Record<string, unknown> | null) ?? null,
    outputs: row.outputs as Record<string, unknown>[],
    usage: {
      inputTokens: Number(row.inputTokens),
      outputTokens: Number(row.outputTokens),
      cacheReadTokens: Number(row.cacheReadTokens),
      cacheWriteTokens: Number(row.cacheWriteTokens),
      reasoningTokens: Number(row.reasoningTokens),
      costMicroCredits: row.costMicroCredits,
    },
    latencyMs: row.latencyMs,
    status: row.status as Status,
    errorCode: row.errorCode,
    createdAt: row.createdAt,
    completedAt: row.completedAt,
    llmajScore: row.llmajScore,
    feedback:
      row.humanVerdict && row.humanFeedbackAt
        ? {
            inferenceId: row.id,
            verdict: row.humanVerdict as Verdict,
            correctedOutput: row.correctedOutput ?? null,
            notes: row.notes ?? '',
            submittedAt: row.humanFeedbackAt,
          }
        : null,
    metadata: (row.metadata as Record<string, string> | null) ?? {},
    ...(row.conversationId ? { conversationId: row.conversationId } : {}),
    judge: {
      status: row.judgeStatus as JudgeStatus | null,
      rationale: row.judgeRationale,
      kind: row.judgeKind as JudgeKind | null,
      model: row.judgeModel,
      error: row.judgeError,
      judgedAt: row.judgedAt,
    },
  };
}

/** The filters as a Prisma where clause; each one is served by an index that starts with team_id. */
function whereOf(teamId: string, f: ListFilter): Prisma.InferenceRecordWhereInput {
  const range = (min: number | undefined, max: number | undefined) =>
    min === undefined && max === undefined
      ? undefined
      : { ...(min === undefined ? {} : { gte: min }), ...(max === undefined ? {} : { lte: max }) };
  const latency = range(f.latencyMin, f.latencyMax);
  const score = range(f.llmajScoreMin, f.llmajScoreMax);
  const created =
    f.since || f.until ? { ...(f.since ? { gte: f.since } : {}), ...(f.until ? { lt: f.until } : {}) } : null;
  return {
    teamId,
    ...(f.modelId ? { modelId: f.modelId } : {}),
    ...(f.task ? { task: f.task } : {}),
    ...(f.projectId ? { projectId: f.projectId } : {}),
    ...(f.trainingJobId ? { trainingJobId: f.trainingJobId } : {}),
    ...(latency ? { latencyMs: latency } : {}),
    ...(score ? { llmajScore: score } : {}),
    ...(created ? { createdAt: created } : {}),
    ...(f.surface ? { surface: f.surface } : {}),
  };
}

/** Records after `cursor` in the page's order: (created_at, id) beyond the cursor's, in that direction. */
function afterCursor(cursor: { createdAt: Date; id: string }, oldestFirst: boolean): Prisma.InferenceRecordWhereInput {
  const beyond = oldestFirst ? 'gt' : 'lt';
  return {
    OR: [{ createdAt: { [beyond]: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { [beyond]: cursor.id } }],
  };
}

/** Newest first; every filter's index ends with these two columns, so pages and the capped count need no sort. */
const PAGE_ORDER: Prisma.InferenceRecordOrderByWithRelationInput[] = [{ createdAt: 'desc' }, { id: 'desc' }];
/** The same index read backwards. */
const OLDEST_FIRST: Prisma.InferenceRecordOrderByWithRelationInput[] = [{ createdAt: 'asc' }, { id: 'asc' }];

/** One page in the filter's order: the page's ids from the filter's index, then those rows (a deferred join). */
async function listPage(prisma: PrismaClient, teamId: string, filter: ListFilter): Promise<Page | null> {
  const filtered = filter.metadata
    ? { AND: [whereOf(teamId, filter), await metadataWhere(prisma, teamId, filter.metadata)] }
    : whereOf(teamId, filter);
  const order = filter.oldestFirst ? OLDEST_FIRST : PAGE_ORDER;
  const cap = filter.countToPage ? filter.limit : TOTAL_CAP;
  let where = filtered;
  if (filter.afterId) {
    const cursor = isUuid(filter.afterId)
      ? await prisma.inferenceRecord.findFirst({
          where: { ...filtered, id: filter.afterId.toLowerCase() },
          select: { id: true, createdAt: true },
        })
      : null;
    if (!cursor) return null;
    where = { AND: [filtered, afterCursor(cursor, filter.oldestFirst ?? false)] };
  }
  // A deferred join: the page's ids come from the filter's index alone (it ends with created_at and id), so
  // only the 50 rows shown are read from the table, not every row the offset skips.
  const [ids, total] = await Promise.all([
    prisma.inferenceRecord.findMany({
      where,
      select: { id: true },
      orderBy: order,
      skip: filter.offset,
      take: filter.limit,
    }),
    // Ordered like the page: Prisma's capped count otherwise orders by id, which walks the primary key (or sorts
    // every match) instead of stopping after cap + 1 entries of the filter's index.
    prisma.inferenceRecord.count({ where, orderBy: order, take: cap + 1 }),
  ]);
  const rows = ids.length ? await prisma.inferenceRecord.findMany({ where: { id: { in: ids.map((r) => r.id) } } }) : [];
  const byId = new Map(rows.map((r) => [r.id, r]));
  const records = ids.flatMap(({ id }) => {
    const row = byId.get(id);
    return row ? [fromRow(row)] : [];
  });
  return { records, total: Math.min(total, cap), totalCapped: total > cap };
}

/** History's records in its own schema, through Prisma. */
export function prismaHistoryStore(prisma: PrismaClient): HistoryStore {
  return {
    async ingest(records) {
      // One statement and one parameter for the whole batch: Postgres unpacks the JSON rows itself, which is several
      // times faster than a parameter per column per row.
      return prisma.$executeRawUnsafe(INGEST_SQL, JSON.stringify(records.map(ingestRow)));
    },
    async get(inferenceId) {
      const row = await prisma.inferenceRecord.findUnique({ where: { id: inferenceId } });
      return row ? fromRow(row) : null;
    },
    list: (teamId, filter) => listPage(prisma, teamId, filter),
    async saveFeedback(record, feedback: Feedback) {
      const row = feedbackOutboxRow(record, feedback);
      return prisma.$transaction(async (tx) => {
        const { count } = await tx.inferenceRecord.updateMany({
          where: { id: record.inferenceId },
          data: {
            humanVerdict: feedback.verdict,
            correctedOutput: feedback.correctedOutput === null ? Prisma.DbNull : json(feedback.correctedOutput),
            notes: feedback.notes,
            humanFeedbackAt: feedback.submittedAt,
          },
        });
        // Deleted since it was read: no verdict, and no event for it.
        if (count === 0) return false;
        await tx.outboxEvent.create({ data: { ...row, payload: Buffer.from(row.payload) } });
        return true;
      });
    },
    async delete(record, deletedAt) {
      const row = deletedOutboxRow(record, deletedAt);
      await prisma.$transaction([
        prisma.deletedInference.upsert({
          where: { id: record.inferenceId },
          create: { id: record.inferenceId, teamId: record.teamId, deletedAt },
          update: {},
        }),
        prisma.inferenceRecord.deleteMany({ where: { id: record.inferenceId } }),
        prisma.outboxEvent.create({ data: { ...row, payload: Buffer.from(row.payload) } }),
      ]);
    },
    async updateMetadata(record, metadata) {
      const teamId = record.teamId;
      const rows = await prisma.inferenceRecord.updateManyAndReturn({
        where: { id: record.inferenceId },
        data: { metadata, metadataPairs: metadataPairs(teamId, metadata) },
      });
      return rows[0] ? fromRow(rows[0]) : null;
    },
    async wasDeleted(inferenceId) {
      return (await prisma.deletedInference.count({ where: { id: inferenceId } })) > 0;
    },
  };
}
