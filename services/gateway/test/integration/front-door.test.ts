import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import { FsBlobStore, createSignedUrlHandler } from '@whetstone/blobs';
import { create } from '@bufbuild/protobuf';
import { UsageRecordedSchema } from '@whetstone/proto/inference/v1';
import { createKey, signUp, startGateway, startKeyBilling, type Gateway } from './harness';
import { requireSpendable } from '../../src/transport/http/spendable';
import { keyBillingOverRpc } from '../../src/adapters/key-billing.client';
import { createRpcClient } from '@whetstone/rpc';
import { KeyBillingService } from '@whetstone/proto/keybilling/v1';
import { InferenceRouterService } from '@whetstone/proto/inference/v1';
import { createHealthChecker } from '@whetstone/rpc';
import { inferenceOverRpc } from '../../src/adapters/inference.client';

type KB = Awaited<ReturnType<typeof startKeyBilling>>;

describe('gateway front door (real key-billing over gRPC, real Postgres)', () => {
  let kb: KB;
  let gw: Gateway;
  let blobRoot: string;

  beforeAll(async () => {
    kb = await startKeyBilling();
    const billing = keyBillingOverRpc(
      createRpcClient(KeyBillingService, { addr: kb.addr, caller: 'gateway-test' }),
      async () => true,
    );
    blobRoot = mkdtempSync(path.join(os.tmpdir(), 'gw-blobs-'));
    const blobs = new FsBlobStore({
      root: blobRoot,
      publicBaseUrl: 'http://placeholder',
      signingSecret: 'gateway-test-signing-secret',
    });
    gw = await startGateway(kb, {
      blobHandler: createSignedUrlHandler(blobs),
      extraRoutes: (app: Express, _api, chain) => {
        // A paid route for the test: one credit per call, gated like every paid route will be.
        app.post(
          '/test/paid',
          ...chain('key'),
          requireSpendable(billing, 1_000_000n),
          (_req, res) => void res.json({ ok: true }),
        );
      },
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    await kb?.close();
    rmSync(blobRoot, { recursive: true, force: true });
  });

  it('when a file is PUT to a signed URL through the gateway, then it is stored and a signed GET returns it', async () => {
    const store = new FsBlobStore({
      root: blobRoot,
      publicBaseUrl: gw.url,
      signingSecret: 'gateway-test-signing-secret',
    });
    const put = await store.presignPut('datasets', 'team/x/v1/upload.jsonl', {
      expiresInSeconds: 300,
      maxBytes: 1_000,
    });
    const res = await fetch(put.url, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"text":"a"}\n',
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{"bytes":13}\n');
    const get = await store.presignGet('datasets', 'team/x/v1/upload.jsonl', { expiresInSeconds: 300 });
    expect(await (await fetch(get.url)).text()).toBe('{"text":"a"}\n');
    const tooBig = await fetch(put.url, { method: 'PUT', body: 'x'.repeat(2_000) });
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toEqual({ detail: expect.any(String) });
  });

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${gw.url}${path}`, { headers });

  it('when no key is sent, then 401 {detail} names the header', async () => {
    const res = await get('/list-api-keys');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: expect.stringContaining('X-API-Key') });
  });

  it('when a key has the wrong prefix, then 401 names the required prefix', async () => {
    const res = await get('/list-api-keys', { 'x-api-key': 'sk-abcdefabcdefabcdefabcdefabcdefabcdef' });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: "Invalid API key format: keys must start with 'wst_sk_'." });
  });

  it('when a well-formed but unknown key is sent, then 401 {detail}', async () => {
    const res = await get('/list-api-keys', { 'x-api-key': `wst_sk_${'a'.repeat(40)}` });
    expect(res.status).toBe(401);
    expect(Object.keys((await res.json()) as object)).toEqual(['detail']);
  });

  it('when a user signs up, creates a key and lists keys with it, then the list has usage fields and no secret', async () => {
    const user = await signUp(gw.url);
    const created = await createKey(gw.url, user, 'ci');
    expect(created.secret_key).toMatch(/^wst_sk_[A-Za-z0-9_-]{32,}$/);
    expect(created).toMatchObject({
      name: 'ci',
      team_id: user.teamId,
      payment_customer_created: false,
      api_key_last_digits: created.secret_key.slice(-4),
    });

    const res = await get('/list-api-keys', { 'x-api-key': created.secret_key });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('20000');
    expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeLessThan(20000);
    expect(res.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
    const body = (await res.json()) as { keys: Record<string, unknown>[]; count: number };
    expect(body.count).toBe(1);
    expect(body.keys[0]).toEqual({
      id: created.id,
      name: 'ci',
      created_at: expect.any(String),
      api_key_last_digits: created.secret_key.slice(-4),
      expires_at: null,
      last_used_at: null,
      team_id: user.teamId,
      usage_tokens: 0,
      usage_cost: 0,
      request_count: 0,
    });
    expect(JSON.stringify(body)).not.toContain(created.secret_key);
  });

  it('when Authorization: Bearer carries the key, then it authenticates too', async () => {
    const user = await signUp(gw.url);
    const key = await createKey(gw.url, user);
    const res = await get('/list-api-keys', { authorization: `Bearer ${key.secret_key}` });
    expect(res.status).toBe(200);
  });

  it('when a key is used to create a key, then 403 with the exact message', async () => {
    const user = await signUp(gw.url);
    const key = await createKey(gw.url, user);
    const res = await fetch(`${gw.url}/create-api-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.secret_key },
      body: JSON.stringify({ name: 'nope' }),
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ detail: 'API key creation is only allowed from the web dashboard.' });
  });

  it('when a cookie-authenticated mutation lacks the CSRF token, then 403', async () => {
    const user = await signUp(gw.url);
    const res = await fetch(`${gw.url}/create-api-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: user.cookie },
      body: JSON.stringify({ name: 'csrf' }),
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/CSRF/);
  });

  it('when a key is revoked, then the very next request with it is 401', async () => {
    const user = await signUp(gw.url);
    const key = await createKey(gw.url, user);
    expect((await get('/list-api-keys', { 'x-api-key': key.secret_key })).status).toBe(200);
    const del = await fetch(`${gw.url}/delete-api-key`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/json', 'x-api-key': key.secret_key },
      body: JSON.stringify({ key_id: key.id }),
    });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ success: true, message: expect.any(String) });
    const after = await get('/list-api-keys', { 'x-api-key': key.secret_key });
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ detail: expect.any(String) });
  });

  it('when another team deletes my key id, then 404 and my key still works', async () => {
    const alice = await signUp(gw.url);
    const bob = await signUp(gw.url);
    const aliceKey = await createKey(gw.url, alice);
    const bobKey = await createKey(gw.url, bob);
    const res = await fetch(`${gw.url}/delete-api-key`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/json', 'x-api-key': bobKey.secret_key },
      body: JSON.stringify({ key_id: aliceKey.id }),
    });
    expect(res.status).toBe(404);
    expect((await get('/list-api-keys', { 'x-api-key': aliceKey.secret_key })).status).toBe(200);
  });

  it('when the JSON body is invalid, then 400 {detail}', async () => {
    const res = await fetch(`${gw.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"email":',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ detail: 'Request body is not valid JSON' });
  });

  it('when fields are missing or wrong, then 422 {detail, errors} lists each field', async () => {
    const res = await fetch(`${gw.url}/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'not-an-email', password: 5 }),
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: string; errors: { field: string }[] };
    expect(body.detail).toEqual(expect.any(String));
    expect(body.errors.map((e) => e.field).sort()).toEqual(['email', 'password']);
  });

  it('when the body is too large, then 413 {detail}', async () => {
    const res = await fetch(`${gw.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(100_000) }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ detail: expect.any(String) });
  });

  it('when a route does not exist, then 404 {detail}; with anthropic-version, the Anthropic envelope', async () => {
    const res = await get('/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: 'No route for GET /nope' });
    const anthropic = await get('/nope', { 'anthropic-version': '2023-06-01' });
    expect(await anthropic.json()).toEqual({
      type: 'error',
      error: { type: 'not_found_error', message: 'No route for GET /nope' },
    });
  });

  it('when the free balance is exhausted, then a paid route gives 402 out_of_credits and x-should-retry false', async () => {
    const user = await signUp(gw.url);
    const key = await createKey(gw.url, user);
    const call = () => fetch(`${gw.url}/test/paid`, { method: 'POST', headers: { 'x-api-key': key.secret_key } });
    expect((await call()).status).toBe(200);
    // Spend the whole allowance directly in the ledger through key-billing's own usage path.
    await kb.app.onUsageRecorded(
      create(UsageRecordedSchema, {
        usageId: `drain-${user.teamId}`,
        teamId: user.teamId,
        keyId: key.id,
        model: 'test',
        costMicroCredits: 500_000_000n,
      }),
    );
    const denied = await call();
    expect(denied.status).toBe(402);
    expect(denied.headers.get('x-should-retry')).toBe('false');
    expect(await denied.json()).toEqual({
      code: 'out_of_credits',
      message: expect.any(String),
      resolution_url: expect.any(String),
    });
  });

  it('when a dashboard user logs in, then /auth/me works with the cookie and logout ends it', async () => {
    const user = await signUp(gw.url);
    const login = await fetch(`${gw.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email, password: 'correct horse battery' }),
    });
    expect(login.status).toBe(200);
    const setCookie = login.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    const cookie = setCookie.split(';')[0]!;
    const { csrf_token } = (await login.json()) as { csrf_token: string };
    const me = await get('/auth/me', { cookie });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ user: { email: user.email } });
    const out = await fetch(`${gw.url}/auth/logout`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf_token },
    });
    expect(out.status).toBe(200);
    expect((await get('/auth/me', { cookie })).status).toBe(401);
  });

  it('when a wrong password is sent, then 401 {detail}', async () => {
    const user = await signUp(gw.url);
    const res = await fetch(`${gw.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email, password: 'wrong password!!' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: expect.any(String) });
  });

  it('when /openapi.json is fetched, then it is version 2.0.0 and documents the key routes', async () => {
    const doc = (await (await get('/openapi.json')).json()) as {
      info: { version: string };
      paths: Record<string, unknown>;
    };
    expect(doc.info.version).toBe('2.0.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/create-api-key', '/list-api-keys', '/delete-api-key', '/auth/signup']),
    );
  });

  it('when probes and metrics are fetched, then livez, readyz and /metrics answer', async () => {
    expect(await (await get('/livez')).json()).toEqual({ status: 'ok' });
    expect((await get('/readyz')).status).toBe(200);
    const metrics = await (await get('/metrics')).text();
    expect(metrics).toContain('whetstone_gateway_http_request_duration_seconds');
  });

  it('when a back end other than key-billing is down, then readyz stays 200 and names it as degraded', async () => {
    // Nothing listens on port 1: the router's real health check fails, as when its pods are gone.
    const deadRouter = '127.0.0.1:1';
    const health = createHealthChecker({ addr: deadRouter, caller: 'gateway' });
    const inference = inferenceOverRpc(
      createRpcClient(InferenceRouterService, { addr: deadRouter, caller: 'gateway' }),
      () => health.check(),
    );
    const degraded = await startGateway(kb, { inference });
    try {
      const res = await fetch(`${degraded.url}/readyz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ready', degraded: ['inference-router'] });
    } finally {
      await degraded.close();
    }
  });
});

describe('gateway readiness without key-billing', () => {
  it('when key-billing is down, then readyz is 503 naming it', async () => {
    const kb = await startKeyBilling();
    const gw = await startGateway(kb);
    await kb.close();
    try {
      const res = await fetch(`${gw.url}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ detail: 'not reachable: key-billing' });
    } finally {
      await gw.close();
    }
  });
});
