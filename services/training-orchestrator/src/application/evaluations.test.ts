import { inMemoryDeps } from '../../test/fakes/in-memory';
import { completeJob } from './complete-job';
import { createJob } from './create-job';
import { completeEvaluation, failEvaluation, heartbeatEvaluation } from './evaluation-results';
import { createEvaluation, getEvaluation } from './evaluations';
import { leaseWork } from './lease-work';
import type { Caller, ModelHub } from './ports';
import { pushToHub } from './push-to-hub';
import { sweepLeases } from './sweep-leases';

const caller: Caller = { teamId: 'team-a', keyId: '', userId: 'user-1' };

async function completed(ctx: ReturnType<typeof inMemoryDeps>, baseModel = 'whetstone-extract-base') {
  const job = await createJob(ctx.deps, caller, {
    baseModel,
    datasets: [baseModel === 'whetstone-decoder-base' ? 'chat' : 'wikigold'],
    modelName: 'wiki',
    nrEpochs: 1,
    learningRate: 0,
    projectId: '',
  });
  const work = await leaseWork(ctx.deps, { trainerId: 't', waitMs: 0 });
  if (work?.kind !== 'job') throw new Error('expected a job');
  await completeJob(
    ctx.deps,
    { jobId: job.id, token: work.job.leaseToken! },
    {
      artifactKey: `jobs/${job.id}/model.bundle`,
      artifactSize: 3,
      manifestKey: `jobs/${job.id}/manifest.json`,
      metrics: { f1: 0.6, precision: 0.7, recall: 0.5 },
      exampleEpochs: 100,
    },
  );
  return job;
}

async function leasedEvaluation(ctx: ReturnType<typeof inMemoryDeps>) {
  const work = await leaseWork(ctx.deps, { trainerId: 't', waitMs: 0 });
  if (work?.kind !== 'evaluation') throw new Error('expected an evaluation');
  return { id: work.evaluation.id, token: work.evaluation.leaseToken! };
}

describe('evaluations are trainer work', () => {
  it('when an evaluation is created, then it is queued for a trainer with the bundle and held-out split to score', async () => {
    const ctx = inMemoryDeps();
    const job = await completed(ctx);
    const evaluation = await createEvaluation(ctx.deps, caller, job.id, 'wikigold');
    expect(evaluation).toMatchObject({
      status: 'running',
      leaseToken: null,
      artifactKey: `jobs/${job.id}/model.bundle`,
    });
    const work = await leaseWork(ctx.deps, { trainerId: 't', waitMs: 0 });
    expect(work).toMatchObject({
      kind: 'evaluation',
      evaluation: { id: evaluation.id, attempts: 1, heldoutKey: 'teams/t/wikigold/1/heldout.jsonl' },
    });
  });

  it('when the trainer reports figures, then the evaluation is complete; a stale lease is ignored', async () => {
    const ctx = inMemoryDeps();
    const job = await completed(ctx);
    const { id } = await createEvaluation(ctx.deps, caller, job.id, 'wikigold');
    const lease = await leasedEvaluation(ctx);
    expect(await heartbeatEvaluation(ctx.deps, lease)).toBe(true);
    await completeEvaluation(ctx.deps, { ...lease, token: 'stale' }, { f1: 0 });
    await completeEvaluation(ctx.deps, lease, { f1: 0.61, examples: 10 });
    expect(await getEvaluation(ctx.deps, caller, id)).toMatchObject({ status: 'complete', metrics: { f1: 0.61 } });
    expect(await heartbeatEvaluation(ctx.deps, lease)).toBe(false);
  });

  it('when a trainer fails retryably or its lease expires, then the evaluation is queued again, and fails after the limit', async () => {
    const ctx = inMemoryDeps();
    const job = await completed(ctx);
    const { id } = await createEvaluation(ctx.deps, caller, job.id, 'wikigold');
    const internal = { reason: 'An internal error occurred; it has been logged.', code: 'INTERNAL', retryable: true };
    await failEvaluation(ctx.deps, await leasedEvaluation(ctx), internal);
    expect((await getEvaluation(ctx.deps, caller, id)).status).toBe('running');
    await leasedEvaluation(ctx);
    ctx.clock.advance(31_000);
    expect(await sweepLeases(ctx.deps)).toBe(1);
    await failEvaluation(ctx.deps, await leasedEvaluation(ctx), internal);
    expect(await getEvaluation(ctx.deps, caller, id)).toMatchObject({ status: 'failed', error: internal.reason });
  });

  it('when a job is not complete, the dataset does not fit it, or the evaluation unknown, then the typed errors say so', async () => {
    const ctx = inMemoryDeps();
    const requested = await createJob(ctx.deps, caller, {
      baseModel: 'whetstone-extract-base',
      datasets: ['wikigold'],
      modelName: '',
      nrEpochs: 0,
      learningRate: 0,
      projectId: '',
    });
    await expect(createEvaluation(ctx.deps, caller, requested.id, 'wikigold')).rejects.toMatchObject({
      reason: 'JOB_NOT_COMPLETE',
    });
    await leaseWork(ctx.deps, { trainerId: 't', waitMs: 0 });
    const decoder = await completed(ctx, 'whetstone-decoder-base');
    await expect(createEvaluation(ctx.deps, caller, decoder.id, 'wikigold')).rejects.toMatchObject({
      kind: 'InvalidArgument',
      fieldErrors: [{ field: 'dataset_name', message: expect.stringContaining('generation (chat) datasets') }],
    });
    await expect(getEvaluation(ctx.deps, caller, 'nope')).rejects.toMatchObject({ reason: 'EVALUATION_NOT_FOUND' });
  });

  it('when a complete decoder job is evaluated on a chat dataset, then it is queued for a trainer like any other', async () => {
    const ctx = inMemoryDeps();
    const decoder = await completed(ctx, 'whetstone-decoder-base');
    const evaluation = await createEvaluation(ctx.deps, caller, decoder.id, 'chat');
    expect(evaluation).toMatchObject({ status: 'running', baseModel: 'whetstone-decoder-base', datasetName: 'chat' });
    expect(await leaseWork(ctx.deps, { trainerId: 't', waitMs: 0 })).toMatchObject({
      kind: 'evaluation',
      evaluation: { id: evaluation.id },
    });
    const extraction = await completed(ctx);
    await expect(createEvaluation(ctx.deps, caller, extraction.id, 'chat')).rejects.toMatchObject({
      fieldErrors: [{ field: 'dataset_name', code: 'invalid_value' }],
    });
  });
});

describe('pushToHub', () => {
  const recordingHub = () => {
    const pushes: Parameters<ModelHub['push']>[0][] = [];
    const hub: ModelHub = {
      push: async (input) => (pushes.push(input), { url: 'https://hub/acme/x', commit: 'c0ffee' }),
    };
    return { hub, pushes };
  };

  it('when a complete job is pushed, then the bundle, the stored manifest and a model card go up, without opening the bundle', async () => {
    const { hub, pushes } = recordingHub();
    const ctx = inMemoryDeps({ hub });
    const job = await completed(ctx);
    ctx.blobs.objects.set(`artifacts/jobs/${job.id}/model.bundle`, new Uint8Array([1, 2, 3]));
    ctx.blobs.objects.set(`artifacts/jobs/${job.id}/manifest.json`, new Uint8Array(Buffer.from('{"task":"x"}')));
    const out = await pushToHub(ctx.deps, caller, job.id, {
      repoId: 'acme/x',
      token: 'hf_secret_token',
      private: true,
    });
    expect(out).toEqual({
      repoId: 'acme/x',
      url: 'https://hub/acme/x',
      commit: 'c0ffee',
      files: ['model.whetstone-bundle', 'whetstone_manifest.json', 'README.md'],
    });
    expect(Buffer.from(pushes[0]!.files[1]!.bytes).toString()).toBe('{"task":"x"}');
    expect(Buffer.from(pushes[0]!.files[2]!.bytes).toString()).toContain('base_model: whetstone-extract-base');
  });

  it('when the repo id and token are bad, or no hub is configured, then the push is refused before any upload', async () => {
    const ctx = inMemoryDeps();
    const job = await completed(ctx);
    await expect(
      pushToHub(ctx.deps, caller, job.id, { repoId: 'not a repo', token: 'x', private: false }),
    ).rejects.toMatchObject({
      kind: 'InvalidArgument',
      fieldErrors: [expect.objectContaining({ field: 'repo_id' }), expect.objectContaining({ field: 'hub_token' })],
    });
    await expect(
      pushToHub(ctx.deps, caller, job.id, { repoId: 'acme/x', token: 'hf_secret_token', private: false }),
    ).rejects.toMatchObject({ reason: 'HUB_NOT_CONFIGURED' });
  });
});
