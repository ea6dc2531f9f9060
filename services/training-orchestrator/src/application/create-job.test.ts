import { AppError } from '@whetstone/errors';
import { inMemoryDeps } from '../../test/fakes/in-memory';
import { createJob } from './create-job';
import { listJobs } from './get-job';
import type { Caller } from './ports';

const caller: Caller = { teamId: 'team-a', keyId: 'key-1', userId: 'user-1' };
const request = (over: Partial<Parameters<typeof createJob>[2]> = {}) => ({
  baseModel: 'whetstone-extract-base',
  datasets: ['wikigold'],
  modelName: '',
  nrEpochs: 0,
  learningRate: 0,
  projectId: '',
  ...over,
});
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as AppError,
  );

describe('createJob', () => {
  it('when a built-in model is trained on a ready dataset, then the job is queued with defaults, logged and trainers woken', async () => {
    const { deps, jobs, logs, wakeups } = inMemoryDeps();
    const job = await createJob(deps, caller, request());
    expect(job).toMatchObject({
      status: 'requested',
      rootBaseModel: 'whetstone-extract-base',
      trainingType: 'lora',
      nrEpochs: 6,
      learningRate: 0.002,
      resumeKey: null,
      keyId: 'key-1',
    });
    expect(job.modelName).toMatch(/^extract-base-\d{14}$/);
    expect(jobs.events).toEqual([{ jobId: job.id, from: null, to: 'requested' }]);
    expect(logs.messages(job.id)[0]).toMatch(/^job requested: lora training of whetstone-extract-base on wikigold v1/);
    expect(wakeups()).toBe(1);
  });

  it('when a fine-tuning request gives a seed, a learning-rate multiplier and its source, then the job keeps them and lists apart', async () => {
    const { deps } = inMemoryDeps();
    const fineTuning = { training_file: 'f-1', validation_file: '', suffix: 'greeter', metadata: { a: 'b' } };
    const tuned = await createJob(deps, caller, request({ seed: 42, learningRateMultiplier: 2, fineTuning }));
    expect(tuned).toMatchObject({ seed: 42, learningRate: 0.004, fineTuning });
    const plain = await createJob(deps, caller, request());
    expect(plain.fineTuning).toBeNull();
    expect(plain.seed).toBeGreaterThan(0);
    const listed = await listJobs(deps, caller, { projectId: '', fineTuningOnly: true, limit: 10, offset: 0 });
    expect(listed.rows.map((j) => j.id)).toEqual([tuned.id]);
    const after = await listJobs(deps, caller, { projectId: '', afterId: plain.id, limit: 10, offset: 0 });
    const all = (await listJobs(deps, caller, { projectId: '', limit: 10, offset: 0 })).rows.map((j) => j.id);
    expect(after.rows.map((j) => j.id)).toEqual(all.slice(all.indexOf(plain.id) + 1));
    const unknown = await failure(
      listJobs(deps, caller, { projectId: '', afterId: tuned.teamId, limit: 1, offset: 0 }),
    );
    expect(unknown).toMatchObject({ kind: 'InvalidArgument', reason: 'JOB_CURSOR_NOT_FOUND' });
    const badSeed = await failure(createJob(deps, caller, request({ seed: -1 })));
    expect(badSeed.fieldErrors.map((f) => f.field)).toEqual(['seed']);
  });

  it('when the cost is checked, then it is the example-epochs times the training price', async () => {
    const seen: bigint[] = [];
    const { deps } = inMemoryDeps({ billing: { checkSpendable: async (_t, cost) => void seen.push(cost) } });
    await createJob(deps, caller, request({ nrEpochs: 2 }));
    expect(seen).toEqual([100n * 2n * 10n]);
  });

  it('when base_model and datasets are missing, then both fields are named at once', async () => {
    const { deps } = inMemoryDeps();
    const err = await failure(createJob(deps, caller, request({ baseModel: '', datasets: [] })));
    expect(err).toMatchObject({ kind: 'InvalidArgument', reason: 'VALIDATION_FAILED' });
    expect(err.fieldErrors.map((f) => f.field)).toEqual(['base_model', 'datasets']);
  });

  it('when hyperparameters are out of bounds, then every bad field is named', async () => {
    const { deps } = inMemoryDeps();
    const err = await failure(createJob(deps, caller, request({ nrEpochs: 500, learningRate: 5 })));
    expect(err.fieldErrors.map((f) => f.field)).toEqual(['nr_epochs', 'learning_rate']);
  });

  it('when the decoder is asked for full training, then training_type is refused', async () => {
    const { deps } = inMemoryDeps();
    const err = await failure(
      createJob(deps, caller, request({ baseModel: 'whetstone-decoder-base', trainingType: 'full' })),
    );
    expect(err.fieldErrors).toEqual([{ field: 'training_type', message: "must be 'lora' for whetstone-decoder-base" }]);
  });

  it('when a dataset does not fit the base model, then it is 422 naming it, before anything is queued', async () => {
    const { deps, jobs } = inMemoryDeps();
    const extraction = await failure(createJob(deps, caller, request({ datasets: ['wikigold', 'chat'] })));
    expect(extraction).toMatchObject({ kind: 'InvalidArgument', reason: 'VALIDATION_FAILED' });
    expect(extraction.fieldErrors).toEqual([
      {
        field: 'datasets.1.name',
        message: "'chat' holds generation data; whetstone-extract-base trains on extraction or classification datasets",
      },
    ]);
    const decoder = await failure(createJob(deps, caller, request({ baseModel: 'whetstone-decoder-base' })));
    expect(decoder.fieldErrors).toEqual([
      {
        field: 'datasets.0.name',
        message: "'wikigold' holds extraction data; whetstone-decoder-base trains on generation (chat) datasets only",
      },
    ]);
    expect(jobs.events).toEqual([]);
  });

  it('when an out-of-scope label is named for classification data, then the job stores it trimmed and logs it', async () => {
    const { deps, logs } = inMemoryDeps();
    const job = await createJob(
      deps,
      caller,
      request({ datasets: ['wikigold', 'banking'], outOfScopeLabel: ' unsupported ' }),
    );
    expect(job.outOfScopeLabel).toBe('unsupported');
    expect(logs.messages(job.id)[0]).toMatch(/out-of-scope inputs answered 'unsupported'/);
    expect((await createJob(deps, caller, request({ outOfScopeLabel: '  ' }))).outOfScopeLabel).toBeNull();
  });

  it('when an out-of-scope label is named without classification data, or is too long, then out_of_scope_label is refused', async () => {
    const { deps, jobs } = inMemoryDeps();
    const extraction = await failure(createJob(deps, caller, request({ outOfScopeLabel: 'oos' })));
    expect(extraction).toMatchObject({ kind: 'InvalidArgument', reason: 'VALIDATION_FAILED' });
    expect(extraction.fieldErrors).toEqual([
      {
        field: 'out_of_scope_label',
        message: 'applies to classification datasets; the datasets given hold extraction data',
      },
    ]);
    const long = await failure(
      createJob(deps, caller, request({ datasets: ['banking'], outOfScopeLabel: 'x'.repeat(101) })),
    );
    expect(long.fieldErrors).toEqual([{ field: 'out_of_scope_label', message: 'must be at most 100 characters' }]);
    expect(jobs.events).toEqual([]);
  });

  it('when base_model is neither a model nor an id, then it is InvalidArgument; an unknown id is NotFound', async () => {
    const { deps } = inMemoryDeps();
    expect(await failure(createJob(deps, caller, request({ baseModel: 'gpt-9' })))).toMatchObject({
      kind: 'InvalidArgument',
    });
    expect(
      await failure(createJob(deps, caller, request({ baseModel: '00000000-0000-4000-8000-000000000000' }))),
    ).toMatchObject({ kind: 'NotFound', reason: 'BASE_MODEL_NOT_FOUND' });
  });

  it('when continuing a job without a training checkpoint, then it is FailedPrecondition NO_CHECKPOINT', async () => {
    const { deps } = inMemoryDeps();
    const parent = await createJob(deps, caller, request());
    expect(await failure(createJob(deps, caller, request({ baseModel: parent.id })))).toMatchObject({
      kind: 'FailedPrecondition',
      reason: 'NO_CHECKPOINT',
    });
  });

  it("when continuing a job or a checkpoint, then it resumes from that job's newest training checkpoint", async () => {
    const { deps, checkpoints } = inMemoryDeps();
    const parent = await createJob(deps, caller, request());
    const at = (step: number, type: 'training' | 'sampler') => ({
      id: `00000000-0000-4000-8000-00000000000${step}`,
      jobId: parent.id,
      checkpointId: `${type === 'training' ? 'weights' : 'sampler_weights'}/${step}`,
      type,
      step,
      key: `jobs/${parent.id}/checkpoints/${type}-${step}.ckpt`,
      sizeBytes: 10,
      createdAt: new Date(),
    });
    await checkpoints.put(at(1, 'training'));
    await checkpoints.put(at(2, 'training'));
    await checkpoints.put(at(3, 'sampler'));
    const fromJob = await createJob(deps, caller, request({ baseModel: parent.id }));
    expect(fromJob).toMatchObject({ rootBaseModel: 'whetstone-extract-base', resumeKey: at(2, 'training').key });
    const fromCheckpoint = await createJob(deps, caller, request({ baseModel: at(1, 'training').id }));
    expect(fromCheckpoint.resumeKey).toBe(at(1, 'training').key);
    expect(await failure(createJob(deps, caller, request({ baseModel: at(3, 'sampler').id })))).toMatchObject({
      kind: 'InvalidArgument',
    });
  });

  it("when another team names this team's job, then it is NotFound", async () => {
    const { deps } = inMemoryDeps();
    const parent = await createJob(deps, caller, request());
    const other = { ...caller, teamId: 'team-b' };
    expect(await failure(createJob(deps, other, request({ baseModel: parent.id })))).toMatchObject({
      reason: 'BASE_MODEL_NOT_FOUND',
    });
  });
});
