import { randomUUID } from 'node:crypto';
import type { DatasetStore, GenerationRow, VersionRow } from '../../src/application/ports';

/** The DatasetStore port in memory, for use-case tests: same claims and transitions, no events. */
export function createInMemoryDatasetStore(): DatasetStore & { versions: Map<string, VersionRow> } {
  const versions = new Map<string, VersionRow>();
  const datasets = new Map<string, { id: string; createdAt: Date }>();
  const leases = new Map<string, { owner: string; until: number }>();
  const ofDataset = (teamId: string, name: string) =>
    [...versions.values()]
      .filter((v) => v.teamId === teamId && v.datasetName === name)
      .sort((a, b) => b.versionNumber - a.versionNumber);
  const leaseFree = (id: string, owner?: string) => {
    const lease = leases.get(id);
    return !lease || lease.until < Date.now() || lease.owner === owner;
  };
  const store: DatasetStore & { versions: Map<string, VersionRow> } = {
    versions,
    async createVersion(input) {
      const key = `${input.teamId}/${input.name}`;
      if (!datasets.has(key)) datasets.set(key, { id: randomUUID(), createdAt: new Date() });
      const datasetId = datasets.get(key)!.id;
      const versionNumber = (ofDataset(input.teamId, input.name)[0]?.versionNumber ?? 0) + 1;
      const row = newVersion(input, datasetId, versionNumber);
      versions.set(row.id, row);
      return { ...row };
    },
    async listDatasets(teamId) {
      return [...datasets.entries()]
        .filter(([key]) => key.startsWith(`${teamId}/`))
        .map(([key, d]) => ({
          datasetName: key.slice(teamId.length + 1),
          createdAt: d.createdAt,
          newest: ofDataset(teamId, key.slice(teamId.length + 1))[0]!,
          latestReadyVersion:
            ofDataset(teamId, key.slice(teamId.length + 1)).find((v) => v.status === 'ready')?.versionNumber ?? null,
        }));
    },
    listVersions: async (teamId, name) => ofDataset(teamId, name).map((v) => ({ ...v })),
    getVersion: async (teamId, name, n) => ofDataset(teamId, name).find((v) => v.versionNumber === n) ?? null,
    getVersionById: async (id) => (versions.has(id) ? { ...versions.get(id)! } : null),
    async transition(id, from, to, patch = {}) {
      const v = versions.get(id);
      if (!v || !from.includes(v.status)) return false;
      Object.assign(v, { status: to, updatedAt: new Date() }, patch);
      if (to === 'ready' || to === 'failed') leases.delete(id);
      return true;
    },
    async claim(id, owner, leaseMs) {
      const v = versions.get(id);
      if (!v || !['converting', 'validating'].includes(v.status) || !leaseFree(id, owner)) return false;
      leases.set(id, { owner, until: Date.now() + leaseMs });
      return true;
    },
    async renew(id, owner, leaseMs) {
      if (leases.get(id)?.owner === owner) leases.set(id, { owner, until: Date.now() + leaseMs });
    },
    async abandoned() {
      const rows = [...versions.values()].filter(
        (v) => ['converting', 'validating'].includes(v.status) && leaseFree(v.id),
      );
      for (const v of rows) if (v.status === 'validating') await store.transition(v.id, ['validating'], 'converting');
      return rows.map((v) => ({ ...v }));
    },
    async deleteDataset(teamId, name) {
      const d = datasets.get(`${teamId}/${name}`);
      if (!d) return null;
      datasets.delete(`${teamId}/${name}`);
      for (const v of ofDataset(teamId, name)) versions.delete(v.id);
      return { datasetId: d.id };
    },
    ...generationJobs(),
  };
  return store;
}

type GenerationJobs = Pick<
  DatasetStore,
  'createGeneration' | 'getGeneration' | 'updateGeneration' | 'unfinishedGenerations'
>;

function generationJobs(): GenerationJobs {
  const jobs = new Map<string, GenerationRow>();
  return {
    async createGeneration(row) {
      jobs.set(row.id, { ...row });
    },
    getGeneration: async (teamId, id) => (jobs.get(id)?.teamId === teamId ? { ...jobs.get(id)! } : null),
    async updateGeneration(id, patch) {
      Object.assign(jobs.get(id)!, patch);
    },
    unfinishedGenerations: async () => [...jobs.values()].filter((j) => ['queued', 'running'].includes(j.status)),
  };
}

function newVersion(
  input: Parameters<DatasetStore['createVersion']>[0],
  datasetId: string,
  versionNumber: number,
): VersionRow {
  return {
    id: randomUUID(),
    datasetId,
    teamId: input.teamId,
    datasetName: input.name,
    versionNumber,
    type: input.type,
    format: input.format,
    filename: input.filename,
    status: 'uploading',
    size: 0,
    uploadKey: input.keyFor(datasetId, versionNumber),
    report: null,
    notes: input.notes ?? [],
    corrections: input.corrections ?? 0,
    failureReason: null,
    createdAt: new Date(),
    updatedAt: new Date(),
  };
}
