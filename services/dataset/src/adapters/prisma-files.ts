/** Files API records in the service's schema (table `files`); the bytes are in the blob store. */
import type { FileRow, FileStore } from '../application/ports';
import type { FilePurpose } from '../domain/file';
import type { Prisma, PrismaClient } from '../generated/prisma/client';

const toFileRow = (f: Prisma.StoredFileGetPayload<object>): FileRow => ({
  id: f.id,
  teamId: f.teamId,
  filename: f.filename,
  purpose: f.purpose as FilePurpose,
  bytes: Number(f.bytes),
  blobKey: f.blobKey,
  createdAt: f.createdAt,
  expiresAt: f.expiresAt,
});

/** Unexpired at `now`: kept until deleted, or expiring later. */
const live = (now: Date): Prisma.StoredFileWhereInput => ({
  OR: [{ expiresAt: null }, { expiresAt: { gt: now } }],
});

export function prismaFileStore(prisma: PrismaClient): FileStore {
  return {
    create: (row, teamMaxBytes) =>
      prisma.$transaction(async (tx) => {
        // One team's uploads queue here, so two cannot both fit in the room left for one.
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`files:${row.teamId}`}))`;
        if (teamMaxBytes > 0) {
          const held = await tx.storedFile.aggregate({
            _sum: { bytes: true },
            where: { teamId: row.teamId, ...live(row.createdAt) },
          });
          const usedBytes = Number(held._sum.bytes ?? 0n);
          if (usedBytes + row.bytes > teamMaxBytes) return { created: false as const, usedBytes };
        }
        await tx.storedFile.create({ data: { ...row, bytes: BigInt(row.bytes) } });
        return { created: true as const };
      }),
    async get(teamId, id, now) {
      const f = await prisma.storedFile.findFirst({ where: { id, teamId, ...live(now) } });
      return f ? toFileRow(f) : null;
    },
    async list(teamId, page, now) {
      const cursor = page.afterId ? await prisma.storedFile.findFirst({ where: { id: page.afterId, teamId } }) : null;
      if (page.afterId && !cursor) return null;
      const op = page.ascending ? 'gt' : 'lt';
      const beyond: Prisma.StoredFileWhereInput = cursor
        ? { OR: [{ createdAt: { [op]: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { [op]: cursor.id } }] }
        : {};
      const order = page.ascending ? 'asc' : 'desc';
      const rows = await prisma.storedFile.findMany({
        where: { AND: [{ teamId, ...(page.purpose ? { purpose: page.purpose } : {}) }, live(now), beyond] },
        orderBy: [{ createdAt: order }, { id: order }],
        take: page.limit + 1,
      });
      return { files: rows.slice(0, page.limit).map(toFileRow), hasMore: rows.length > page.limit };
    },
    async delete(teamId, id, now) {
      const f = await prisma.storedFile.findFirst({ where: { id, teamId, ...live(now) } });
      if (!f) return null;
      // Of callers deleting the same file at once, only the one whose delete removed the row gets it back.
      const { count } = await prisma.storedFile.deleteMany({ where: { id, teamId } });
      return count ? toFileRow(f) : null;
    },
    async expired(now, limit) {
      const rows = await prisma.storedFile.findMany({
        where: { expiresAt: { lte: now } },
        orderBy: { expiresAt: 'asc' },
        take: limit,
      });
      return rows.map(toFileRow);
    },
    async deleteExpired(ids, now) {
      const { count } = await prisma.storedFile.deleteMany({ where: { id: { in: ids }, expiresAt: { lte: now } } });
      return count;
    },
  };
}
