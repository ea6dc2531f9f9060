import { AppError } from '@whetstone/errors';
import { inMemoryDeps } from '../../test/fakes/in-memory';
import { completeJob } from './complete-job';
import { createJob } from './create-job';
import { deleteJob } from './delete-job';
import { failJob } from './fail-job';
import { leaseKeeper } from './heartbeat';
import { leaseWork } from './lease-work';
import { markDeployed, markUndeployed } from './mark-deployed';
import type { Caller, ProjectsPort } from './ports';
import { stopJob } from './stop-job';
import { sweepLeases, UNRESPONSIVE } from './sweep-leases';

const caller: Caller = { teamId: 'team-a', keyId: 'key-1', userId: 'user-1' };
const queued = (ctx: ReturnType<typeof inMemoryDeps>) =>
  createJob(ctx.deps, caller, {
    baseModel: 'whetstone-extract-base',
    datasets: ['wikigold'],
    modelName: 'm',
    nrEpochs: 2,
    learningRate: 0,
    projectId: '',
  });
async function leased(ctx: ReturnType<typeof inMemoryDeps>) {
  const job = await queued(ctx);
  const work = await leaseWork(ctx.deps, { trainerId: 't1', waitMs: 0 });
  if (work?.kind !== 'job') throw new Error('expected a job');
  return { job, lease: { jobId: job.id, token: work.job.leaseToken! } };
}
const result = (jobId: string) => ({
  artifactKey: `jobs/${jobId}/model.bundle`,
  artifactSize: 1234,
  manifestKey: `jobs/${jobId}/manifest.json`,
  metrics: { f1: 0.7, precision: 0.8, recall: 0.6 },
  exampleEpochs: 200,
});

describe('the job lifecycle on in-memory ports', () => {
  it('when nothing is queued, then LeaseWork waits and returns null; when a job is queued, then it is leased as attempt 1', async () => {
    const ctx = inMemoryDeps();
    expect(await leaseWork(ctx.deps, { trainerId: 't1', waitMs: 20 })).toBeNull();
    const { job } = await leased(ctx);
    expect(await ctx.jobs.getById(job.id)).toMatchObject({ status: 'running', attempts: 1 });
    expect(ctx.logs.messages(job.id)).toContain('leased by trainer t1 (attempt 1)');
  });

  it('when a trainer completes, then the job is complete with its cost and the usage is written with the change', async () => {
    const ctx = inMemoryDeps();
    const { job, lease } = await leased(ctx);
    await completeJob(ctx.deps, lease, result(job.id));
    expect(await ctx.jobs.getById(job.id)).toMatchObject({
      status: 'complete',
      costMicroCredits: 2_000n,
      artifactKey: `jobs/${job.id}/model.bundle`,
      manifestKey: `jobs/${job.id}/manifest.json`,
      leaseToken: null,
    });
    expect(ctx.jobs.usage).toEqual([
      expect.objectContaining({ usageId: `training:${job.id}`, exampleEpochs: 200, costMicroCredits: 2_000n }),
    ]);
    expect(ctx.jobs.events.at(-1)).toEqual({ jobId: job.id, from: 'running', to: 'complete' });
  });

  it('when a stale lease completes, or an artifact lies outside the job, then nothing is recorded', async () => {
    const ctx = inMemoryDeps();
    const { job, lease } = await leased(ctx);
    await expect(completeJob(ctx.deps, { ...lease, token: 'stale' }, result(job.id))).rejects.toMatchObject({
      reason: 'LEASE_LOST',
    });
    await expect(
      completeJob(ctx.deps, lease, { ...result(job.id), artifactKey: 'jobs/other/model.bundle' }),
    ).rejects.toBeInstanceOf(AppError);
    expect(ctx.jobs.usage).toEqual([]);
  });

  it('when a retryable failure is reported, then the job is queued again from its last checkpoint until the attempt limit', async () => {
    const ctx = inMemoryDeps();
    const { job } = await queued(ctx).then(async (j) => ({ job: j }));
    const failure = { reason: 'An internal error occurred; it has been logged.', code: 'INTERNAL', retryable: true };
    for (let attempt = 1; attempt <= 3; attempt++) {
      const work = await leaseWork(ctx.deps, { trainerId: 't1', waitMs: 0 });
      if (work?.kind !== 'job') throw new Error('expected a job');
      await failJob(ctx.deps, { jobId: job.id, token: work.job.leaseToken! }, failure);
    }
    expect(await ctx.jobs.getById(job.id)).toMatchObject({
      status: 'failed',
      attempts: 3,
      failureReason: failure.reason,
    });
    expect(ctx.logs.messages(job.id).filter((m) => m.includes('retrying'))).toHaveLength(2);
  });

  it('when a failure is not retryable, then the job fails at once with the safe reason', async () => {
    const ctx = inMemoryDeps();
    const { job, lease } = await leased(ctx);
    await failJob(ctx.deps, lease, {
      reason: 'A dataset row is not valid JSON.',
      code: 'DATASET_ROWS_INVALID',
      retryable: false,
    });
    expect(await ctx.jobs.getById(job.id)).toMatchObject({
      status: 'failed',
      failureReason: 'A dataset row is not valid JSON.',
    });
  });

  it('when a lease expires, then the sweep queues the job again resuming from its newest training checkpoint, and gives up after the limit', async () => {
    const ctx = inMemoryDeps();
    const { job } = await leased(ctx);
    await ctx.checkpoints.put({
      id: 'c1',
      jobId: job.id,
      checkpointId: 'weights/40',
      type: 'training',
      step: 40,
      key: `jobs/${job.id}/checkpoints/weights-40.ckpt`,
      sizeBytes: 1,
      createdAt: new Date(),
    });
    ctx.clock.advance(31_000);
    expect(await sweepLeases(ctx.deps)).toBe(1);
    expect(await ctx.jobs.getById(job.id)).toMatchObject({
      status: 'requested',
      resumeKey: `jobs/${job.id}/checkpoints/weights-40.ckpt`,
    });
    expect(ctx.logs.messages(job.id).at(-1)).toMatch(/lease expired \(attempt 1\).*resumes from weights\/40/);
    for (let i = 0; i < 2; i++) {
      await leaseWork(ctx.deps, { trainerId: 't2', waitMs: 0 });
      ctx.clock.advance(31_000);
      await sweepLeases(ctx.deps);
    }
    expect(await ctx.jobs.getById(job.id)).toMatchObject({ status: 'failed', failureReason: UNRESPONSIVE });
  });

  it('when a slow trainer answers after its lease expired and nobody leased the job since, then it keeps the job and the expiry is not an attempt', async () => {
    const ctx = inMemoryDeps();
    const { job, lease } = await leased(ctx);
    const keeper = leaseKeeper(ctx.deps);
    for (let i = 0; i < 3; i++) {
      ctx.clock.advance(31_000);
      expect(await sweepLeases(ctx.deps)).toBe(1);
      expect(await ctx.jobs.getById(job.id)).toMatchObject({ status: 'requested' });
      expect(await keeper.renew(lease)).toBe(true);
      expect(await ctx.jobs.getById(job.id)).toMatchObject({ status: 'running', attempts: 1 });
    }
    expect(ctx.logs.messages(job.id).at(-1)).toMatch(/keeps the job; the expiry does not count as an attempt/);
    expect(await completeJob(ctx.deps, lease, result(job.id))).toBeUndefined();
    expect(await ctx.jobs.getById(job.id)).toMatchObject({ status: 'complete' });
  });

  it('when another trainer leased the job after the expiry, then the slow trainer is told to stop', async () => {
    const ctx = inMemoryDeps();
    const { job, lease } = await leased(ctx);
    ctx.clock.advance(31_000);
    await sweepLeases(ctx.deps);
    await leaseWork(ctx.deps, { trainerId: 't2', waitMs: 0 });
    expect(await leaseKeeper(ctx.deps).renew(lease)).toBe(false);
    expect(await ctx.jobs.getById(job.id)).toMatchObject({ status: 'running', attempts: 2 });
  });

  it('when progress is reported often, then the lease is written at most once a second, and a stopped job says cancel', async () => {
    const ctx = inMemoryDeps();
    const { job, lease } = await leased(ctx);
    const keeper = leaseKeeper(ctx.deps);
    let writes = 0;
    const renew = ctx.jobs.renew.bind(ctx.jobs);
    ctx.jobs.renew = (...args) => (writes++, renew(...args));
    for (let i = 0; i < 5; i++) expect(await keeper.renew(lease, { step: i })).toBe(true);
    expect(writes).toBe(1);
    await stopJob(ctx.deps, caller, job.id);
    ctx.clock.advance(1_500);
    expect(await keeper.renew(lease, { step: 9 })).toBe(false);
  });

  it('when a job is stopped, then it is cancelled; a finished job cannot be stopped', async () => {
    const ctx = inMemoryDeps();
    const job = await queued(ctx);
    expect(await stopJob(ctx.deps, caller, job.id)).toMatchObject({ status: 'cancelled' });
    await expect(stopJob(ctx.deps, caller, job.id)).rejects.toMatchObject({ reason: 'JOB_NOT_RUNNING' });
  });

  it('when a complete job is deployed twice, then it is deployed once; a running job is not marked deployed', async () => {
    const ctx = inMemoryDeps();
    const { job, lease } = await leased(ctx);
    await markDeployed(ctx.deps, job.id);
    expect((await ctx.jobs.getById(job.id))?.status).toBe('running');
    await completeJob(ctx.deps, lease, result(job.id));
    await markDeployed(ctx.deps, job.id);
    await markDeployed(ctx.deps, job.id);
    expect(ctx.jobs.events.filter((e) => e.to === 'deployed')).toHaveLength(1);
  });

  it('when a deployment of a deployed job ends, then it is complete again unless another project still serves it', async () => {
    const ctx = inMemoryDeps();
    const { job, lease } = await leased(ctx);
    await completeJob(ctx.deps, lease, result(job.id));
    await markDeployed(ctx.deps, job.id);
    let serving = true;
    const asked: string[] = [];
    const projects: ProjectsPort = {
      activeJob: async () => '',
      deploy: async () => undefined,
      servesAnywhere: async (teamId, jobId) => {
        asked.push(`${teamId}/${jobId}`);
        return serving;
      },
    };
    const end = { teamId: caller.teamId, trainingJobId: job.id };
    await markUndeployed({ ...ctx.deps, projects }, end);
    expect((await ctx.jobs.getById(job.id))?.status).toBe('deployed');
    serving = false;
    await markUndeployed({ ...ctx.deps, projects }, end);
    await markUndeployed({ ...ctx.deps, projects }, end);
    expect((await ctx.jobs.getById(job.id))?.status).toBe('complete');
    expect(ctx.jobs.events.filter((e) => e.to === 'complete')).toHaveLength(2);
    expect(asked).toEqual(Array(3).fill(`${caller.teamId}/${job.id}`));
    // Deployed again, it is deployed again.
    await markDeployed(ctx.deps, job.id);
    expect((await ctx.jobs.getById(job.id))?.status).toBe('deployed');
  });

  it('when a running job is deleted, then it is cancelled first, its artifacts removed, and it is gone', async () => {
    const ctx = inMemoryDeps();
    const { job } = await leased(ctx);
    await deleteJob(ctx.deps, caller, job.id);
    expect(ctx.jobs.events.at(-1)).toEqual({ jobId: job.id, from: 'running', to: 'cancelled' });
    expect(ctx.blobs.deletedPrefixes).toEqual([`artifacts/jobs/${job.id}/`]);
    expect(await ctx.jobs.getById(job.id)).toBeNull();
    await expect(deleteJob(ctx.deps, caller, job.id)).rejects.toMatchObject({ reason: 'JOB_NOT_FOUND' });
  });
});
