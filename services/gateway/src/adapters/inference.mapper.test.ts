import { create } from '@bufbuild/protobuf';
import { BaseModelSchema, ModelProvider, ModelTask } from '@whetstone/proto/inference/v1';
import { baseModelView } from './inference.mapper';

describe('baseModelView', () => {
  it('when an upstream model has cache prices, then /v1/base-models shows them in credits with its minimum cacheable prefix', () => {
    const view = baseModelView(
      create(BaseModelSchema, {
        id: 'claude-sonnet',
        name: 'claude-sonnet',
        task: ModelTask.DECODER,
        provider: ModelProvider.ANTHROPIC,
        supportsInference: true,
        supportsOnDemandInference: true,
        minCacheableTokens: 1024,
        price: {
          per1kInputTokensMicroCredits: 300_000n,
          per1kOutputTokensMicroCredits: 1_500_000n,
          per1kCacheReadTokensMicroCredits: 30_000n,
          per1kCacheWriteTokensMicroCredits: 375_000n,
        },
      }),
    );
    expect(view).toMatchObject({
      id: 'claude-sonnet',
      provider: 'anthropic',
      supports_inference: true,
      supports_on_demand_inference: true,
      supports_training: false,
      min_cacheable_tokens: 1024,
      pricing: {
        per_request_credits: 0,
        per_1k_input_tokens_credits: 0.3,
        per_1k_output_tokens_credits: 1.5,
        per_1k_cache_read_tokens_credits: 0.03,
        per_1k_cache_write_tokens_credits: 0.375,
      },
    });
  });
});
