import { startGateway, startKeyBilling, type Gateway } from './harness';

type KB = Awaited<ReturnType<typeof startKeyBilling>>;

/** No request may crash the gateway or produce a 5xx; every 4xx says what was wrong. */
describe('hostile and malformed requests', () => {
  let kb: KB;
  let gw: Gateway;

  beforeAll(async () => {
    kb = await startKeyBilling();
    gw = await startGateway(kb);
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    await kb?.close();
  });

  const cases: [string, RequestInit & { path: string }][] = [
    [
      'JSON null body',
      { path: '/auth/signup', method: 'POST', headers: { 'content-type': 'application/json' }, body: 'null' },
    ],
    [
      'JSON array body',
      { path: '/auth/signup', method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1,2]' },
    ],
    [
      'JSON string body',
      { path: '/auth/login', method: 'POST', headers: { 'content-type': 'application/json' }, body: '"hello"' },
    ],
    [
      'form-encoded body',
      {
        path: '/auth/login',
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=a&password=b',
      },
    ],
    ['no body at all', { path: '/auth/signup', method: 'POST' }],
    [
      'malformed percent-encoding in the session cookie',
      { path: '/auth/me', method: 'GET', headers: { cookie: 'wst_session=%E0%A4%A' } },
    ],
    ['empty X-API-Key', { path: '/list-api-keys', method: 'GET', headers: { 'x-api-key': ' ' } }],
    ['Bearer with nothing after it', { path: '/list-api-keys', method: 'GET', headers: { authorization: 'Bearer ' } }],
    [
      'a very long key',
      { path: '/list-api-keys', method: 'GET', headers: { 'x-api-key': `wst_sk_${'a'.repeat(5000)}` } },
    ],
    [
      'key with control-like characters',
      {
        path: '/list-api-keys',
        method: 'GET',
        headers: { 'x-api-key': 'wst_sk_%00%00%00%00%00%00%00%00%00%00%00%00%00%00%00%00' },
      },
    ],
    [
      'delete with a number key_id',
      {
        path: '/delete-api-key',
        method: 'DELETE',
        headers: { 'content-type': 'application/json', 'x-api-key': `wst_sk_${'b'.repeat(40)}` },
        body: '{"key_id": 5}',
      },
    ],
    ['unknown method on a known path', { path: '/list-api-keys', method: 'PATCH' }],
    ['path traversal attempt', { path: '/dashboard/assets/..%2f..%2fpackage.json', method: 'GET' }],
    [
      'deeply nested JSON',
      {
        path: '/auth/login',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `${'['.repeat(5000)}${']'.repeat(5000)}`,
      },
    ],
    ['signed blob URL without a blob store', { path: '/blobs/datasets/x?sig=a', method: 'PUT', body: 'x' }],
  ];

  it.each(cases)('when sent %s, then the answer is a 4xx with a detail', async (_name, { path, ...init }) => {
    const res = await fetch(`${gw.url}${path}`, init);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const body = (await res.json()) as { detail?: unknown };
    expect(typeof body.detail).toBe('string');
  });

  it('when all of that has been sent, then the gateway still serves', async () => {
    expect((await fetch(`${gw.url}/livez`)).status).toBe(200);
  });
});
