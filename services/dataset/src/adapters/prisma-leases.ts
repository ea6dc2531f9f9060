/** Processing claims on versions: one live process works on a version; a crashed one's claim expires. */
import type { DatasetStore } from '../application/ports';
import type { PrismaClient } from '../generated/prisma/client';
import { toVersionRow } from './prisma-versions';

const PROCESSING = ['converting', 'validating'] as const;

export function prismaLeaseStore(
  prisma: PrismaClient,
  transition: DatasetStore['transition'],
): Pick<DatasetStore, 'claim' | 'renew' | 'abandoned'> {
  return {
    async claim(id, owner, leaseMs) {
      const { count } = await prisma.datasetVersion.updateMany({
        where: {
          id,
          status: { in: [...PROCESSING] },
          OR: [{ leaseUntil: null }, { leaseUntil: { lt: new Date() } }, { leaseOwner: owner }],
        },
        data: { leaseOwner: owner, leaseUntil: new Date(Date.now() + leaseMs) },
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
        where: { status: { in: [...PROCESSING] }, OR: [{ leaseUntil: null }, { leaseUntil: { lt: new Date() } }] },
        include: { dataset: true },
      });
      // A crash mid-validation restarts from the file: back to converting first.
      for (const v of rows) if (v.status === 'validating') await transition(v.id, ['validating'], 'converting');
      return rows.map(toVersionRow);
    },
  };
}
