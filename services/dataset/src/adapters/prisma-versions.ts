/** Datasets and their versions in the service's schema; every status change commits with its events. */
import { randomUUID } from 'node:crypto';
import type { DatasetStore, VersionRow } from '../application/ports';
import type { DatasetFormat, DatasetType, ReportIssue, VersionReport } from '../domain/dataset';
import type { Prisma, PrismaClient } from '../generated/prisma/client';
import { emitDeleted, emitReady, emitStatusChanged } from './outbox-events';

type VersionWithDataset = Prisma.DatasetVersionGetPayload<{ include: { dataset: true } }>;
type VersionStore = Pick<
  DatasetStore,
  'createVersion' | 'listDatasets' | 'listVersions' | 'getVersion' | 'getVersionById' | 'transition' | 'deleteDataset'
>;

export const toVersionRow = (v: VersionWithDataset): VersionRow => ({
  id: v.id,
  datasetId: v.datasetId,
  teamId: v.dataset.teamId,
  datasetName: v.dataset.name,
  versionNumber: v.versionNumber,
  type: v.type as DatasetType,
  format: v.format as DatasetFormat,
  filename: v.filename,
  status: v.status,
  size: v.size,
  uploadKey: v.uploadKey,
  report: (v.report as unknown as VersionReport | null) ?? null,
  notes: (v.notes as unknown as ReportIssue[] | null) ?? [],
  corrections: v.corrections,
  failureReason: v.failureReason,
  createdAt: v.createdAt,
  updatedAt: v.updatedAt,
});

export function prismaVersionStore(prisma: PrismaClient): VersionStore {
  return {
    createVersion: (input) => createVersion(prisma, input),
    async listDatasets(teamId) {
      const rows = await prisma.dataset.findMany({
        where: { teamId },
        orderBy: { createdAt: 'desc' },
        include: { versions: { orderBy: { versionNumber: 'desc' }, take: 1, include: { dataset: true } } },
      });
      const ready = await prisma.datasetVersion.groupBy({
        by: ['datasetId'],
        where: { status: 'ready', dataset: { teamId } },
        _max: { versionNumber: true },
      });
      const readyOf = new Map(ready.map((r) => [r.datasetId, r._max.versionNumber]));
      return rows
        .filter((d) => d.versions[0])
        .map((d) => ({
          datasetName: d.name,
          createdAt: d.createdAt,
          newest: toVersionRow(d.versions[0]!),
          latestReadyVersion: readyOf.get(d.id) ?? null,
        }));
    },
    async listVersions(teamId, name) {
      const rows = await prisma.datasetVersion.findMany({
        where: { dataset: { teamId, name } },
        orderBy: { versionNumber: 'desc' },
        include: { dataset: true },
      });
      return rows.map(toVersionRow);
    },
    async getVersion(teamId, name, versionNumber) {
      const v = await prisma.datasetVersion.findFirst({
        where: { dataset: { teamId, name }, versionNumber },
        include: { dataset: true },
      });
      return v ? toVersionRow(v) : null;
    },
    async getVersionById(id) {
      const v = await prisma.datasetVersion.findUnique({ where: { id }, include: { dataset: true } });
      return v ? toVersionRow(v) : null;
    },
    transition: (id, from, to, patch) => transition(prisma, id, from, to, patch),
    async deleteDataset(teamId, name) {
      return prisma.$transaction(async (tx) => {
        const dataset = await tx.dataset.findUnique({ where: { teamId_name: { teamId, name } } });
        if (!dataset) return null;
        await tx.dataset.delete({ where: { id: dataset.id } });
        await emitDeleted(tx, dataset.id, teamId, name);
        return { datasetId: dataset.id };
      });
    },
  };
}

/**
 * The dataset row of a name, created on its first upload, locked so concurrent
 * uploads get distinct version numbers. Concurrent first uploads of one name
 * meet in the unique (team_id, name) index: ON CONFLICT makes the losers wait
 * for the winner and then use its row, where Prisma's upsert (a read, then an
 * insert) let them fail with P2002. A delete that commits in between leaves no
 * row to lock; the next round creates it again.
 */
async function lockDataset(tx: Prisma.TransactionClient, teamId: string, name: string): Promise<{ id: string }> {
  for (let round = 0; ; round++) {
    await tx.$executeRaw`INSERT INTO datasets (id, team_id, name) VALUES (${randomUUID()}::uuid, ${teamId}, ${name}) ON CONFLICT (team_id, name) DO NOTHING`;
    const [dataset] = await tx.$queryRaw<
      { id: string }[]
    >`SELECT id FROM datasets WHERE team_id = ${teamId} AND name = ${name} FOR UPDATE`;
    if (dataset) return dataset;
    if (round >= 2) throw new Error(`dataset '${name}' vanished three times while a version was being created`);
  }
}

function createVersion(prisma: PrismaClient, input: Parameters<DatasetStore['createVersion']>[0]): Promise<VersionRow> {
  return prisma.$transaction(async (tx) => {
    const dataset = await lockDataset(tx, input.teamId, input.name);
    const last = await tx.datasetVersion.aggregate({
      where: { datasetId: dataset.id },
      _max: { versionNumber: true },
    });
    const versionNumber = (last._max.versionNumber ?? 0) + 1;
    const created = await tx.datasetVersion.create({
      data: {
        id: randomUUID(),
        datasetId: dataset.id,
        versionNumber,
        type: input.type,
        format: input.format,
        filename: input.filename,
        status: 'uploading',
        uploadKey: input.keyFor(dataset.id, versionNumber),
        ...(input.notes?.length ? { notes: input.notes as unknown as Prisma.InputJsonValue } : {}),
        corrections: input.corrections ?? 0,
      },
      include: { dataset: true },
    });
    await emitStatusChanged(tx, created, '', 'uploading');
    return toVersionRow(created);
  });
}

/** Moves the version only if it is in one of `from`, guarded against a concurrent move by the status it read. */
function transition(
  prisma: PrismaClient,
  ...[id, from, to, patch = {}]: Parameters<DatasetStore['transition']>
): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    const current = await tx.datasetVersion.findUnique({ where: { id }, include: { dataset: true } });
    if (!current || !from.includes(current.status)) return false;
    const { count } = await tx.datasetVersion.updateMany({
      where: { id, status: current.status },
      data: {
        status: to,
        ...(patch.size !== undefined ? { size: patch.size } : {}),
        ...(patch.report ? { report: patch.report as unknown as Prisma.InputJsonValue } : {}),
        ...(patch.failureReason !== undefined ? { failureReason: patch.failureReason } : {}),
        ...(to === 'ready' || to === 'failed' ? { leaseOwner: null, leaseUntil: null } : {}),
      },
    });
    if (!count) return false;
    await emitStatusChanged(tx, current, current.status, to, patch.failureReason ?? '');
    if (to === 'ready') await emitReady(tx, current, patch.size ?? 0);
    return true;
  });
}
