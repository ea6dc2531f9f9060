/** In-memory fakes of the orchestrator's ports, for use-case tests. They honour the same contracts as Postgres. */
import type { BlobStore } from '@whetstone/blobs';
import { errors } from '@whetstone/errors';
import { createLogger } from '@whetstone/telemetry';
import type { UseCaseDeps } from '../../src/application/deps';
import type {
  JobFilter,
  CheckpointRepository,
  DatasetKind,
  DatasetResolver,
  EvaluationRepository,
  JobLogRepository,
  JobRepository,
  JobTransition,
  ModelHub,
  SpendCheck,
  TrainingUsage,
} from '../../src/application/ports';
import type { Evaluation } from '../../src/domain/evaluation';
import type { Checkpoint, DatasetSplit, Job, LogEntry, LogLine } from '../../src/domain/job';
import type { JobStatus } from '../../src/domain/job-status';

export interface StatusEvent {
  jobId: string;
  from: JobStatus | null;
  to: JobStatus;
}

export class InMemoryJobs implements JobRepository {
  readonly rows = new Map<string, Job>();
  readonly leaseUntil = new Map<string, Date>();
  readonly events: StatusEvent[] = [];
  readonly usage: TrainingUsage[] = [];

  async create(job: Job) {
    this.rows.set(job.id, { ...job });
    this.events.push({ jobId: job.id, from: null, to: job.status });
  }
  async get(teamId: string, id: string) {
    const j = this.rows.get(id);
    return j && j.teamId === teamId ? { ...j } : null;
  }
  async getById(id: string) {
    const j = this.rows.get(id);
    return j ? { ...j } : null;
  }
  async list(teamId: string, f: JobFilter) {
    const newestFirst = (a: Job, b: Job) =>
      b.createdAt.getTime() - a.createdAt.getTime() || (a.id === b.id ? 0 : b.id < a.id ? -1 : 1);
    const all = [...this.rows.values()]
      .filter((j) => j.teamId === teamId && (!f.status || j.status === f.status))
      .filter((j) => !f.projectId || j.projectId === f.projectId)
      .filter((j) => !f.fineTuningOnly || j.fineTuning !== null)
      .sort(newestFirst);
    const after = f.after;
    const rest = after ? all.filter((j) => newestFirst(j, { ...j, ...after }) > 0) : all.slice(f.offset);
    return { rows: rest.slice(0, f.limit), total: all.length };
  }
  async leaseNext(_owner: string, token: string, until: Date) {
    const next = [...this.rows.values()]
      .filter((j) => j.status === 'requested')
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())[0];
    if (!next) return null;
    Object.assign(next, { status: 'running', leaseToken: token, attempts: next.attempts + 1, startedAt: new Date() });
    this.leaseUntil.set(next.id, until);
    this.events.push({ jobId: next.id, from: 'requested', to: 'running' });
    return { ...next };
  }
  async renew(id: string, token: string, until: Date, progress?: Record<string, unknown>) {
    const j = this.rows.get(id);
    if (!j || j.status !== 'running' || j.leaseToken !== token) return false;
    this.leaseUntil.set(id, until);
    if (progress) j.progress = progress;
    return true;
  }
  async reclaim(id: string, token: string, until: Date) {
    const j = this.rows.get(id);
    if (!j || j.status !== 'requested' || j.leaseToken !== token) return false;
    j.status = 'running';
    this.leaseUntil.set(id, until);
    this.events.push({ jobId: id, from: 'requested', to: 'running' });
    return true;
  }
  async transition(id: string, change: JobTransition) {
    const j = this.rows.get(id);
    if (!j || !change.from.includes(j.status)) return null;
    if (change.token !== undefined && j.leaseToken !== change.token) return null;
    const { clearLease, expireLease, ...patch } = change.patch ?? {};
    this.events.push({ jobId: id, from: j.status, to: change.to });
    Object.assign(j, patch, { status: change.to }, clearLease ? { leaseToken: null } : {});
    if (clearLease || expireLease) this.leaseUntil.delete(id);
    if (change.usage) this.usage.push(change.usage);
    return { ...j };
  }
  async expired(now: Date) {
    return [...this.rows.values()]
      .filter((j) => j.status === 'running' && (this.leaseUntil.get(j.id)?.getTime() ?? Infinity) < now.getTime())
      .map((j) => ({ ...j }));
  }
  async delete(teamId: string, id: string) {
    const j = this.rows.get(id);
    if (!j || j.teamId !== teamId) return false;
    this.rows.delete(id);
    return true;
  }
}

export class InMemoryLogs implements JobLogRepository {
  readonly rows: LogEntry[] = [];
  async append(jobId: string, source: string, lines: LogLine[]) {
    for (const l of lines)
      this.rows.push({ id: String(this.rows.length + 1), jobId, timestamp: new Date(), source, ...l });
  }
  async list(jobId: string, afterId?: string) {
    return this.rows.filter((l) => l.jobId === jobId && (!afterId || Number(l.id) > Number(afterId)));
  }
  messages(jobId: string): string[] {
    return this.rows.filter((l) => l.jobId === jobId).map((l) => l.message);
  }
}

export class InMemoryCheckpoints implements CheckpointRepository {
  constructor(private readonly jobs: InMemoryJobs) {}
  readonly rows: Checkpoint[] = [];
  async put(c: Checkpoint) {
    const i = this.rows.findIndex((r) => r.jobId === c.jobId && r.checkpointId === c.checkpointId);
    if (i >= 0) this.rows[i] = c;
    else this.rows.push(c);
  }
  async listByJob(jobId: string) {
    return this.rows.filter((c) => c.jobId === jobId).sort((a, b) => b.step - a.step);
  }
  async findByUuid(teamId: string, uuid: string) {
    const c = this.rows.find((r) => r.id === uuid);
    const job = c ? await this.jobs.get(teamId, c.jobId) : null;
    return c && job ? { ...c, job } : null;
  }
}

export class InMemoryEvaluations implements EvaluationRepository {
  readonly rows = new Map<string, Evaluation & { leaseUntil?: Date }>();
  async create(e: Evaluation) {
    this.rows.set(e.id, { ...e });
  }
  async get(teamId: string, id: string) {
    const e = this.rows.get(id);
    return e && e.teamId === teamId ? { ...e } : null;
  }
  async getById(id: string) {
    const e = this.rows.get(id);
    return e ? { ...e } : null;
  }
  async leaseNext(_owner: string, token: string, until: Date) {
    const next = [...this.rows.values()].find((e) => e.status === 'running' && !e.leaseToken);
    if (!next) return null;
    Object.assign(next, { leaseToken: token, leaseUntil: until, attempts: next.attempts + 1 });
    return { ...next };
  }
  async renew(id: string, token: string, until: Date) {
    const e = this.rows.get(id);
    if (!e || e.status !== 'running' || e.leaseToken !== token) return false;
    e.leaseUntil = until;
    return true;
  }
  async finish(
    id: string,
    token: string,
    r: { status: 'complete'; metrics: Record<string, unknown> } | { status: 'failed'; error: string },
  ) {
    const e = this.rows.get(id);
    if (!e || e.status !== 'running' || e.leaseToken !== token) return false;
    Object.assign(e, r, { leaseToken: null });
    return true;
  }
  async release(id: string, token?: string) {
    const e = this.rows.get(id);
    if (!e || e.status !== 'running' || (token !== undefined && e.leaseToken !== token)) return false;
    e.leaseToken = null;
    return true;
  }
  async expired(now: Date) {
    return [...this.rows.values()].filter(
      (e) => e.status === 'running' && e.leaseToken && (e.leaseUntil?.getTime() ?? Infinity) < now.getTime(),
    );
  }
}

/** Datasets by name; anything else is NotFound. */
export function fakeDatasets(splits: (DatasetSplit & { type?: DatasetKind })[]): DatasetResolver {
  return {
    async resolve(_teamId, name) {
      const split = splits.find((s) => s.name === name);
      if (!split) throw errors.notFound('DATASET_NOT_FOUND', `Dataset '${name}' not found.`);
      return { type: 'extraction', ...split };
    },
  };
}

export class FakeBlobs {
  readonly objects = new Map<string, Uint8Array>();
  readonly deletedPrefixes: string[] = [];
  readonly store = {
    get: async (bucket: string, key: string) => {
      const bytes = this.objects.get(`${bucket}/${key}`);
      if (!bytes) throw errors.notFound('BLOB_NOT_FOUND', 'missing');
      const { Readable } = await import('node:stream');
      return Readable.from([Buffer.from(bytes)]);
    },
    deletePrefix: async (bucket: string, prefix: string) => {
      this.deletedPrefixes.push(`${bucket}/${prefix}`);
      return 0;
    },
    presignGet: async (bucket: string, key: string) => ({
      url: `https://blobs.example/${bucket}/${key}`,
      expiresAt: new Date(),
    }),
  } as unknown as BlobStore;
}

/** A clock tests move by hand. */
export class ManualClock {
  constructor(public time = new Date('2026-11-24T12:00:00Z')) {}
  now = () => new Date(this.time);
  advance(ms: number) {
    this.time = new Date(this.time.getTime() + ms);
  }
}

export const WIKIGOLD: DatasetSplit = {
  name: 'wikigold',
  version_number: 1,
  size: 100,
  bucket: 'datasets',
  train_key: 'teams/t/wikigold/1/train.jsonl',
  heldout_key: 'teams/t/wikigold/1/heldout.jsonl',
};

/** A generation (chat) dataset, what a decoder trains on. */
export const CHAT: DatasetSplit & { type: DatasetKind } = {
  name: 'chat',
  version_number: 1,
  size: 40,
  bucket: 'datasets',
  train_key: 'teams/t/chat/1/train.jsonl',
  heldout_key: 'teams/t/chat/1/heldout.jsonl',
  type: 'generation',
};

/** A classification dataset (intents). */
export const BANKING: DatasetSplit & { type: DatasetKind } = {
  name: 'banking',
  version_number: 1,
  size: 50,
  bucket: 'datasets',
  train_key: 'teams/t/banking/1/train.jsonl',
  heldout_key: 'teams/t/banking/1/heldout.jsonl',
  type: 'classification',
};

export const silentLogger = createLogger({ service: 'training-orchestrator-test', level: 'silent' });

/** Use-case deps on in-memory ports; returns the fakes for assertions. */
export function inMemoryDeps(overrides: { hub?: ModelHub; billing?: SpendCheck } = {}) {
  const jobs = new InMemoryJobs();
  const logs = new InMemoryLogs();
  const checkpoints = new InMemoryCheckpoints(jobs);
  const evaluations = new InMemoryEvaluations();
  const blobs = new FakeBlobs();
  const clock = new ManualClock();
  let wakeups = 0;
  const deps: UseCaseDeps = {
    jobs,
    logs,
    checkpoints,
    evaluations,
    datasets: fakeDatasets([WIKIGOLD, CHAT, BANKING]),
    billing: overrides.billing ?? { checkSpendable: async () => undefined },
    blobs: blobs.store,
    clock,
    work: {
      notify: () => void wakeups++,
      // Waiting moves the manual clock, so a LeaseWork deadline passes without real time.
      wait: async (ms) => clock.advance(ms),
    },
    logger: silentLogger,
    leaseMs: 30_000,
    hub: overrides.hub,
  };
  return { deps, jobs, logs, checkpoints, evaluations, blobs, clock, wakeups: () => wakeups };
}
