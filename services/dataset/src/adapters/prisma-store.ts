import { create } from '@bufbuild/protobuf';
import { randomUUID } from 'node:crypto';
import { encodeEvent, Topics } from '@whetstone/events';
import {
  DatasetDeletedSchema,
  DatasetVersionReadySchema,
  DatasetVersionStatusChangedSchema,
} from '@whetstone/proto/dataset/v1';
import type { DatasetStore, GenerationRow, VersionRow } from '../application/ports';
import type { DatasetFormat, DatasetType, VersionReport, VersionStatus } from '../domain/dataset';
import { Prisma, type PrismaClient } from '../generated/prisma/client';

export const DATASETS_TOPIC = Topics.datasets;

type Tx = Prisma.TransactionClient;
type VersionWithDataset = Prisma.DatasetVersionGetPayload<{ include: { dataset: true } }>;

const toRow = (v: VersionWithDataset): VersionRow => ({
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
  failureReason: v.failureReason,
  createdAt: v.createdAt,
  updatedAt: v.updatedAt,
});

async function emit(tx: Tx, row: ReturnType<typeof encodeEvent>): Promise<void> {
  await tx.outboxEvent.create({
    data: { topic: row.topic, key: row.key, type: row.type, payload: Buffer.from(row.payload), headers: row.headers },
  });
}

async function statusEvent(tx: Tx, v: VersionWithDataset, from: string, to: VersionStatus, reason = ''): Promise<void> {
  await emit(
    tx,
    encodeEvent(
      DATASETS_TOPIC,
      DatasetVersionStatusChangedSchema,
      create(DatasetVersionStatusChangedSchema, {
        versionId: v.id,
        teamId: v.dataset.teamId,
        datasetName: v.dataset.name,
        versionNumber: v.versionNumber,
        fromStatus: from,
        toStatus: to,
        reason,
      }),
      v.datasetId,
    ),
  );
}

const genRow = (g: Prisma.GenerationJobGetPayload<object>): GenerationRow => ({
  id: g.id,
  teamId: g.teamId,
  datasetName: g.datasetName,
  request: g.request as unknown as GenerationRow['request'],
  status: g.status as GenerationRow['status'],
  generated: g.generated,
  requested: g.requested,
  versionNumber: g.versionNumber,
  error: g.error,
});

/** Datasets, versions and generation jobs in the service's schema; status changes and their events commit together. */
export function prismaDatasetStore(prisma: PrismaClient): DatasetStore {
  return {
    async createVersion(input) {
      return prisma.$transaction(async (tx) => {
        await tx.dataset.upsert({
          where: { teamId_name: { teamId: input.teamId, name: input.name } },
          create: { id: randomUUID(), teamId: input.teamId, name: input.name },
          update: {},
        });
        // Lock the dataset row so concurrent uploads get distinct version numbers.
        const [dataset] = await tx.$queryRaw<
          { id: string }[]
        >`SELECT id FROM datasets WHERE team_id = ${input.teamId} AND name = ${input.name} FOR UPDATE`;
        const last = await tx.datasetVersion.aggregate({
          where: { datasetId: dataset!.id },
          _max: { versionNumber: true },
        });
        const versionNumber = (last._max.versionNumber ?? 0) + 1;
        const created = await tx.datasetVersion.create({
          data: {
            id: randomUUID(),
            datasetId: dataset!.id,
            versionNumber,
            type: input.type,
            format: input.format,
            filename: input.filename,
            status: 'uploading',
            uploadKey: input.keyFor(dataset!.id, versionNumber),
          },
          include: { dataset: true },
        });
        await statusEvent(tx, created, '', 'uploading');
        return toRow(created);
      });
    },
    async listDatasets(teamId) {
      const rows = await prisma.dataset.findMany({
        where: { teamId },
        orderBy: { createdAt: 'desc' },
        include: { versions: { orderBy: { versionNumber: 'desc' }, take: 1, include: { dataset: true } } },
      });
      return rows
        .filter((d) => d.versions[0])
        .map((d) => ({ datasetName: d.name, createdAt: d.createdAt, newest: toRow(d.versions[0]!) }));
    },
    async listVersions(teamId, name) {
      const rows = await prisma.datasetVersion.findMany({
        where: { dataset: { teamId, name } },
        orderBy: { versionNumber: 'desc' },
        include: { dataset: true },
      });
      return rows.map(toRow);
    },
    async getVersion(teamId, name, versionNumber) {
      const v = await prisma.datasetVersion.findFirst({
        where: { dataset: { teamId, name }, versionNumber },
        include: { dataset: true },
      });
      return v ? toRow(v) : null;
    },
    async getVersionById(id) {
      const v = await prisma.datasetVersion.findUnique({ where: { id }, include: { dataset: true } });
      return v ? toRow(v) : null;
    },
    async transition(id, from, to, patch = {}) {
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
        await statusEvent(tx, current, current.status, to, patch.failureReason ?? '');
        if (to === 'ready') {
          await emit(
            tx,
            encodeEvent(
              DATASETS_TOPIC,
              DatasetVersionReadySchema,
              create(DatasetVersionReadySchema, {
                versionId: id,
                teamId: current.dataset.teamId,
                datasetName: current.dataset.name,
                versionNumber: current.versionNumber,
                size: patch.size ?? 0,
              }),
              current.datasetId,
            ),
          );
        }
        return true;
      });
    },
    async claim(id, owner, leaseMs) {
      const until = new Date(Date.now() + leaseMs);
      const { count } = await prisma.datasetVersion.updateMany({
        where: {
          id,
          status: { in: ['converting', 'validating'] },
          OR: [{ leaseUntil: null }, { leaseUntil: { lt: new Date() } }, { leaseOwner: owner }],
        },
        data: { leaseOwner: owner, leaseUntil: until },
      });
      return count > 0;
    },
    async renew(id, owner, leaseMs) {
      await prisma.datasetVersion.updateMany({
        where: { id, leaseOwner: owner },
        data: { leaseUntil: new Date(Date.now() + leaseMs) },
      });
    },
    async abandoned() {
      const rows = await prisma.datasetVersion.findMany({
        where: {
          status: { in: ['converting', 'validating'] },
          OR: [{ leaseUntil: null }, { leaseUntil: { lt: new Date() } }],
        },
        include: { dataset: true },
      });
      // A crash mid-validation restarts from the file: back to converting first.
      for (const v of rows) if (v.status === 'validating') await this.transition(v.id, ['validating'], 'converting');
      return rows.map(toRow);
    },
    async deleteDataset(teamId, name) {
      return prisma.$transaction(async (tx) => {
        const dataset = await tx.dataset.findUnique({ where: { teamId_name: { teamId, name } } });
        if (!dataset) return null;
        await tx.dataset.delete({ where: { id: dataset.id } });
        await emit(
          tx,
          encodeEvent(
            DATASETS_TOPIC,
            DatasetDeletedSchema,
            create(DatasetDeletedSchema, { datasetId: dataset.id, teamId, datasetName: name }),
            dataset.id,
          ),
        );
        return { datasetId: dataset.id };
      });
    },
    async createGeneration(row) {
      await prisma.generationJob.create({
        data: {
          id: row.id,
          teamId: row.teamId,
          datasetName: row.datasetName,
          request: row.request as unknown as Prisma.InputJsonValue,
          status: row.status,
          generated: row.generated,
          requested: row.requested,
        },
      });
    },
    async getGeneration(teamId, id) {
      const g = await prisma.generationJob.findFirst({ where: { id, teamId } });
      return g ? genRow(g) : null;
    },
    async updateGeneration(id, patch) {
      await prisma.generationJob.update({ where: { id }, data: patch });
    },
    async unfinishedGenerations() {
      return (await prisma.generationJob.findMany({ where: { status: { in: ['queued', 'running'] } } })).map(genRow);
    },
  };
}
