import { upstreamProvidersOf } from './upstream-config';

const provider = (over: Record<string, unknown> = {}) => ({
  name: 'anthropic',
  kind: 'anthropic',
  base_url: 'https://api.example.com/v1',
  api_key_env: 'ANTHROPIC_API_KEY',
  models: [{ id: 'claude-s', upstream_model: 'claude-s-2025', price: { input: 300, output: 1500 } }],
  ...over,
});
const parse = (value: unknown, env: Record<string, string> = { ANTHROPIC_API_KEY: 'sk-x' }, allow: string[] = []) =>
  upstreamProvidersOf(JSON.stringify(value), (name) => env[name], allow);

describe('CATALOG_UPSTREAMS', () => {
  it('when a provider is valid, then prices per 1M credits become micro-credits per 1k, the key is read, and family defaults apply', () => {
    const { providers, problems } = parse([provider()]);
    expect(problems).toEqual([]);
    expect(providers[0]).toMatchObject({
      name: 'anthropic',
      kind: 'anthropic',
      baseUrl: 'https://api.example.com',
      apiKey: 'sk-x',
      models: [
        {
          id: 'claude-s',
          upstreamModel: 'claude-s-2025',
          family: 'claude',
          minCacheableTokens: 1024,
          defaultMaxTokens: 4096,
          price: { perRequest: 0n, per1kInput: 300_000n, per1kOutput: 1_500_000n },
        },
      ],
    });
    const perK = parse([
      provider({ models: [{ id: 'k', price: { unit: '1k', input: 0.3, output: 1.5, cache_read: 0.03 } }] }),
    ]);
    expect(perK.providers[0]?.models[0]?.price).toEqual({
      perRequest: 0n,
      per1kInput: 300_000n,
      per1kOutput: 1_500_000n,
      per1kCacheRead: 30_000n,
    });
  });

  it('when a model is an embedding model, then it needs no output price, and only an OpenAI-compatible provider may serve one', () => {
    const embedder = { id: 'embed-s', task: 'embedding', price: { input: 2 } };
    const openai = parse([provider({ name: 'oai', kind: 'openai-compatible', models: [embedder] })]);
    expect(openai.problems).toEqual([]);
    expect(openai.providers[0]?.models[0]).toMatchObject({ task: 'embedding', price: { per1kOutput: 0n } });
    expect(parse([provider({ models: [embedder] })]).problems).toEqual([
      'CATALOG_UPSTREAMS: model embed-s: provider anthropic is a Messages-API provider, which has no embeddings; task embedding needs kind openai-compatible',
    ]);
    expect(parse([provider({ models: [{ id: 'chat-s', price: { input: 1 } }] })]).problems).toEqual([
      'CATALOG_UPSTREAMS: model chat-s: price.output is required for chat models',
    ]);
  });

  it('when entries are wrong, then every problem is listed, the key variable by name and never its value', () => {
    const { problems } = parse(
      [
        provider({ api_key_env: 'MISSING_KEY' }),
        provider({
          name: 'local',
          kind: 'openai-compatible',
          base_url: 'http://10.0.0.5:8000',
          api_key_env: undefined,
        }),
        provider({ name: 'Bad Name', models: [] }),
      ],
      {},
    );
    expect(problems).toEqual([
      expect.stringContaining('CATALOG_UPSTREAMS.2.name'),
      expect.stringContaining('CATALOG_UPSTREAMS.2.models'),
    ]);
    const later = parse(
      [provider({ api_key_env: 'MISSING_KEY' }), provider({ name: 'local', base_url: 'http://10.0.0.5:8000' })],
      {
        ANTHROPIC_API_KEY: 'sk-x',
      },
    );
    expect(later.problems).toEqual([
      'MISSING_KEY: not set (the API key of provider anthropic)',
      expect.stringContaining('UPSTREAM_ALLOW_PRIVATE_HOSTS'),
      expect.stringContaining('claude-s is listed twice'),
    ]);
    expect(
      parse([provider({ base_url: 'http://10.0.0.5:8000' })], { ANTHROPIC_API_KEY: 'k' }, ['10.0.0.5']).problems,
    ).toEqual([]);
    expect(parse('not a list' as never).problems).toHaveLength(1);
  });
});
