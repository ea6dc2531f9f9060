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
    ['malformed percent-encoding in a path parameter', { path: '/core/datasets/%ZZ', method: 'GET' }],
    ['a truncated UTF-8 escape in a path', { path: '/projects/%E0%A4%A/deployments', method: 'GET' }],
    ['a NUL byte in a path', { path: '/core/datasets/a%00b', method: 'DELETE' }],
    ['a NUL byte in a query value', { path: '/core/training-jobs?project_id=a%00b', method: 'GET' }],
    [
      'a NUL byte in a JSON string',
      {
        path: '/auth/signup',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"email":"a\\u0000@example.com","password":"correct horse battery"}',
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

  it('when a path segment is malformed, then it is 400 naming the percent-encoding, before any route', async () => {
    const res = await fetch(`${gw.url}/core/datasets/%ZZ`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ detail: expect.stringContaining('malformed percent-encoding') });
  });

  it('when a JSON string holds a NUL, then it is 422 naming the field, in the envelope of the surface', async () => {
    const signup = await fetch(`${gw.url}/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"email":"a@example.com","password":"correct horse\\u0000battery"}',
    });
    expect(signup.status).toBe(422);
    expect(await signup.json()).toMatchObject({ errors: [{ field: 'password', code: 'nul_character' }] });
  });

  it('when the request line is 20 KB, then the answer is 431 in JSON, not an empty body', async () => {
    const res = await fetch(`${gw.url}/core/datasets/${'a'.repeat(20_000)}`);
    expect(res.status).toBe(431);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ detail: expect.stringContaining('exceed') });
  });

  it('when a huge header comes with anthropic-version, then the 431 is Anthropic-shaped', async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01', 'x-filler': 'f'.repeat(20_000) },
    });
    expect(res.status).toBe(431);
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'request_too_large', message: expect.any(String) },
    });
  });

  it('when all of that has been sent, then the gateway still serves', async () => {
    expect((await fetch(`${gw.url}/livez`)).status).toBe(200);
  });
});
