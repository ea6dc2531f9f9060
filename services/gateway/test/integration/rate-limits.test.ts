import { createRpcClient } from '@whetstone/rpc';
import { InferenceRouterService } from '@whetstone/proto/inference/v1';
import { inferenceOverRpc } from '../../src/adapters/inference.client';
import { createKey, signUp, startGateway, startKeyBilling, type Gateway, type GatewayOptions } from './harness';

type KB = Awaited<ReturnType<typeof startKeyBilling>>;

describe('rate limits and revocation across two gateway replicas sharing Redis', () => {
  let kb: KB;
  let a: Gateway;
  let b: Gateway;
  const prefix = `rl-it:${Date.now()}:`;

  beforeAll(async () => {
    kb = await startKeyBilling();
    const rateLimits = { trainingJobsPerMinute: 3 };
    // Stands in for the training route (a later service): same chain, a trivial handler.
    const extraRoutes: GatewayOptions['extraRoutes'] = (app, _api, chain) => {
      app.post('/core/training-jobs', ...chain('key'), (_req, res) => void res.status(202).json({ accepted: true }));
    };
    a = await startGateway(kb, { redis: true, redisPrefix: prefix, rateLimits, extraRoutes });
    b = await startGateway(kb, { redis: true, redisPrefix: prefix, rateLimits, extraRoutes });
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await kb?.close();
  });

  it('when the per-user training-jobs limit is exceeded, then 429 carries Retry-After, scope and code headers and body', async () => {
    const user = await signUp(a.url);
    const key = await createKey(a.url, user);
    const post = (gw: Gateway) =>
      fetch(`${gw.url}/core/training-jobs`, {
        method: 'POST',
        headers: { 'x-api-key': key.secret_key, 'content-type': 'application/json' },
        body: '{}',
      });
    const first = await Promise.all([post(a), post(b), post(a)]);
    expect(first.map((r) => r.status)).toEqual([202, 202, 202]);
    const limited = await post(b);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('x-ratelimit-scope')).toBe('team');
    expect(limited.headers.get('x-ratelimit-code')).toBe('training_jobs_rate_limit');
    expect(await limited.json()).toEqual({
      detail: expect.stringContaining('Rate limit exceeded'),
      code: 'training_jobs_rate_limit',
      scope: 'team',
    });
  });

  it('when a cached key calls a route with its own limit, then the edge limit still counts every request', async () => {
    // The edge counter of a warm call is consumed with the endpoint's, after authentication (one Redis call).
    const edge = await startGateway(kb, {
      redis: true,
      redisPrefix: `rl-edge:${Date.now()}:`,
      rateLimits: { edgePerMinute: 3, trainingJobsPerMinute: 100 },
      extraRoutes: (app, _api, chain) => {
        app.post('/core/training-jobs', ...chain('key'), (_req, res) => void res.status(202).json({ accepted: true }));
      },
    });
    try {
      const user = await signUp(a.url);
      const key = await createKey(a.url, user);
      const post = () =>
        fetch(`${edge.url}/core/training-jobs`, {
          method: 'POST',
          headers: { 'x-api-key': key.secret_key, 'content-type': 'application/json' },
          body: '{}',
        });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await post()).status);
      expect(statuses).toEqual([202, 202, 202, 429]);
      const limited = await post();
      expect(limited.headers.get('x-ratelimit-scope')).toBe('edge');
    } finally {
      await edge.close();
    }
  });

  it('when log-ins for one email from one IP pass the limit on either replica, then 429 with Retry-After, before the password is checked', async () => {
    const user = await signUp(a.url);
    const login = (gw: Gateway, password: string, email = user.email) =>
      fetch(`${gw.url}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
    // Default budget: 10 attempts per email and IP per 15 minutes, counted in the shared Redis.
    const tries = [];
    for (let i = 0; i < 10; i++) tries.push((await login(i % 2 ? a : b, `guess-${i}`)).status);
    expect(tries).toEqual(Array(10).fill(401));
    const limited = await login(a, 'correct horse battery');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await limited.json()).toEqual({
      detail: expect.stringContaining('Too many log-in attempts'),
      code: 'login_rate_limit',
      scope: 'ip',
    });
    expect((await login(b, 'correct horse battery')).status).toBe(429);
    // Another account from the same IP is not locked out by this one's guesses.
    const other = await signUp(a.url);
    expect((await login(a, 'correct horse battery', other.email)).status).toBe(200);
  });

  it('when a key is revoked through one replica, then the other replica refuses it on the next request', async () => {
    const user = await signUp(a.url);
    const key = await createKey(a.url, user);
    // Warm both replicas' auth caches.
    expect((await fetch(`${a.url}/list-api-keys`, { headers: { 'x-api-key': key.secret_key } })).status).toBe(200);
    expect((await fetch(`${b.url}/list-api-keys`, { headers: { 'x-api-key': key.secret_key } })).status).toBe(200);
    const del = await fetch(`${a.url}/delete-api-key`, {
      method: 'DELETE',
      headers: { 'x-api-key': key.secret_key, 'content-type': 'application/json' },
      body: JSON.stringify({ key_id: key.id }),
    });
    expect(del.status).toBe(200);
    // Pub/sub delivery is asynchronous; poll briefly rather than sleep a fixed time.
    let status = 0;
    for (let i = 0; i < 50; i++) {
      status = (await fetch(`${b.url}/list-api-keys`, { headers: { 'x-api-key': key.secret_key } })).status;
      if (status === 401) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(401);
  });

  it('when 2,000 concurrent requests hit a 1,000/min per-IP limit across two replicas, then 1,000 ±1% succeed', async () => {
    // Fresh replicas and counters, and a frozen clock so no window boundary falls inside the burst.
    const frozen = Date.UTC(2026, 0, 1, 12, 0, 30);
    const burstPrefix = `rl-burst:${Date.now()}:`;
    const c = await startGateway(kb, {
      redis: true,
      redisPrefix: burstPrefix,
      rateLimits: { ipPerMinute: 1_000 },
      now: () => frozen,
    });
    const d = await startGateway(kb, {
      redis: true,
      redisPrefix: burstPrefix,
      rateLimits: { ipPerMinute: 1_000 },
      now: () => frozen,
    });
    const statuses: number[] = [];
    // Unknown routes pass through the per-IP default limit, so they count and cost nothing else.
    const fire = (gw: Gateway) => fetch(`${gw.url}/limited-probe`).then((r) => statuses.push(r.status));
    const batch: Promise<unknown>[] = [];
    for (let i = 0; i < 2_000; i++) batch.push(fire(i % 2 === 0 ? c : d));
    await Promise.all(batch);
    await c.close();
    await d.close();
    const admitted = statuses.filter((s) => s === 404).length;
    const limited = statuses.filter((s) => s === 429).length;
    expect(admitted + limited).toBe(2_000);
    expect(Math.abs(admitted - 1_000)).toBeLessThanOrEqual(10);
  }, 60_000);
});

describe('rate limits count only requests the server did not fail', () => {
  let kb: KB;
  const gateways: Gateway[] = [];

  beforeAll(async () => {
    kb = await startKeyBilling();
  }, 60_000);

  afterAll(async () => {
    for (const gw of gateways) await gw.close();
    await kb?.close();
  });

  // A real gRPC client of an inference-router that is not listening: every call fails fast with 503.
  const unreachableRouter = () =>
    inferenceOverRpc(
      createRpcClient(InferenceRouterService, { addr: '127.0.0.1:1', caller: 'gateway' }),
      async () => false,
    );

  it.each([
    ['Redis', true],
    ['in-process counters', false],
  ])(
    'when the router is down, then its 503s give the budget back (%s): no 429 for the server’s fault',
    async (_name, redis) => {
      const gw = await startGateway(kb, {
        redis,
        redisPrefix: `rl-refund:${Date.now()}:`,
        rateLimits: { inferencePerMinute: 3 },
        inference: unreachableRouter(),
      });
      gateways.push(gw);
      const user = await signUp(gw.url);
      const key = await createKey(gw.url, user);
      const infer = () =>
        fetch(`${gw.url}/inference`, {
          method: 'POST',
          headers: { 'x-api-key': key.secret_key, 'content-type': 'application/json' },
          body: JSON.stringify({
            model_id: 'whetstone-extract-base',
            text: 'Ada lived in London.',
            schema: { entities: ['person'] },
          }),
        });
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        const res = await infer();
        statuses.push(res.status);
        await res.text();
        // The budget is given back when the response has finished; let that land before the next call.
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(statuses).toEqual(Array(8).fill(503));

      // A client mistake still counts: 3 of them use the budget up, and the 4th request is refused.
      const bad = () =>
        fetch(`${gw.url}/inference`, {
          method: 'POST',
          headers: { 'x-api-key': key.secret_key, 'content-type': 'application/json' },
          body: '{}',
        });
      const mistakes = [];
      for (let i = 0; i < 4; i++) mistakes.push((await bad()).status);
      expect(mistakes).toEqual([422, 422, 422, 429]);
    },
  );
});
