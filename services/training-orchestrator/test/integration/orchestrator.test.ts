import { fromBinary } from '@bufbuild/protobuf';
import { Topics } from '@whetstone/events';
import {
  CheckpointType,
  EvaluationStatus,
  JobStatus,
  JobStatusChangedSchema,
  TrainingUsageRecordedSchema,
} from '@whetstone/proto/training/v1';
import { startHarness, type Harness } from './harness';

const caller = { teamId: '7f1d5c2e-0000-4000-8000-000000000001', keyId: 'key-1', userId: 'user-1' };
const create = (h: Harness) =>
  h.training.createJob({ caller, baseModel: 'whetstone-extract-base', datasets: ['wikigold'], nrEpochs: 2 });
async function lease(h: Harness, waitMs = 0) {
  const res = await h.trainer.leaseWork({ trainerId: 'it', waitMs });
  if (res.work.case !== 'job') throw new Error(`expected a job, got ${res.work.case ?? 'nothing'}`);
  return res.work.value;
}
const outbox = (h: Harness, jobId?: string) =>
  h.db.prisma.outboxEvent.findMany({ where: jobId ? { key: jobId } : {}, orderBy: { id: 'asc' } });

describe('training-orchestrator over gRPC (real Postgres, service on port 0)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ leaseMs: 2_000 });
  });
  afterAll(() => h.close());
  beforeEach(async () => {
    await h.db.prisma.evaluation.deleteMany();
    await h.db.prisma.job.deleteMany();
    await h.db.prisma.outboxEvent.deleteMany();
  });

  it('when a job completes, then its status, cost, JobStatusChanged and TrainingUsageRecorded commit together', async () => {
    const { job } = await create(h);
    const leased = await lease(h);
    await h.trainer.completeJob({
      jobId: leased.jobId,
      leaseToken: leased.leaseToken,
      artifactKey: `${leased.artifactPrefix}model.bundle`,
      artifactSize: 10n,
      manifestKey: `${leased.artifactPrefix}manifest.json`,
      metrics: { f1: 0.5, precision: 0.5, recall: 0.5 },
      exampleEpochs: 200n,
    });
    const got = (await h.training.getJob({ caller, jobId: job!.id })).job!;
    expect(got).toMatchObject({ status: JobStatus.COMPLETE, costMicroCredits: 2_000n, artifactSize: 10n });

    const rows = await outbox(h);
    const changes = rows
      .filter((r) => r.type === JobStatusChangedSchema.typeName)
      .map((r) => fromBinary(JobStatusChangedSchema, r.payload));
    expect(changes.map((c) => [c.fromStatus, c.toStatus])).toEqual([
      [JobStatus.UNSPECIFIED, JobStatus.REQUESTED],
      [JobStatus.REQUESTED, JobStatus.RUNNING],
      [JobStatus.RUNNING, JobStatus.COMPLETE],
    ]);
    expect(changes[2]).toMatchObject({ artifactBucket: 'artifacts', rootBaseModel: 'whetstone-extract-base' });
    const usage = rows.filter((r) => r.type === TrainingUsageRecordedSchema.typeName);
    expect(usage).toHaveLength(1);
    expect(usage[0]!.topic).toBe(Topics.billingUsage);
    expect(fromBinary(TrainingUsageRecordedSchema, usage[0]!.payload)).toMatchObject({
      usageId: `training:${job!.id}`,
      teamId: caller.teamId,
      keyId: 'key-1',
      exampleEpochs: 200n,
      costMicroCredits: 2_000n,
    });
  });

  it('when the usage event cannot be written, then the completion rolls back too: the job stays running and unbilled', async () => {
    const { job } = await create(h);
    const leased = await lease(h);
    await h.db.prisma.$executeRawUnsafe(`
      CREATE FUNCTION refuse_usage() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'usage refused'; END $$ LANGUAGE plpgsql`);
    await h.db.prisma.$executeRawUnsafe(`
      CREATE TRIGGER refuse_usage BEFORE INSERT ON outbox_events FOR EACH ROW
      WHEN (NEW.type = '${TrainingUsageRecordedSchema.typeName}') EXECUTE FUNCTION refuse_usage()`);
    try {
      await expect(
        h.trainer.completeJob({
          jobId: leased.jobId,
          leaseToken: leased.leaseToken,
          artifactKey: `${leased.artifactPrefix}model.bundle`,
          exampleEpochs: 200n,
        }),
      ).rejects.toThrow();
    } finally {
      await h.db.prisma.$executeRawUnsafe('DROP TRIGGER refuse_usage ON outbox_events');
      await h.db.prisma.$executeRawUnsafe('DROP FUNCTION refuse_usage');
    }
    expect((await h.training.getJob({ caller, jobId: job!.id })).job).toMatchObject({
      status: JobStatus.RUNNING,
      costMicroCredits: 0n,
    });
    const types = (await outbox(h, job!.id)).map((r) => fromBinary(JobStatusChangedSchema, r.payload).toStatus);
    expect(types).toEqual([JobStatus.REQUESTED, JobStatus.RUNNING]);
  });

  it('when a running job reports progress with held-out figures, then the job shows them as progress.metrics and keeps metrics for completion', async () => {
    const { job } = await create(h);
    const leased = await lease(h);
    const res = await h.trainer.reportProgress({
      jobId: leased.jobId,
      leaseToken: leased.leaseToken,
      step: 120n,
      totalSteps: 240n,
      epoch: 2,
      loss: 0.25,
      learningRate: 0.002,
      examplesPerSecond: 80,
      etaSeconds: 30,
      metrics: { f1: 0.61, precision: 0.6, recall: 0.62, headline: 'entity_span_micro_f1' },
    });
    expect(res.cancel).toBe(false);
    const got = (await h.training.getJob({ caller, jobId: job!.id })).job!;
    expect(got.status).toBe(JobStatus.RUNNING);
    expect(got.progress).toMatchObject({
      step: 120,
      total_steps: 240,
      eta_seconds: 30,
      metrics: { f1: 0.61, headline: 'entity_span_micro_f1' },
    });
    expect(got.metrics).toBeUndefined();
  });

  it('when two trainers lease at once, then each gets a different job', async () => {
    await create(h);
    await create(h);
    const [a, b] = await Promise.all([lease(h), lease(h)]);
    expect(a.jobId).not.toBe(b.jobId);
    expect((await h.trainer.leaseWork({ trainerId: 'it', waitMs: 0 })).work.case).toBeUndefined();
  });

  it('when a trainer is waiting and a job is created, then it is leased at once, not at the next poll', async () => {
    const started = Date.now();
    const waiting = lease(h, 5_000);
    await new Promise((r) => setTimeout(r, 100));
    await create(h);
    await waiting;
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('when a trainer stops heartbeating, then the sweep queues the job again from its checkpoint and a new lease resumes it', async () => {
    const { job } = await create(h);
    const first = await lease(h);
    await h.trainer.putCheckpoint({
      jobId: first.jobId,
      leaseToken: first.leaseToken,
      checkpointId: 'weights/5',
      checkpointType: CheckpointType.TRAINING,
      step: 5n,
      key: `${first.artifactPrefix}checkpoints/weights-5.ckpt`,
      sizeBytes: 3n,
    });
    await new Promise((r) => setTimeout(r, 2_100));
    expect(await h.app.sweepLeases()).toBe(1);
    const second = await lease(h);
    expect(second).toMatchObject({
      jobId: job!.id,
      attempt: 2,
      resumeKey: `${first.artifactPrefix}checkpoints/weights-5.ckpt`,
    });
    expect((await h.trainer.heartbeat({ jobId: first.jobId, leaseToken: first.leaseToken })).cancel).toBe(true);
    expect((await h.trainer.heartbeat({ jobId: second.jobId, leaseToken: second.leaseToken })).cancel).toBe(false);
  });

  it('when a slow trainer heartbeats after the sweep requeued its job, then it gets the job back, running, still attempt 1', async () => {
    const { job } = await create(h);
    const first = await lease(h);
    await new Promise((r) => setTimeout(r, 2_100));
    expect(await h.app.sweepLeases()).toBe(1);
    expect((await h.trainer.heartbeat({ jobId: first.jobId, leaseToken: first.leaseToken })).cancel).toBe(false);
    expect(await h.db.prisma.job.findUnique({ where: { id: job!.id } })).toMatchObject({
      status: 'running',
      attempts: 1,
    });
    const moves = (await outbox(h, job!.id))
      .filter((e) => e.type === JobStatusChangedSchema.typeName)
      .map((e) => fromBinary(JobStatusChangedSchema, e.payload).toStatus);
    expect(moves).toEqual([JobStatus.REQUESTED, JobStatus.RUNNING, JobStatus.REQUESTED, JobStatus.RUNNING]);
  });

  it('when an evaluation is created, then a trainer leases it, heartbeats it and reports its figures', async () => {
    const { job } = await create(h);
    const leased = await lease(h);
    await h.trainer.completeJob({
      jobId: leased.jobId,
      leaseToken: leased.leaseToken,
      artifactKey: `${leased.artifactPrefix}model.bundle`,
      exampleEpochs: 2n,
    });
    const { evaluation } = await h.training.createEvaluation({ caller, jobId: job!.id, datasetName: 'wikigold' });
    expect(evaluation?.status).toBe(EvaluationStatus.RUNNING);
    const work = (await h.trainer.leaseWork({ trainerId: 'it', waitMs: 0 })).work;
    if (work.case !== 'evaluation') throw new Error('expected an evaluation');
    expect(work.value).toMatchObject({ artifactKey: `${leased.artifactPrefix}model.bundle`, attempt: 1 });
    const evalLease = { evaluationId: work.value.evaluationId, leaseToken: work.value.leaseToken };
    expect((await h.trainer.heartbeatEvaluation(evalLease)).cancel).toBe(false);
    await h.trainer.completeEvaluation({ ...evalLease, metrics: { f1: 0.7, examples: 4 } });
    const got = (await h.training.getEvaluation({ caller, evaluationId: evaluation!.id })).evaluation;
    expect(got).toMatchObject({ status: EvaluationStatus.COMPLETE, metrics: { f1: 0.7, examples: 4 } });
  });

  it('when jobs are listed by an enum status, then only that status comes back; an unknown enum value is refused', async () => {
    await create(h);
    await create(h);
    await lease(h);
    const running = await h.training.listJobs({ caller, status: JobStatus.RUNNING });
    expect(running.jobs.map((j) => j.status)).toEqual([JobStatus.RUNNING]);
    expect((await h.training.listJobs({ caller })).total).toBe(2);
    await expect(h.training.listJobs({ caller, status: 99 as JobStatus })).rejects.toMatchObject({
      kind: 'InvalidArgument',
    });
  });
});
