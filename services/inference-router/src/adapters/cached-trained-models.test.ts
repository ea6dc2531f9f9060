import type { TrainedModels } from '../application/ports';
import type { TrainedModel } from '../domain/trained-model';
import { cachedTrainedModels } from './cached-trained-models';

const job = (over: Partial<TrainedModel> = {}): TrainedModel => ({
  jobId: 'j1',
  teamId: 't1',
  servable: true,
  statusLabel: 'complete',
  baseModel: 'whetstone-extract-base',
  modelName: 'm',
  bundle: { bucket: 'b', key: 'k' },
  completedAt: new Date(0),
  updatedAt: new Date(0),
  ...over,
});

function counting(model: TrainedModel | null) {
  const calls = { get: 0 };
  const inner: TrainedModels = {
    get: async () => (calls.get++, model),
    listServable: async () => [],
    upsert: async () => true,
    markDeleted: async () => undefined,
  };
  return { inner, calls };
}

describe('cachedTrainedModels', () => {
  it('when a servable job is read twice within the TTL, then the read model is asked once', async () => {
    let clock = 0;
    const { inner, calls } = counting(job());
    const cached = cachedTrainedModels(inner, 1000, () => clock);
    await cached.get('t1', 'j1');
    await cached.get('t1', 'j1');
    expect(calls.get).toBe(1);
    clock = 1001;
    await cached.get('t1', 'j1');
    expect(calls.get).toBe(2);
  });

  it('when another team asks for a cached job, then it gets nothing', async () => {
    const cached = cachedTrainedModels(counting(job()).inner, 1000);
    await cached.get('t1', 'j1');
    expect(await cached.get('t2', 'j1')).toBeNull();
  });

  it('when a job is not servable, then it is never cached', async () => {
    const { inner, calls } = counting(job({ servable: false, bundle: null, statusLabel: 'running' }));
    const cached = cachedTrainedModels(inner, 1000);
    await cached.get('t1', 'j1');
    await cached.get('t1', 'j1');
    expect(calls.get).toBe(2);
  });

  it('when a read that began before a deletion ends after it, then the deleted job is not cached again', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const calls = { get: 0 };
    const inner: TrainedModels = {
      // The first read returns the row as it was before the deletion committed, after the deletion ran.
      get: async () => (calls.get++ === 0 ? (await gate, job()) : null),
      listServable: async () => [],
      upsert: async () => true,
      markDeleted: async () => undefined,
    };
    const cached = cachedTrainedModels(inner, 60_000);
    const inFlight = cached.get('t1', 'j1');
    await cached.markDeleted('j1', 't1', new Date());
    release();
    await inFlight;
    expect(await cached.get('t1', 'j1')).toBeNull();
    expect(calls.get).toBe(2);
  });

  it('when a job is deleted through this replica, then the next read asks the read model', async () => {
    const { inner, calls } = counting(job());
    const cached = cachedTrainedModels(inner, 60_000);
    await cached.get('t1', 'j1');
    await cached.markDeleted('j1', 't1', new Date());
    await cached.get('t1', 'j1');
    expect(calls.get).toBe(2);
  });
});
