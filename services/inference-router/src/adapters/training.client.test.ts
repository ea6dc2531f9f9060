import { create } from '@bufbuild/protobuf';
import { errors } from '@whetstone/errors';
import { GetJobResponseSchema, JobSchema, JobStatus } from '@whetstone/proto/training/v1';
import type { TrainedModels } from '../application/ports';
import type { TrainedModel } from '../domain/trained-model';
import { withOrchestratorFallback } from './training.client';

const logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return this;
  },
} as never;
const held = (over: Partial<TrainedModel>): TrainedModel => ({
  jobId: 'j1',
  teamId: 't1',
  servable: false,
  statusLabel: 'running',
  baseModel: 'whetstone-extract-base',
  modelName: 'm',
  bundle: null,
  completedAt: null,
  updatedAt: new Date(0),
  ...over,
});
const readModel = (model: TrainedModel | null): TrainedModels => ({
  get: async () => model,
  listServable: async () => [],
  upsert: async () => true,
  markDeleted: async () => undefined,
});

function orchestrator(answer: () => unknown) {
  const calls = { n: 0 };
  const client = {
    getJob: async () => {
      calls.n++;
      return answer();
    },
  };
  return { client: client as never, calls };
}

describe('withOrchestratorFallback', () => {
  it('when the read model holds the job as servable, then the orchestrator is not asked', async () => {
    const { client, calls } = orchestrator(() => {
      throw new Error('not expected');
    });
    const fallback = withOrchestratorFallback(
      readModel(held({ servable: true, bundle: { bucket: 'b', key: 'k' } })),
      client,
      logger,
    );
    expect((await fallback.get('t1', 'j1'))?.servable).toBe(true);
    expect(calls.n).toBe(0);
  });

  it('when the completion event is still in flight, then the orchestrator’s answer serves', async () => {
    const job = create(JobSchema, {
      id: 'j1',
      status: JobStatus.COMPLETE,
      rootBaseModel: 'whetstone-extract-base',
      artifactBucket: 'artifacts',
      artifactKey: 'jobs/j1/model.bundle',
    });
    const { client } = orchestrator(() => create(GetJobResponseSchema, { job }));
    const got = await withOrchestratorFallback(readModel(held({})), client, logger).get('t1', 'j1');
    expect([got?.servable, got?.bundle]).toEqual([true, { bucket: 'artifacts', key: 'jobs/j1/model.bundle' }]);
  });

  it('when the orchestrator does not know the job, then there is none; when it is down, the read model answers', async () => {
    const missing = orchestrator(() => {
      throw errors.notFound('JOB_NOT_FOUND', 'no');
    });
    expect(await withOrchestratorFallback(readModel(null), missing.client, logger).get('t1', 'j1')).toBeNull();
    const down = orchestrator(() => {
      throw new Error('UNAVAILABLE');
    });
    expect(
      (await withOrchestratorFallback(readModel(held({})), down.client, logger).get('t1', 'j1'))?.statusLabel,
    ).toBe('running');
  });
});
