/** The dataset events, written to the outbox inside the transaction of the change they describe. */
import { create } from '@bufbuild/protobuf';
import { encodeEvent, Topics } from '@whetstone/events';
import {
  DatasetDeletedSchema,
  DatasetVersionReadySchema,
  DatasetVersionStatusChangedSchema,
} from '@whetstone/proto/dataset/v1';
import type { VersionStatus } from '../domain/dataset';
import { versionStatusToPb } from '../transport/rpc/dataset.mapper';
import type { Prisma } from '../generated/prisma/client';

type Tx = Prisma.TransactionClient;
type VersionWithDataset = Prisma.DatasetVersionGetPayload<{ include: { dataset: true } }>;

async function emit(tx: Tx, row: ReturnType<typeof encodeEvent>): Promise<void> {
  await tx.outboxEvent.create({
    data: { topic: row.topic, key: row.key, type: row.type, payload: Buffer.from(row.payload), headers: row.headers },
  });
}

/** DatasetVersionStatusChanged; `from` is '' for a version just created. */
export async function emitStatusChanged(
  tx: Tx,
  v: VersionWithDataset,
  from: VersionStatus | '',
  to: VersionStatus,
  reason = '',
): Promise<void> {
  const event = create(DatasetVersionStatusChangedSchema, {
    versionId: v.id,
    teamId: v.dataset.teamId,
    datasetName: v.dataset.name,
    versionNumber: v.versionNumber,
    fromStatus: versionStatusToPb(from),
    toStatus: versionStatusToPb(to),
    reason,
  });
  await emit(tx, encodeEvent(Topics.datasets, DatasetVersionStatusChangedSchema, event, v.datasetId));
}

export async function emitReady(tx: Tx, v: VersionWithDataset, size: number): Promise<void> {
  const event = create(DatasetVersionReadySchema, {
    versionId: v.id,
    teamId: v.dataset.teamId,
    datasetName: v.dataset.name,
    versionNumber: v.versionNumber,
    size,
    corrections: v.corrections,
  });
  await emit(tx, encodeEvent(Topics.datasets, DatasetVersionReadySchema, event, v.datasetId));
}

export async function emitDeleted(tx: Tx, datasetId: string, teamId: string, datasetName: string): Promise<void> {
  const event = create(DatasetDeletedSchema, { datasetId, teamId, datasetName });
  await emit(tx, encodeEvent(Topics.datasets, DatasetDeletedSchema, event, datasetId));
}
