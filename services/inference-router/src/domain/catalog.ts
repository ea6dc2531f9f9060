/**
 * The model catalog: built-in base models, plus entries an operator points at
 * an OpenAI- or Anthropic-compatible upstream. Prices are integer micro-credits
 * (1 credit = $0.01 = 1,000,000 micro-credits).
 */

import { BUILTIN_MODELS, type Bounds, type CatalogEntry, type Price } from '@whetstone/catalog';

export { BUILTIN_MODELS, type Bounds, type CatalogEntry, type Price };

const NO_TRAINING: Bounds = { default: 0, min: 0, max: 0 };

/** Operator-configured upstream entries (CATALOG_UPSTREAMS, a JSON list). */
export interface UpstreamSpec {
  id: string;
  provider: 'openai' | 'anthropic';
  base_url: string;
  model?: string;
  api_key_env?: string;
  description?: string;
  price?: { per_request?: number; per_1k_input_tokens?: number; per_1k_output_tokens?: number };
}

export function upstreamEntry(spec: UpstreamSpec): CatalogEntry {
  return {
    id: spec.id,
    name: spec.id,
    task: 'decoder',
    provider: spec.provider,
    description: spec.description ?? `${spec.provider}-compatible upstream at ${new URL(spec.base_url).host}`,
    supportsInference: true,
    supportsOnDemandInference: true,
    supportsTraining: false,
    trainingTypes: [],
    nrEpochs: NO_TRAINING,
    learningRate: NO_TRAINING,
    price: {
      perRequest: BigInt(spec.price?.per_request ?? 0),
      per1kInputTokens: BigInt(spec.price?.per_1k_input_tokens ?? 0),
      per1kOutputTokens: BigInt(spec.price?.per_1k_output_tokens ?? 0),
    },
    upstream: {
      baseUrl: spec.base_url,
      model: spec.model ?? spec.id,
      ...(spec.api_key_env ? { apiKeyEnv: spec.api_key_env } : {}),
    },
  };
}

/** Cost of one call: per request plus per started 1,000 tokens, never negative. */
export function priceOf(price: Price, inputTokens: number, outputTokens = 0): bigint {
  const per1k = (rate: bigint, tokens: number) => (rate * BigInt(Math.max(0, tokens)) + 999n) / 1000n;
  return price.perRequest + per1k(price.per1kInputTokens, inputTokens) + per1k(price.per1kOutputTokens, outputTokens);
}

export class Catalog {
  private readonly byId: Map<string, CatalogEntry>;

  constructor(readonly entries: CatalogEntry[]) {
    this.byId = new Map(entries.map((e) => [e.id, e]));
  }

  get(id: string): CatalogEntry | undefined {
    return this.byId.get(id);
  }

  /** A trained job's base entry (its price and task); the first built-in when the id is unknown. */
  baseOf(id: string | undefined): CatalogEntry {
    return (id ? this.byId.get(id) : undefined) ?? this.entries[0]!;
  }
}

/** The operator's restriction list: `team:model` or `*:model` pairs (RESTRICTED_MODELS). */
export class Restrictions {
  private readonly pairs: Set<string>;

  constructor(spec: string) {
    this.pairs = new Set(
      spec
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
  }

  restricted(teamId: string, modelId: string): boolean {
    return this.pairs.has(`*:${modelId}`) || this.pairs.has(`${teamId}:${modelId}`);
  }
}
