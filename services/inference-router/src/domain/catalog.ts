/**
 * The model catalog: built-in base models, plus entries an operator points at
 * an OpenAI- or Anthropic-compatible upstream. Prices are integer micro-credits
 * (1 credit = $0.01 = 1,000,000 micro-credits).
 */

import {
  BUILTIN_MODELS,
  CACHE_MULTIPLIERS,
  type Bounds,
  type CacheFamily,
  type CatalogEntry,
  type Price,
} from '@whetstone/catalog';
import type { TokenUsage } from './chat';

export { BUILTIN_MODELS, CACHE_MULTIPLIERS, type Bounds, type CacheFamily, type CatalogEntry, type Price };

const NO_TRAINING: Bounds = { default: 0, min: 0, max: 0 };

/** An operator-configured upstream model (CATALOG_UPSTREAMS), prices already in micro-credits per 1,000 tokens. */
export interface UpstreamModelSpec {
  /** The catalog id callers use. */
  id: string;
  /** The model's name at the provider. */
  upstreamModel: string;
  /** What it answers: the chat surfaces (`chat`, the default when unset), or /v1/embeddings. */
  task?: 'chat' | 'embedding';
  description?: string;
  family: CacheFamily;
  minCacheableTokens: number;
  defaultMaxTokens: number;
  price: {
    perRequest: bigint;
    per1kInput: bigint;
    per1kOutput: bigint;
    /** Unset: the input rate times the family's read multiplier. */
    per1kCacheRead?: bigint;
    /** Unset: the input rate times the family's write multiplier. */
    per1kCacheWrite?: bigint;
  };
}

/** An operator-configured provider: what the catalog knows of it (its URL and key stay with the adapters). */
export interface UpstreamProviderSpec {
  name: string;
  kind: 'openai' | 'anthropic';
  /** Host of the base URL, for descriptions. */
  host: string;
  models: UpstreamModelSpec[];
}

/** `rate × multiplier`, rounded to the nearest micro-credit (multipliers have one or two decimals). */
const scaled = (rate: bigint, multiplier: number): bigint => (rate * BigInt(Math.round(multiplier * 100)) + 50n) / 100n;

/** A catalog entry for one upstream model; cache prices default to the family's multipliers of the input rate. */
export function upstreamEntry(provider: UpstreamProviderSpec, model: UpstreamModelSpec): CatalogEntry {
  const multipliers = CACHE_MULTIPLIERS[model.family];
  return {
    id: model.id,
    name: model.id,
    task: model.task === 'embedding' ? 'embedding' : 'decoder',
    provider: provider.kind,
    description: model.description ?? `${model.upstreamModel} from ${provider.name} (${provider.host})`,
    supportsInference: true,
    supportsOnDemandInference: true,
    supportsTraining: false,
    trainingTypes: [],
    nrEpochs: NO_TRAINING,
    learningRate: NO_TRAINING,
    price: {
      perRequest: model.price.perRequest,
      per1kInputTokens: model.price.per1kInput,
      per1kOutputTokens: model.price.per1kOutput,
      per1kCacheReadTokens: model.price.per1kCacheRead ?? scaled(model.price.per1kInput, multipliers.read),
      per1kCacheWriteTokens: model.price.per1kCacheWrite ?? scaled(model.price.per1kInput, multipliers.write),
    },
    upstream: {
      provider: provider.name,
      model: model.upstreamModel,
      minCacheableTokens: model.minCacheableTokens,
      defaultMaxTokens: model.defaultMaxTokens,
      family: model.family,
    },
  };
}

/**
 * Cost of one call: the fixed charge plus, per token class, every started
 * 1,000 tokens at that class's rate; never negative.
 */
export function priceOf(price: Price, usage: Partial<TokenUsage>): bigint {
  const per1k = (rate: bigint, tokens = 0) => (rate * BigInt(Math.max(0, tokens)) + 999n) / 1000n;
  return (
    price.perRequest +
    per1k(price.per1kInputTokens, usage.inputTokens) +
    per1k(price.per1kCacheReadTokens, usage.cacheReadTokens) +
    per1k(price.per1kCacheWriteTokens, usage.cacheWriteTokens) +
    per1k(price.per1kOutputTokens, usage.outputTokens)
  );
}

/** A cost at `percent` of itself (a batched call's price), to the nearest micro-credit; 100 leaves it as it is. */
export function atPercent(cost: bigint, percent = 100): bigint {
  if (percent === 100) return cost;
  return (cost * BigInt(Math.round(percent * 100)) + 5_000n) / 10_000n;
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
