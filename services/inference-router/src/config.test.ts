import { ConfigError } from '@whetstone/config';
import { loadRouterConfig } from './config';

const base = { DATABASE_URL: 'postgresql://localhost/test?schema=inference' };
const providers = JSON.stringify([
  {
    name: 'acme',
    kind: 'openai-compatible',
    base_url: 'http://127.0.0.1:8000',
    api_key_env: 'ACME_KEY',
    models: [{ id: 'acme-chat', price: { input: 1, output: 2 } }],
  },
]);

describe('loadRouterConfig', () => {
  it('when providers, their key and the allow-list are set, then the config carries them', () => {
    const config = loadRouterConfig({
      ...base,
      CATALOG_UPSTREAMS: providers,
      ACME_KEY: 'sk-acme',
      UPSTREAM_ALLOW_PRIVATE_HOSTS: '127.0.0.1, Vllm.Local',
    });
    expect(config.allowPrivateHosts).toEqual(['127.0.0.1', 'vllm.local']);
    expect(config.upstreams[0]).toMatchObject({ name: 'acme', kind: 'openai', apiKey: 'sk-acme' });
  });

  it('when the key variable is missing and the loopback host is not allowed, then boot fails naming both', () => {
    let thrown: unknown;
    try {
      loadRouterConfig({ ...base, CATALOG_UPSTREAMS: providers });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).problems).toEqual([
      'ACME_KEY: not set (the API key of provider acme)',
      expect.stringContaining('UPSTREAM_ALLOW_PRIVATE_HOSTS'),
    ]);
  });
});
