import type { FileRow, FileStore } from '../../src/application/ports';

/** The FileStore port in memory, for use-case tests: the same expiry and paging rules as the Prisma adapter. */
export function createInMemoryFileStore(): FileStore & { rows: Map<string, FileRow> } {
  const rows = new Map<string, FileRow>();
  const live = (f: FileRow, now: Date) => !f.expiresAt || f.expiresAt > now;
  const byTime = (a: FileRow, b: FileRow) =>
    a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  return {
    rows,
    async create(row, teamMaxBytes) {
      const usedBytes = [...rows.values()]
        .filter((f) => f.teamId === row.teamId && live(f, row.createdAt))
        .reduce((n, f) => n + f.bytes, 0);
      if (teamMaxBytes > 0 && usedBytes + row.bytes > teamMaxBytes) return { created: false, usedBytes };
      rows.set(row.id, { ...row });
      return { created: true };
    },
    async get(teamId, id, now) {
      const f = rows.get(id);
      return f && f.teamId === teamId && live(f, now) ? { ...f } : null;
    },
    async list(teamId, page, now) {
      const cursor = page.afterId ? rows.get(page.afterId) : undefined;
      if (page.afterId && cursor?.teamId !== teamId) return null;
      const sign = page.ascending ? 1 : -1;
      const ordered = [...rows.values()]
        .filter((f) => f.teamId === teamId && live(f, now) && (!page.purpose || f.purpose === page.purpose))
        .filter((f) => !cursor || sign * byTime(f, cursor) > 0)
        .sort((a, b) => sign * byTime(a, b));
      return { files: ordered.slice(0, page.limit).map((f) => ({ ...f })), hasMore: ordered.length > page.limit };
    },
    async delete(teamId, id, now) {
      const f = rows.get(id);
      if (!f || f.teamId !== teamId || !live(f, now)) return null;
      rows.delete(id);
      return f;
    },
    async expired(now, limit) {
      return [...rows.values()]
        .filter((f) => !live(f, now))
        .sort((a, b) => a.expiresAt!.getTime() - b.expiresAt!.getTime())
        .slice(0, limit);
    },
    async deleteExpired(ids, now) {
      const gone = ids.filter((id) => rows.has(id) && !live(rows.get(id)!, now));
      gone.forEach((id) => rows.delete(id));
      return gone.length;
    },
  };
}
