/**
 * CATALOG_UPSTREAMS: the operator's upstream providers and the models each one
 * serves, validated at boot with every problem listed at once. Prices are in
 * credits (1 credit = $0.01) per 1M or per 1K tokens and become integer
 * micro-credits per 1,000 tokens; API keys are read from the variables the
 * entries name (a Kubernetes secret in the chart), never from the JSON itself.
 */
import { isIP } from 'node:net';
import { isNonPublicAddress, z } from '@whetstone/config';
import { BUILTIN_MODELS, CACHE_MULTIPLIERS, MICRO_PER_CREDIT } from '@whetstone/catalog';
import type { CacheFamily } from './domain/catalog';
import type { UpstreamModelSpec, UpstreamProviderSpec } from './domain/catalog';

const credits = z.number().min(0).max(1_000_000);

const modelSchema = z.object({
  /** The catalog id callers use. */
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/, 'must be 1-128 letters, digits or ._:/-'),
  /** The model's name at the provider; defaults to the id. */
  upstream_model: z.string().min(1).optional(),
  description: z.string().max(300).optional(),
  /** `chat` (default) answers the compatible chat surfaces; `embedding` answers /v1/embeddings (openai-compatible only). */
  task: z.enum(['chat', 'embedding']).default('chat'),
  /** Cache pricing family; defaults to claude for anthropic providers, gpt-4 for openai-compatible ones. */
  family: z.enum(Object.keys(CACHE_MULTIPLIERS) as [CacheFamily, ...CacheFamily[]]).optional(),
  min_cacheable_tokens: z.number().int().min(0).default(1024),
  default_max_tokens: z.number().int().positive().default(4096),
  price: z.object({
    /** What the token prices are per: 1M tokens (the providers' convention) or 1K tokens. */
    unit: z.enum(['1m', '1k']).default('1m'),
    input: credits,
    /** Required for chat models; an embedding model has no output tokens (0). */
    output: credits.optional(),
    cache_read: credits.optional(),
    cache_write: credits.optional(),
    per_request: credits.default(0),
  }),
});

const providerSchema = z.object({
  /** The operator's name for the provider; /v1/models shows it as owned_by. */
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be lower-case letters, digits and -'),
  kind: z.enum(['openai-compatible', 'anthropic']),
  /** Where the API is: requests go to `<base_url>/v1/chat/completions` or `<base_url>/v1/messages`. */
  base_url: z
    .string()
    .url()
    .refine((u) => /^https?:$/.test(new URL(u).protocol), 'must be http(s)'),
  /** The variable that holds the API key (empty: none is sent, e.g. a keyless vLLM inside the cluster). */
  api_key_env: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an UPPER_SNAKE variable name')
    .optional(),
  models: z.array(modelSchema).min(1),
});

/** A provider as the adapters need it: its catalog view plus where to send requests and with which key. */
export interface UpstreamProviderConfig extends UpstreamProviderSpec {
  baseUrl: string;
  /** Empty when the provider needs none. Never logged. */
  apiKey: string;
}

/** Credits per unit as micro-credits per 1,000 tokens. */
function per1k(value: number, unit: '1m' | '1k'): bigint {
  const micro = value * Number(MICRO_PER_CREDIT);
  return BigInt(Math.round(unit === '1m' ? micro / 1000 : micro));
}

function modelOf(m: z.infer<typeof modelSchema>, kind: UpstreamProviderSpec['kind']): UpstreamModelSpec {
  const { unit } = m.price;
  return {
    id: m.id,
    upstreamModel: m.upstream_model ?? m.id,
    task: m.task,
    ...(m.description ? { description: m.description } : {}),
    family: m.family ?? (kind === 'anthropic' ? 'claude' : 'gpt-4'),
    minCacheableTokens: m.min_cacheable_tokens,
    defaultMaxTokens: m.default_max_tokens,
    price: {
      perRequest: per1k(m.price.per_request, '1k'),
      per1kInput: per1k(m.price.input, unit),
      per1kOutput: per1k(m.price.output ?? 0, unit),
      ...(m.price.cache_read === undefined ? {} : { per1kCacheRead: per1k(m.price.cache_read, unit) }),
      ...(m.price.cache_write === undefined ? {} : { per1kCacheWrite: per1k(m.price.cache_write, unit) }),
    },
  };
}

/** Whether the operator allows this host to be a private, loopback or link-local address. */
export function privateHostAllowed(host: string, allowList: string[]): boolean {
  return allowList.includes('*') || allowList.includes(host.toLowerCase());
}

/** A literal address or `localhost` that is not public is refused at boot unless allowed; names are checked per call. */
function literalHostProblem(name: string, url: string, allowList: string[]): string | null {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host) ? isNonPublicAddress(host) : host === 'localhost' || host.endsWith('.localhost');
  if (!literal || privateHostAllowed(host, allowList)) return null;
  return `CATALOG_UPSTREAMS: provider ${name}: ${host} is a loopback, private or link-local address; allow it with UPSTREAM_ALLOW_PRIVATE_HOSTS`;
}

/** A model's task against its provider's kind and its prices: embeddings are OpenAI's; chat has output tokens. */
function taskProblems(provider: string, kind: UpstreamProviderSpec['kind'], m: z.infer<typeof modelSchema>): string[] {
  if (m.task === 'chat')
    return m.price.output === undefined
      ? [`CATALOG_UPSTREAMS: model ${m.id}: price.output is required for chat models`]
      : [];
  return kind === 'anthropic'
    ? [
        `CATALOG_UPSTREAMS: model ${m.id}: provider ${provider} is a Messages-API provider, which has no embeddings; task embedding needs kind openai-compatible`,
      ]
    : [];
}

/** Parses CATALOG_UPSTREAMS; `problems` lists every invalid field, missing key variable or refused host. */
export function upstreamProvidersOf(
  json: string,
  lookup: (variable: string) => string | undefined,
  allowPrivateHosts: string[],
): { providers: UpstreamProviderConfig[]; problems: string[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return { providers: [], problems: ['CATALOG_UPSTREAMS: must be JSON (a list of providers)'] };
  }
  const result = z.array(providerSchema).safeParse(raw);
  if (!result.success)
    return {
      providers: [],
      problems: result.error.issues.map((i) => `CATALOG_UPSTREAMS.${i.path.join('.')}: ${i.message}`),
    };
  const problems: string[] = [];
  const ids = new Set<string>();
  const providers = result.data.map((p) => {
    const kind = p.kind === 'anthropic' ? ('anthropic' as const) : ('openai' as const);
    const apiKey = p.api_key_env ? (lookup(p.api_key_env) ?? '') : '';
    if (p.api_key_env && !apiKey) problems.push(`${p.api_key_env}: not set (the API key of provider ${p.name})`);
    const hostProblem = literalHostProblem(p.name, p.base_url, allowPrivateHosts);
    if (hostProblem) problems.push(hostProblem);
    for (const m of p.models) {
      if (ids.has(m.id) || BUILTIN_MODELS.some((b) => b.id === m.id))
        problems.push(`CATALOG_UPSTREAMS: model id ${m.id} is listed twice or is a built-in model`);
      ids.add(m.id);
      problems.push(...taskProblems(p.name, kind, m));
    }
    return {
      name: p.name,
      kind,
      host: new URL(p.base_url).host,
      // The API root: a trailing /v1 is tolerated, since providers document their URLs both ways.
      baseUrl: p.base_url.replace(/\/+$/, '').replace(/\/v1$/, ''),
      apiKey,
      models: p.models.map((m) => modelOf(m, kind)),
    };
  });
  return { providers, problems };
}
