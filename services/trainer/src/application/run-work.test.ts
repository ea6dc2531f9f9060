import { AppError } from '@whetstone/errors';
import { fakeEngine, trainerDeps } from '../../test/fakes/in-memory';
import type { EvaluationWork, TrainingEngine, TrainingWork } from './ports';
import { runEvaluation } from './run-evaluation';
import { runTrainingJob } from './run-training-job';

const job: TrainingWork = {
  kind: 'job',
  jobId: 'j1',
  leaseToken: 'tok',
  leaseMs: 30_000,
  baseModel: 'whetstone-extract-base',
  trainingType: 'lora',
  nrEpochs: 3,
  learningRate: 0.01,
  seed: 1,
  datasetBucket: 'datasets',
  trainKeys: ['train.jsonl'],
  heldoutKeys: ['heldout.jsonl'],
  artifactBucket: 'artifacts',
  artifactPrefix: 'jobs/j1/',
  resumeKey: '',
  attempt: 1,
};
const evaluation: EvaluationWork = {
  kind: 'evaluation',
  evaluationId: 'e1',
  leaseToken: 'tok',
  leaseMs: 30_000,
  baseModel: 'whetstone-extract-base',
  artifactBucket: 'artifacts',
  artifactKey: 'jobs/j1/model.bundle',
  datasetBucket: 'datasets',
  heldoutKey: 'heldout.jsonl',
  attempt: 1,
};
const never = new AbortController().signal;

function withData(ctx: ReturnType<typeof trainerDeps>) {
  ctx.artifacts.rows('datasets', 'train.jsonl', [{ text: 'a' }, { text: 'b' }]);
  ctx.artifacts.rows('datasets', 'heldout.jsonl', [{ text: 'c' }]);
  return ctx;
}

describe('runTrainingJob', () => {
  it('when training succeeds, then the bundle and its manifest are stored under the job and the job completes with its example-epochs', async () => {
    const ctx = withData(trainerDeps());
    await runTrainingJob(ctx.deps, job, never);
    expect(ctx.orchestrator.completed).toEqual({
      artifactKey: 'jobs/j1/model.bundle',
      artifactSize: 2,
      manifestKey: 'jobs/j1/manifest.json',
      metrics: { f1: 0.5 },
      exampleEpochs: 6,
    });
    expect(JSON.parse(Buffer.from(ctx.artifacts.objects.get('artifacts/jobs/j1/manifest.json')!).toString())).toEqual({
      rows: 2,
    });
    expect(ctx.orchestrator.checkpoints).toEqual([
      { checkpointId: 'weights/1', key: 'jobs/j1/checkpoints/weights-1.ckpt' },
    ]);
    expect(ctx.orchestrator.logs).toContain('2 training rows, 1 held-out rows');
  });

  it('when the job names an out-of-scope label, then the engine trains with rejection to that label; otherwise without', async () => {
    const engine = fakeEngine();
    const asked: unknown[] = [];
    const spy: TrainingEngine = {
      ...engine,
      train: (input, hooks) => (asked.push(input.outOfScope), engine.train(input, hooks)),
    };
    await runTrainingJob(withData(trainerDeps(spy)).deps, { ...job, outOfScopeLabel: 'unsupported' }, never);
    await runTrainingJob(withData(trainerDeps(spy)).deps, job, never);
    expect(asked).toEqual([{ label: 'unsupported' }, undefined]);
  });

  it('when the checkpoint to resume from cannot be read, then training starts over, says so, and completes', async () => {
    const ctx = withData(trainerDeps());
    await runTrainingJob(ctx.deps, { ...job, resumeKey: 'jobs/j1/checkpoints/weights-9.ckpt' }, never);
    expect(ctx.orchestrator.completed).not.toBeNull();
    expect(ctx.orchestrator.logs).toContain(
      'checkpoint checkpoints/weights-9.ckpt could not be read; training starts over',
    );
  });

  it('when the engine cannot resume from the checkpoint, then training starts over without it and completes', async () => {
    const invalid = new AppError('InvalidArgument', 'CHECKPOINT_INVALID', 'resumeFrom is not a training checkpoint');
    const ctx = withData(trainerDeps(fakeEngine({ rejectResume: invalid })));
    ctx.artifacts.objects.set('artifacts/jobs/j1/checkpoints/weights-9.ckpt', new Uint8Array([1, 2]));
    await runTrainingJob(ctx.deps, { ...job, resumeKey: 'jobs/j1/checkpoints/weights-9.ckpt' }, never);
    expect(ctx.orchestrator.failed).toBeNull();
    expect(ctx.orchestrator.completed).not.toBeNull();
    expect(ctx.orchestrator.logs).toContain(
      'checkpoint checkpoints/weights-9.ckpt cannot be resumed from; training starts over',
    );
  });

  it('when the engine fails with an unknown error, then the job fails as INTERNAL, retryable, and the raw text is not reported', async () => {
    const ctx = withData(trainerDeps(fakeEngine({ fail: new Error('segfault at 0xdeadbeef') })));
    await runTrainingJob(ctx.deps, job, never);
    expect(ctx.orchestrator.failed).toMatchObject({ code: 'INTERNAL', retryable: true });
    expect(JSON.stringify([ctx.orchestrator.failed, ctx.orchestrator.logs])).not.toContain('deadbeef');
  });

  it('when the engine rejects the data with a typed error, then the job fails for good with that message', async () => {
    const bad = new AppError('InvalidArgument', 'DATASET_ROWS_INVALID', 'train row 1 has no messages');
    const ctx = withData(trainerDeps(fakeEngine({ fail: bad })));
    await runTrainingJob(ctx.deps, job, never);
    expect(ctx.orchestrator.failed).toEqual({
      code: 'DATASET_ROWS_INVALID',
      message: 'train row 1 has no messages',
      retryable: false,
    });
    expect(ctx.orchestrator.logs).toContain('training failed: train row 1 has no messages');
  });

  it('when a split is not JSONL, then the job fails for good as DATASET_ROWS_INVALID', async () => {
    const ctx = trainerDeps();
    ctx.artifacts.objects.set('datasets/train.jsonl', Buffer.from('{"text": oops\n'));
    ctx.artifacts.rows('datasets', 'heldout.jsonl', []);
    await runTrainingJob(ctx.deps, job, never);
    expect(ctx.orchestrator.failed).toMatchObject({ code: 'DATASET_ROWS_INVALID', retryable: false });
  });

  it('when the orchestrator says stop, then the job ends without a completion or a failure report', async () => {
    const ctx = withData(trainerDeps());
    ctx.orchestrator.goOn = false;
    ctx.deps.engine = {
      ...fakeEngine(),
      async train(_input, hooks) {
        await hooks.onCheckpoint({ id: 'weights/1', type: 'training', step: 1, bytes: new Uint8Array([1]) });
        if (hooks.signal.aborted) throw new AppError('Cancelled', 'TRAINING_CANCELLED', 'training was cancelled');
        throw new Error('unreachable');
      },
    };
    await runTrainingJob(ctx.deps, job, never);
    expect(ctx.orchestrator.completed).toBeNull();
    expect(ctx.orchestrator.failed).toBeNull();
  });
});

describe('runEvaluation', () => {
  it('when the bundle and held-out split load, then the figures and the row count are reported', async () => {
    const ctx = withData(trainerDeps());
    ctx.artifacts.objects.set('artifacts/jobs/j1/model.bundle', new Uint8Array([1]));
    await runEvaluation(ctx.deps, evaluation);
    expect(ctx.orchestrator.evaluation).toEqual({ metrics: { f1: 0.1, examples: 1 } });
  });

  it('when the bundle is missing, then the evaluation fails as INTERNAL and retryable, without the raw text', async () => {
    const ctx = withData(trainerDeps());
    await runEvaluation(ctx.deps, evaluation);
    expect(ctx.orchestrator.evaluation.failure).toMatchObject({ code: 'INTERNAL', retryable: true });
    expect(ctx.orchestrator.evaluation.failure?.message).not.toContain('jobs/j1');
  });
});
