/**
 * The built-in base models: what they do, how they train and what they cost.
 * One table, read by the router's catalog and the orchestrator's validation.
 * Prices are integer micro-credits (1 credit = $0.01 = 1,000,000 micro-credits).
 */

export interface Price {
  perRequest: bigint;
  per1kInputTokens: bigint;
  per1kOutputTokens: bigint;
}

export interface Bounds {
  default: number;
  min: number;
  max: number;
}

export interface CatalogEntry {
  id: string;
  name: string;
  task: 'extraction' | 'decoder';
  provider: 'builtin' | 'openai' | 'anthropic';
  description: string;
  supportsInference: boolean;
  supportsOnDemandInference: boolean;
  supportsTraining: boolean;
  trainingTypes: ('lora' | 'full')[];
  nrEpochs: Bounds;
  learningRate: Bounds;
  price: Price;
  /** Upstream entries only: where requests go and which env var holds the key. */
  upstream?: { baseUrl: string; model: string; apiKeyEnv?: string };
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
    // AdamW's peak rate for the entity encoder; classification's AdaGrad step is 250× it.
    learningRate: { default: 0.002, min: 0.00001, max: 0.1 },
    // 0.001 credits per call plus 0.0001 credits per 1,000 input tokens.
    price: { perRequest: 1_000n, per1kInputTokens: 100n, per1kOutputTokens: 0n },
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
    price: { perRequest: 1_000n, per1kInputTokens: 200n, per1kOutputTokens: 400n },
  },
];

/** Training is metered per example-epoch (10 micro-credits: 0.00001 credits). */
export const TRAINING_PRICE_PER_EXAMPLE_EPOCH = 10n;
