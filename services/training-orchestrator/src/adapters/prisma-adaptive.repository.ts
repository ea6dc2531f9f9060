import type { Actor, Adaptation, AdaptationStatus, AdaptiveSettings } from '../domain/adaptation';
import { IN_PROGRESS, defaultSettings } from '../domain/adaptation';
import type {
  AdaptationPatch,
  AdaptationRepository,
  AdaptiveSettingsRepository,
  StoredAdaptiveSettings,
} from '../application/ports';
import { Prisma, type PrismaClient } from '../generated/prisma/client';

type SettingsRow = Prisma.AdaptiveSettingsGetPayload<object>;
type AdaptationRow = Prisma.AdaptationGetPayload<object>;

const toSettings = (r: SettingsRow): AdaptiveSettings => ({
  projectId: r.projectId,
  enabled: r.enabled,
  minCorrections: r.minCorrections,
  heldoutDataset: r.heldoutDataset,
  metric: r.metric as AdaptiveSettings['metric'],
  minGain: r.minGain,
  f1Tolerance: r.f1Tolerance,
  feedbackWeight: r.feedbackWeight,
  minLabelSupport: r.minLabelSupport,
  nrEpochs: r.nrEpochs,
  updatedAt: r.updatedAt,
});

/** Settings as stored in an adaptation's JSON (dates as strings); missing fields take the defaults. */
function settingsFromJson(projectId: string, json: unknown): AdaptiveSettings {
  const s = { ...defaultSettings(projectId), ...(json as Partial<AdaptiveSettings>) };
  return { ...s, projectId, updatedAt: s.updatedAt ? new Date(s.updatedAt) : null };
}

const json = (v: Record<string, unknown> | null) => (v === null ? Prisma.DbNull : (v as Prisma.InputJsonValue));

const toAdaptation = (r: AdaptationRow): Adaptation => ({
  id: r.id,
  teamId: r.teamId,
  userId: r.userId,
  keyId: r.keyId,
  projectId: r.projectId,
  status: r.status as AdaptationStatus,
  trigger: r.trigger as Adaptation['trigger'],
  feedbackDataset: r.feedbackDataset,
  feedbackVersion: r.feedbackVersion,
  feedbackRows: r.feedbackRows,
  corrections: r.corrections,
  settings: settingsFromJson(r.projectId, r.settings),
  heldoutDataset: r.heldoutDataset,
  baselineJobId: r.baselineJobId,
  candidateJobId: r.candidateJobId,
  baselineEvaluationId: r.baselineEvaluationId,
  candidateEvaluationId: r.candidateEvaluationId,
  controlJobId: r.controlJobId,
  controlEvaluationId: r.controlEvaluationId,
  controlMetrics: (r.controlMetrics as Record<string, unknown> | null) ?? null,
  baselineMetrics: (r.baselineMetrics as Record<string, unknown> | null) ?? null,
  candidateMetrics: (r.candidateMetrics as Record<string, unknown> | null) ?? null,
  decisionReason: r.decisionReason,
  gain: r.gain,
  createdAt: r.createdAt,
  decidedAt: r.decidedAt,
});

/** Adaptive settings in Postgres, one row per project. */
export class PrismaAdaptiveSettingsRepository implements AdaptiveSettingsRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async get(projectId: string): Promise<StoredAdaptiveSettings | null> {
    const r = await this.prisma.adaptiveSettings.findUnique({ where: { projectId } });
    return r ? { settings: toSettings(r), actor: { teamId: r.teamId, userId: r.userId, keyId: r.keyId } } : null;
  }

  async put(actor: Actor, s: AdaptiveSettings): Promise<AdaptiveSettings> {
    const data = {
      teamId: actor.teamId,
      userId: actor.userId,
      keyId: actor.keyId,
      enabled: s.enabled,
      minCorrections: s.minCorrections,
      heldoutDataset: s.heldoutDataset,
      metric: s.metric,
      minGain: s.minGain,
      f1Tolerance: s.f1Tolerance,
      feedbackWeight: s.feedbackWeight,
      minLabelSupport: s.minLabelSupport,
      nrEpochs: s.nrEpochs,
      updatedAt: new Date(),
    };
    const r = await this.prisma.adaptiveSettings.upsert({
      where: { projectId: s.projectId },
      create: { projectId: s.projectId, ...data },
      update: data,
    });
    return toSettings(r);
  }
}

/** Adaptations in Postgres; a partial unique index keeps one in progress per project. */
export class PrismaAdaptationRepository implements AdaptationRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async create(a: Adaptation): Promise<boolean> {
    try {
      await this.prisma.adaptation.create({
        data: {
          id: a.id,
          teamId: a.teamId,
          projectId: a.projectId,
          userId: a.userId,
          keyId: a.keyId,
          status: a.status,
          trigger: a.trigger,
          feedbackDataset: a.feedbackDataset,
          feedbackVersion: a.feedbackVersion,
          feedbackRows: a.feedbackRows,
          corrections: a.corrections,
          settings: a.settings as unknown as Prisma.InputJsonValue,
          heldoutDataset: a.heldoutDataset,
          baselineJobId: a.baselineJobId,
          candidateJobId: a.candidateJobId,
          baselineEvaluationId: a.baselineEvaluationId,
          candidateEvaluationId: a.candidateEvaluationId,
          controlJobId: a.controlJobId,
          controlEvaluationId: a.controlEvaluationId,
          createdAt: a.createdAt,
        },
      });
      return true;
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') return false;
      throw err;
    }
  }

  async get(teamId: string, id: string): Promise<Adaptation | null> {
    const r = await this.prisma.adaptation.findFirst({ where: { id, teamId } });
    return r ? toAdaptation(r) : null;
  }

  async list(teamId: string, projectId: string, limit: number): Promise<Adaptation[]> {
    const rows = await this.prisma.adaptation.findMany({
      where: { teamId, projectId },
      orderBy: { createdAt: 'desc' },
      take: limit,
    });
    return rows.map(toAdaptation);
  }

  async inProgress(): Promise<Adaptation[]> {
    const rows = await this.prisma.adaptation.findMany({
      where: { status: { in: IN_PROGRESS } },
      orderBy: { createdAt: 'asc' },
      take: 500,
    });
    return rows.map(toAdaptation);
  }

  async latestTrained(projectId: string): Promise<Adaptation | null> {
    const r = await this.prisma.adaptation.findFirst({
      where: { projectId, status: { not: 'failed' } },
      orderBy: { createdAt: 'desc' },
    });
    return r ? toAdaptation(r) : null;
  }

  async byCandidate(jobId: string): Promise<Adaptation | null> {
    const r = await this.prisma.adaptation.findFirst({ where: { candidateJobId: jobId } });
    return r ? toAdaptation(r) : null;
  }

  async transition(
    id: string,
    from: AdaptationStatus,
    to: AdaptationStatus,
    patch: AdaptationPatch = {},
  ): Promise<boolean> {
    const { count } = await this.prisma.adaptation.updateMany({
      where: { id, status: from },
      data: {
        status: to,
        ...(patch.baselineMetrics ? { baselineMetrics: json(patch.baselineMetrics) } : {}),
        ...(patch.candidateMetrics ? { candidateMetrics: json(patch.candidateMetrics) } : {}),
        ...(patch.controlMetrics ? { controlMetrics: json(patch.controlMetrics) } : {}),
        ...(patch.decisionReason !== undefined ? { decisionReason: patch.decisionReason } : {}),
        ...(patch.gain !== undefined ? { gain: patch.gain } : {}),
        ...(patch.decidedAt ? { decidedAt: patch.decidedAt } : {}),
      },
    });
    return count === 1;
  }
}
