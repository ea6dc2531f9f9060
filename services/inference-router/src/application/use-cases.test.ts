import { AppError, Reasons } from '@whetstone/errors';
import { BUILTIN_MODELS, Catalog, Restrictions } from '../domain/catalog';
import type { DeploymentRow } from '../domain/deployment';
import type { TrainedModel } from '../domain/trained-model';
import { createDeployment } from './deployments';
import type { RouterDeps } from './deps';
import { embed, type EmbedInput } from './embed';
import { extract } from './extract';
import type { InferenceRecord, ModelFleet, ProjectStore } from './ports';
import { DeploymentWarmer } from './warm-deployment';

const TEAM = { teamId: 't1', keyId: 'k1', userId: 'u1' };
const JOB = '6f1d2b3c-0000-4000-8000-000000000001';
const PROJECT = '6f1d2b3c-0000-4000-8000-000000000002';

const job = (over: Partial<TrainedModel> = {}): TrainedModel => ({
  jobId: JOB,
  teamId: 't1',
  servable: true,
  statusLabel: 'complete',
  baseModel: 'whetstone-extract-base',
  modelName: 'm',
  bundle: { bucket: 'artifacts', key: 'jobs/1' },
  completedAt: new Date(0),
  updatedAt: new Date(0),
  ...over,
});

/** In-memory ports: a fleet that answers or fails as told, a store that keeps rows in a list. */
function fakes(trained: TrainedModel | null, fleet: Partial<ModelFleet> = {}, metering?: RouterDeps['metering']) {
  const recorded: InferenceRecord[] = [];
  const failed: { id: string; reason: string }[] = [];
  const rows: DeploymentRow[] = [];
  const store = {
    getProject: async (teamId: string, id: string) =>
      teamId === 't1' && id === PROJECT ? { id, teamId, name: 'p', createdAt: new Date(0) } : null,
    createDeployment: async (row: DeploymentRow) => (rows.push(row), row),
    activate: async () => true,
    fail: async (id: string, reason: string) => void failed.push({ id, reason }),
  } as unknown as ProjectStore;
  const deps: RouterDeps = {
    catalog: new Catalog(BUILTIN_MODELS),
    restrictions: new Restrictions(''),
    trained: {
      get: async (teamId) => (trained?.teamId === teamId ? trained : null),
      listServable: async () => [],
      upsert: async () => true,
      markDeleted: async () => undefined,
    },
    billing: { checkSpendable: async () => undefined },
    fleet: {
      extract: async () => ({ resultsJson: Buffer.from('[{"entities":{}}]'), inputTokens: 3 }),
      embed: async (_ref, texts) => ({ vectors: texts.map(() => [0.6, 0.8]), dimensions: 2, inputTokens: 3 }),
      warm: async () => undefined,
      generate: () => ({
        chunks: (async function* () {})(),
        done: () => ({
          finishReason: 'stop',
          stopSequence: '',
          inputTokens: 0,
          outputTokens: 0,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        }),
      }),
      ...fleet,
    },
    upstreams: {
      stream: () => {
        throw new Error('no upstreams in these tests');
      },
      embed: () => Promise.reject(new Error('no upstreams in these tests')),
    },
    metering: metering ?? { record: async (r) => void recorded.push(r) },
    store,
    batches: new Proxy(
      {},
      {
        get: () => {
          throw new Error('no batches in these tests');
        },
      },
    ) as never,
    ids: { uuid: () => 'id-1', ephemeral: () => 'id-2' },
    logger: {
      debug() {},
      info() {},
      warn() {},
      error() {},
      child() {
        return this;
      },
    } as never,
    now: () => new Date(0),
    warmTimeoutMs: 1000,
  };
  return { deps, recorded, failed, rows };
}

const input = (modelId: string) => ({
  caller: TEAM,
  modelId,
  projectId: '',
  texts: ['Ada'],
  schemaJson: Buffer.from('{"entities":["person"]}'),
  schema: { entities: ['person'] },
  threshold: 0,
  includeConfidence: false,
  includeSpans: false,
  task: 'ner' as const,
});

describe('extract', () => {
  it('when a complete job of the team is called, then it runs on its bundle and is metered with the task label', async () => {
    const { deps, recorded } = fakes(job());
    const out = await extract(deps, input(JOB));
    expect(out.model).toBe(JOB);
    expect(recorded.map((r) => [r.model, r.task, r.inputTokens])).toEqual([[JOB, 'ner', 3]]);
    expect(recorded[0]!.outputs).toEqual([{ entities: {} }]);
    expect(Buffer.from(out.resultsJson).toString()).toBe('[{"entities":{}}]');
  });

  it('when metering is not yet durable, then the call is not answered until it is', async () => {
    let durable: () => void = () => undefined;
    const { deps } = fakes(job(), {}, { record: () => new Promise<void>((resolve) => (durable = resolve)) });
    let answered = false;
    const call = extract(deps, input(JOB)).then((out) => ((answered = true), out));
    await new Promise((r) => setTimeout(r, 5));
    expect(answered).toBe(false);
    durable();
    expect((await call).inferenceId).toBe('id-1');
  });

  it('when metering refuses the record (back-pressure), then the call fails with that retryable 503, not a result', async () => {
    const busy = new AppError('Unavailable', Reasons.OVERLOADED, 'busy', { retryAfterSeconds: 1 });
    const { deps } = fakes(job(), {}, { record: async () => Promise.reject(busy) });
    await expect(extract(deps, input(JOB))).rejects.toBe(busy);
  });

  it('when the job is still running, then the call names its status', async () => {
    const { deps } = fakes(job({ servable: false, bundle: null, statusLabel: 'running' }));
    await expect(extract(deps, input(JOB))).rejects.toMatchObject({
      kind: 'FailedPrecondition',
      message: expect.stringContaining('is running'),
    });
  });

  it('when the job belongs to another team, then it is not found', async () => {
    const { deps } = fakes(job({ teamId: 't2' }));
    await expect(extract(deps, input(JOB))).rejects.toMatchObject({ kind: 'NotFound' });
  });
});

describe('embed', () => {
  const call = (over: Partial<EmbedInput> = {}): EmbedInput => ({
    caller: TEAM,
    modelId: JOB,
    texts: ['a', 'b'],
    dimensions: 0,
    ...over,
  });

  it('when a trained extraction job embeds, then the vectors come back and only the usage is metered', async () => {
    const { deps, recorded } = fakes(job());
    const out = await embed(deps, call());
    expect(out).toMatchObject({
      model: JOB,
      dimensions: 2,
      vectors: [
        [0.6, 0.8],
        [0.6, 0.8],
      ],
    });
    expect(recorded.map((r) => [r.model, r.task, r.inputTokens, r.stored])).toEqual([[JOB, 'embed', 3, false]]);
  });

  it('when the dimensions asked for are not the model’s, then it is InvalidArgument naming them and nothing is metered', async () => {
    const { deps, recorded } = fakes(job());
    const err = (await embed(deps, call({ dimensions: 64 })).catch((e: unknown) => e)) as AppError;
    expect(err).toMatchObject({ kind: 'InvalidArgument', fieldErrors: [{ field: 'dimensions' }] });
    expect(recorded).toEqual([]);
  });

  it('when a decoder is asked for embeddings, then it is not servable for them', async () => {
    const { deps } = fakes(job({ baseModel: 'whetstone-decoder-base' }));
    const err = (await embed(deps, call()).catch((e: unknown) => e)) as AppError;
    expect(err).toMatchObject({ kind: 'FailedPrecondition', reason: Reasons.MODEL_NOT_SERVABLE });
    expect(err.message).toMatch(/embeddings come from extraction models/);
  });
});

describe('createDeployment', () => {
  it('when warming fails with an unknown error, then the stored reason is the stable public message, not the raw text', async () => {
    const { deps, failed } = fakes(job(), {
      warm: async () => {
        throw new Error('ECONNRESET 10.0.0.7:50055 secret-ish detail');
      },
    });
    const warmer = new DeploymentWarmer(deps);
    const row = await createDeployment(deps, warmer, TEAM, PROJECT, JOB);
    expect(row.status).toBe('deploying');
    while (warmer.inFlight) await new Promise((r) => setTimeout(r, 1));
    expect(failed).toHaveLength(1);
    expect(failed[0]!.reason).not.toContain('ECONNRESET');
    expect(failed[0]!.reason).toBe('An internal error occurred; it has been logged.');
  });

  it('when the job is not complete, then nothing is deployed', async () => {
    const { deps, rows } = fakes(job({ servable: false, bundle: null, statusLabel: 'failed' }));
    await expect(createDeployment(deps, new DeploymentWarmer(deps), TEAM, PROJECT, JOB)).rejects.toMatchObject({
      reason: 'JOB_NOT_COMPLETE',
    });
    expect(rows).toHaveLength(0);
  });
});
