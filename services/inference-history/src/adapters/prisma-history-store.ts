import type { HistoryStore } from '../application/ports';
import type { Feedback, InferenceRecord, ListFilter, Status, Surface, Verdict } from '../domain/record';
import { Prisma, type PrismaClient } from '../generated/prisma/client';
import { feedbackOutboxRow } from './feedback-outbox';

type Row = Prisma.InferenceRecordGetPayload<object>;
type Json = Prisma.InputJsonValue;

const json = (v: unknown): Json => v as Json;

function toRow(r: InferenceRecord): Prisma.InferenceRecordCreateManyInput {
  return {
    id: r.inferenceId,
    teamId: r.teamId,
    keyId: r.keyId,
    userId: r.userId,
    projectId: r.projectId,
    modelId: r.modelId,
    trainingJobId: r.trainingJobId,
    baseModel: r.baseModel,
    task: r.task,
    surface: r.surface,
    inputs: json(r.inputs),
    messages: json(r.messages),
    ...(r.schema ? { schema: json(r.schema) } : {}),
    outputs: json(r.outputs),
    inputTokens: BigInt(r.usage.inputTokens),
    outputTokens: BigInt(r.usage.outputTokens),
    cacheReadTokens: BigInt(r.usage.cacheReadTokens),
    cacheWriteTokens: BigInt(r.usage.cacheWriteTokens),
    reasoningTokens: BigInt(r.usage.reasoningTokens),
    costMicroCredits: r.usage.costMicroCredits,
    latencyMs: r.latencyMs,
    status: r.status,
    errorCode: r.errorCode,
    createdAt: r.createdAt,
    completedAt: r.completedAt,
  };
}

function fromRow(row: Row): InferenceRecord {
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
    messages: row.messages as InferenceRecord['messages'],
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
  };
}

/** History's records in its own schema, through Prisma. */
export function prismaHistoryStore(prisma: PrismaClient): HistoryStore {
  return {
    async ingest(records) {
      const { count } = await prisma.inferenceRecord.createMany({ data: records.map(toRow), skipDuplicates: true });
      return count;
    },
    async get(inferenceId) {
      const row = await prisma.inferenceRecord.findUnique({ where: { id: inferenceId } });
      return row ? fromRow(row) : null;
    },
    async list(teamId, filter) {
      const where = whereOf(teamId, filter);
      const [rows, total] = await Promise.all([
        prisma.inferenceRecord.findMany({
          where,
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          skip: filter.offset,
          take: filter.limit,
        }),
        prisma.inferenceRecord.count({ where }),
      ]);
      return { records: rows.map(fromRow), total };
    },
    async saveFeedback(record, feedback: Feedback) {
      const row = feedbackOutboxRow(record, feedback);
      await prisma.$transaction([
        prisma.inferenceRecord.update({
          where: { id: record.inferenceId },
          data: {
            humanVerdict: feedback.verdict,
            correctedOutput: feedback.correctedOutput === null ? Prisma.DbNull : json(feedback.correctedOutput),
            notes: feedback.notes,
            humanFeedbackAt: feedback.submittedAt,
          },
        }),
        prisma.outboxEvent.create({ data: { ...row, payload: Buffer.from(row.payload) } }),
      ]);
    },
  };
}
