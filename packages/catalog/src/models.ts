/**
 * The built-in base models: what they do, how they train and what they cost.
 * One table, read by the router's catalog and the orchestrator's validation.
 * Prices are integer micro-credits (1 credit = $0.01 = 1,000,000 micro-credits).
 */

/** Rates per started 1,000 tokens of each class, plus a fixed charge per call, in micro-credits. */
export interface Price {
  perRequest: bigint;
  /** Input tokens neither read from nor written to a prompt cache. */
  per1kInputTokens: bigint;
  per1kOutputTokens: bigint;
  /** Input tokens served from a prompt cache. */
  per1kCacheReadTokens: bigint;
  /** Input tokens written to a prompt cache. */
  per1kCacheWriteTokens: bigint;
}

/**
 * How a model family prices its prompt cache relative to its input rate, when
 * the operator gives no explicit cache prices (spec, "Other constants").
 */
export const CACHE_MULTIPLIERS = {
  /** Claude-style: explicit markers; reads at 0.1×, writes at 1.25×. */
  claude: { read: 0.1, write: 1.25 },
  /** GPT-4-style: automatic caching; reads at 0.5×, writes at the input rate. */
  'gpt-4': { read: 0.5, write: 1 },
  /** GPT-5-style: automatic caching; reads at 0.1×, writes at the input rate. */
  'gpt-5': { read: 0.1, write: 1 },
} as const;
export type CacheFamily = keyof typeof CACHE_MULTIPLIERS;

/** An operator-configured upstream model: which provider serves it, under which name. */
export interface UpstreamModelRef {
  /** The operator's name of the provider (CATALOG_UPSTREAMS); the router's adapters hold its URL and key. */
  provider: string;
  /** The model's name at the provider. */
  model: string;
  /** Prompts shorter than this (in the provider's tokens) are not cached by the provider. */
  minCacheableTokens: number;
  /** Output tokens asked for when the call sets no limit (the Messages API requires one). */
  defaultMaxTokens: number;
  /** The model family, which decides request details (GPT-5-style models take max_completion_tokens). */
  family: CacheFamily;
}

export interface Bounds {
  default: number;
  min: number;
  max: number;
}

export interface CatalogEntry {
  id: string;
  name: string;
  /** `embedding`: an operator's upstream embedding model, called through /v1/embeddings only. */
  task: 'extraction' | 'decoder' | 'embedding';
  provider: 'builtin' | 'openai' | 'anthropic';
  description: string;
  supportsInference: boolean;
  supportsOnDemandInference: boolean;
  supportsTraining: boolean;
  trainingTypes: ('lora' | 'full')[];
  nrEpochs: Bounds;
  learningRate: Bounds;
  price: Price;
  /** Upstream entries only: the provider and model name that serve it. */
  upstream?: UpstreamModelRef;
}

export const BUILTIN_MODELS: CatalogEntry[] = [
  {
    id: 'whetstone-extract-base',
    name: 'Whetstone Extract Base',
    task: 'extraction',
    provider: 'builtin',
    description:
      'Zero-shot extraction for label names given at request time (entities, classifications, relations, structures); fine-tunes a transformer entity encoder with label-name heads and n-gram classifiers, with LoRA or fully.',
    supportsInference: true,
    supportsOnDemandInference: true,
    supportsTraining: true,
    trainingTypes: ['lora', 'full'],
    nrEpochs: { default: 6, min: 1, max: 50 },
    // AdamW's peak rate for the entity encoder; classification's AdaGrad step is 15× it (250× multi-label).
    learningRate: { default: 0.002, min: 0.00001, max: 0.1 },
    // 0.001 credits per call plus 0.0001 credits per 1,000 input tokens.
    price: {
      perRequest: 1_000n,
      per1kInputTokens: 100n,
      per1kOutputTokens: 0n,
      per1kCacheReadTokens: 0n,
      per1kCacheWriteTokens: 0n,
    },
  },
  {
    id: 'whetstone-decoder-base',
    name: 'Whetstone Decoder Base',
    task: 'decoder',
    provider: 'builtin',
    description:
      'A byte-level 3-layer transformer (670k parameters) pretrained on WordNet glosses; fine-tunes with LoRA only on chat rows, and serves the fine-tuned job through /inference with task "generate".',
    supportsInference: false,
    supportsOnDemandInference: false,
    supportsTraining: true,
    trainingTypes: ['lora'],
    nrEpochs: { default: 3, min: 1, max: 20 },
    learningRate: { default: 0.001, min: 0.00001, max: 0.1 },
    // Its prefix cache (the decoder's attention state) is priced Claude-style: reads 0.1×, writes 1.25× input.
    price: {
      perRequest: 1_000n,
      per1kInputTokens: 200n,
      per1kOutputTokens: 400n,
      per1kCacheReadTokens: 20n,
      per1kCacheWriteTokens: 250n,
    },
  },
];

/** Training is metered per example-epoch (10 micro-credits: 0.00001 credits). */
export const TRAINING_PRICE_PER_EXAMPLE_EPOCH = 10n;
