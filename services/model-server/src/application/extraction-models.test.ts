import { errors } from '@whetstone/errors';
import { extractBaseModel } from '@whetstone/ml';
import { ExtractionModels } from './extraction-models';
import type { BundleSource } from './ports';

const logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return this;
  },
} as never;
const ref = { modelId: 'job-1', bucket: 'artifacts', key: 'jobs/1' };

function models(bundles: BundleSource, fromBundle = () => extractBaseModel) {
  return new ExtractionModels({
    bundles,
    loader: { builtin: () => undefined, fromBundle, decoder: () => undefined as never },
    logger,
    budgetBytes: 1 << 20,
  });
}

describe('ExtractionModels', () => {
  it('when a bundle is being read, then the model answers MODEL_WARMING with a retry hint, then serves', async () => {
    const m = models({ read: async () => new Uint8Array(8) });
    expect(() => m.ready(ref)).toThrow(expect.objectContaining({ reason: 'MODEL_WARMING', retryAfterSeconds: 2 }));
    await m.settled(ref.modelId);
    expect(m.ready(ref)).toBe(extractBaseModel);
  });

  it('when a bundle cannot be parsed, then the stored reason is a stable sentence, never the parser text', async () => {
    const m = models({ read: async () => new Uint8Array(8) }, () => {
      throw new SyntaxError('Unexpected token n in JSON at position 0');
    });
    m.load(ref);
    await m.settled(ref.modelId);
    expect(m.state(ref.modelId)).toEqual({ status: 'failed', reason: 'could not load the model bundle' });
  });

  it('when the failure is one of ours, then its message is the reason', async () => {
    const m = models({
      read: async () => {
        throw errors.notFound('BLOB_NOT_FOUND', 'The model bundle is missing.');
      },
    });
    m.load(ref);
    await m.settled(ref.modelId);
    expect(m.state(ref.modelId).reason).toBe('The model bundle is missing.');
  });
});
