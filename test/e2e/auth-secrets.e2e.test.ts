import { execFile } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { eventually, startFakeAnthropicUpstream, startFakeOpenAIUpstream, type FakeUpstream } from '@whetstone/testing';
import { ADMIN_TOKEN, grantCredits, OPENAI_MODEL, upstreamEnv } from './compat-helpers';
import { filesUnder, redirector, startSecondGateway, type SecondGateway } from './security-helpers';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const PASSWORD = 'correct horse battery';
const REDIRECT_MODEL = 'e2e-redirected';
const HOSTNAME_MODEL = 'e2e-by-hostname';

/**
 * Issue 19, items 5 to 7 through `pnpm start` plus a second gateway process on the same backends and Redis:
 * expired, revoked and blocked credentials are refused at once on both gateways; log-in guessing is rate
 * limited; no error echoes a secret; upstream calls never follow a redirect or reach a name that resolves
 * to loopback; and afterwards no service's output holds any secret the run used.
 */
describe('authentication, secrets and outbound calls, end to end with two gateways', () => {
  let system: RunningSystem;
  let second: SecondGateway;
  let openai: FakeUpstream;
  let anthropic: FakeUpstream;
  let bounce: Awaited<ReturnType<typeof redirector>>;
  let hostnameModel = false;
  /** Every secret the run handed out or sent; the scan at the end looks for each. */
  const secrets = new Set<string>([PASSWORD]);
  const gateways = () => [system.baseUrl, second.url];

  const session = (account: { cookie: string; csrf: string }) => ({
    cookie: account.cookie,
    'x-csrf-token': account.csrf,
    'content-type': 'application/json',
  });
  const withKey = (base: string, key: string, p = '/core/datasets') =>
    fetch(`${base}${p}`, { headers: { 'x-api-key': key } });
  const admin = (...args: string[]) =>
    run('pnpm', ['--silent', 'whetstone', 'admin', ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        KEY_BILLING_ADDR: `127.0.0.1:${Number(new URL(system.baseUrl).port) - 8080 + 50051}`,
        ADMIN_TOKEN,
      },
    });
  const account = async (label: string) => {
    const a = await signUpWithKey(system.baseUrl, label);
    secrets.add(a.key);
    secrets.add(a.cookie.split('=')[1]!);
    return a;
  };

  beforeAll(async () => {
    // Info-level logs: the scan at the end reads what an operator would keep.
    process.env.E2E_LOG_LEVEL = 'info';
    openai = await startFakeOpenAIUpstream();
    anthropic = await startFakeAnthropicUpstream();
    secrets.add(openai.apiKey).add(anthropic.apiKey);
    // Allowed (127.0.0.1), but it redirects to the OpenAI fake under another name: that must not be followed.
    bounce = await redirector(`${openai.url.replace('127.0.0.1', 'localhost')}/v1/chat/completions`);
    const env = upstreamEnv(openai, anthropic);
    const providers = JSON.parse(env.CATALOG_UPSTREAMS!) as Record<string, unknown>[];
    const price = { unit: '1m', input: 100, output: 400 };
    providers.push({
      name: 'bouncer',
      kind: 'openai-compatible',
      base_url: bounce.url,
      models: [{ id: REDIRECT_MODEL, price }],
    });
    // A plain DNS name (this machine's) that resolves to loopback passes the boot check, which only knows
    // literals and localhost; the call-time guard must refuse it.
    const host = os.hostname();
    const addresses = await lookup(host, { all: true }).catch(() => []);
    hostnameModel = addresses.length > 0 && addresses.every((a) => /^(127\.|::1$)/.test(a.address));
    if (hostnameModel)
      providers.push({
        name: 'by-hostname',
        kind: 'openai-compatible',
        base_url: openai.url.replace('127.0.0.1', host),
        models: [{ id: HOSTNAME_MODEL, price }],
      });
    system = await startSystem({ env: { ...env, CATALOG_UPSTREAMS: JSON.stringify(providers) } });

    second = await startSecondGateway(system);
  }, 300_000);

  afterAll(async () => {
    await second?.stop();
    await system?.stop();
    await openai?.close();
    await anthropic?.close();
    await bounce?.close();
  }, 60_000);

  describe('item 5: authentication', () => {
    it('when a key reaches expires_at after both gateways cached it, then both refuse it at once', async () => {
      const owner = await account('expiring');
      const expiresAt = new Date(Date.now() + 3_000);
      const created = await fetch(`${system.baseUrl}/create-api-key`, {
        method: 'POST',
        headers: session(owner),
        body: JSON.stringify({ name: 'short-lived', expires_at: expiresAt.toISOString() }),
      });
      const { secret_key } = (await created.json()) as { secret_key: string };
      secrets.add(secret_key);
      for (const base of gateways()) expect((await withKey(base, secret_key)).status).toBe(200);
      await new Promise((r) => setTimeout(r, expiresAt.getTime() - Date.now() + 50));
      for (const base of gateways()) {
        const late = await withKey(base, secret_key);
        expect({ base, status: late.status, body: await late.json() }).toEqual({
          base,
          status: 401,
          body: { detail: 'This API key has expired.' },
        });
      }
    });

    it('when a key is revoked through one gateway, then both refuse it within 1 s', async () => {
      const owner = await account('revoking');
      for (const base of gateways()) expect((await withKey(base, owner.key)).status).toBe(200);
      const listed = (await (await fetch(`${system.baseUrl}/list-api-keys`, { headers: session(owner) })).json()) as {
        keys: { id: string }[];
      };
      const revokedAt = Date.now();
      const revoked = await fetch(`${system.baseUrl}/delete-api-key`, {
        method: 'DELETE',
        headers: session(owner),
        body: JSON.stringify({ key_id: listed.keys[0]!.id }),
      });
      expect(revoked.status).toBe(200);
      expect((await withKey(system.baseUrl, owner.key)).status).toBe(401);
      await eventually(async () => (await withKey(second.url, owner.key)).status === 401, 1_000, 20);
      const elapsed = Date.now() - revokedAt;
      console.log(`revoked key refused by the second gateway after ${elapsed} ms`);
      expect(elapsed).toBeLessThan(1_000);
    });

    it('when an operator blocks a team, then both gateways refuse its key and its session on every route', async () => {
      const blocked = await account('blocked');
      for (const base of gateways()) expect((await withKey(base, blocked.key)).status).toBe(200);
      await admin('block', '--team', blocked.teamId, '--reason', 'e2e security suite');
      const blockedAt = Date.now();
      for (const base of gateways())
        await eventually(async () => (await withKey(base, blocked.key)).status === 401, 5_000, 20);
      console.log(`blocked team refused by both gateways after ${Date.now() - blockedAt} ms`);

      const openapi = (await (await fetch(`${system.baseUrl}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, { security?: unknown[] }>>;
      };
      const operations = Object.entries(openapi.paths).flatMap(([template, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => (op.security ?? []).length > 0)
          .map(([method]) => ({
            method,
            pathname: template.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000'),
          })),
      );
      expect(operations.length).toBeGreaterThan(50);
      const admitted: string[] = [];
      for (const base of gateways())
        for (const { method, pathname } of operations)
          for (const [how, headers] of [
            ['key', { 'x-api-key': blocked.key, 'content-type': 'application/json' }],
            ['session', session(blocked)],
          ] as const) {
            const res = await fetch(`${base}${pathname}`, {
              method: method.toUpperCase(),
              headers,
              ...(method === 'get' || method === 'delete' ? {} : { body: '{}' }),
            });
            await res.arrayBuffer();
            if (res.status !== 401 && res.status !== 403)
              admitted.push(`${how} ${method.toUpperCase()} ${pathname} on ${base}: ${res.status}`);
          }
      expect(admitted).toEqual([]);
      const login = await fetch(`${second.url}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: blocked.email, password: PASSWORD }),
      });
      // Logging in still answers 200 with a cookie (key-billing does not check the block there), but that
      // session is refused like any other.
      if (login.status === 200) {
        const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
        secrets.add(cookie.split('=')[1]!);
        const me = await fetch(`${second.url}/auth/me`, { headers: { cookie } });
        expect(me.status).toBe(401);
      } else expect(login.status).toBe(401);
      console.log(`blocked team: ${operations.length * 4} requests (key and session, two gateways), 0 admitted`);
    }, 120_000);

    it('when log-ins for one email are guessed from one address, then the 11th attempt is 429 with Retry-After on both gateways', async () => {
      const victim = await account('victim');
      const attempt = (base: string, password: string) =>
        fetch(`${base}/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: victim.email, password }),
        });
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const guess = `guess-${i}-${randomBytes(4).toString('hex')}`;
        secrets.add(guess);
        statuses.push((await attempt(gateways()[i % 2]!, guess)).status);
      }
      expect(statuses).toEqual(Array(10).fill(401));
      for (const base of gateways()) {
        const limited = await attempt(base, PASSWORD);
        expect(limited.status).toBe(429);
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(await limited.json()).toMatchObject({ code: 'login_rate_limit' });
      }
    });
  });

  describe('item 6: errors never echo a secret', () => {
    it('when a request carries a key, a token or a password in a bad place, then the answer does not repeat it', async () => {
      const owner = await account('echo');
      const fakeKey = `wst_sk_${randomBytes(24).toString('hex')}`;
      const hubToken = `hf_${randomBytes(16).toString('hex')}`;
      const password = `Pw-${randomBytes(8).toString('hex')}`;
      for (const s of [fakeKey, hubToken, password]) secrets.add(s);
      const json = { 'content-type': 'application/json' };
      const attempts: [string, string, RequestInit][] = [
        ['bad key header', '/core/datasets', { headers: { 'x-api-key': fakeKey } }],
        [
          'bad bearer',
          '/v1/chat/completions',
          { method: 'POST', headers: { authorization: `Bearer ${fakeKey}`, ...json }, body: '{}' },
        ],
        [
          'anthropic surface',
          '/v1/messages',
          { method: 'POST', headers: { 'x-api-key': fakeKey, 'anthropic-version': '2023-06-01', ...json }, body: '{}' },
        ],
        ['key in the query', `/core/datasets?api_key=${fakeKey}`, { headers: { 'x-api-key': owner.key } }],
        [
          'key in an invalid field',
          '/projects',
          {
            method: 'POST',
            headers: { 'x-api-key': owner.key, ...json },
            body: JSON.stringify({ name: 7, note: fakeKey }),
          },
        ],
        [
          'key as a wrong-typed value',
          '/projects',
          {
            method: 'POST',
            headers: { 'x-api-key': owner.key, ...json },
            body: JSON.stringify({ name: { secret: fakeKey } }),
          },
        ],
        [
          'hub token with a bad repo',
          '/v1/training-jobs/00000000-0000-4000-8000-000000000000/push-to-hub',
          {
            method: 'POST',
            headers: { 'x-api-key': owner.key, ...json },
            body: JSON.stringify({ repo_id: 'not a repo', hub_token: hubToken }),
          },
        ],
        [
          'hub token on a missing job',
          '/v1/training-jobs/00000000-0000-4000-8000-000000000000/push-to-hub',
          {
            method: 'POST',
            headers: { 'x-api-key': owner.key, ...json },
            body: JSON.stringify({ repo_id: 'acme/model', hub_token: hubToken }),
          },
        ],
        [
          'password with a bad email',
          '/auth/login',
          { method: 'POST', headers: json, body: JSON.stringify({ email: 'not-an-email', password }) },
        ],
        [
          'wrong password',
          '/auth/login',
          {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ email: `nobody-${Date.now()}@example.com`, password }),
          },
        ],
        [
          'short password at sign-up',
          '/auth/signup',
          {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ email: 'x', password: password.slice(0, 3) + fakeKey }),
          },
        ],
        [
          'broken JSON around a key',
          '/projects',
          { method: 'POST', headers: { 'x-api-key': owner.key, ...json }, body: `{"name": "${fakeKey}` },
        ],
      ];
      const echoes: string[] = [];
      for (const [what, pathname, init] of attempts) {
        const res = await fetch(`${system.baseUrl}${pathname}`, init);
        const text = `${JSON.stringify([...res.headers])}${await res.text()}`;
        // A key in the query is ignored (the header authenticates), so that one is a 200.
        expect({ what, below500: res.status < 500 }).toEqual({ what, below500: true });
        for (const s of [fakeKey, hubToken, password, owner.key])
          if (text.includes(s)) echoes.push(`${what}: ${s.slice(0, 10)}…`);
      }
      expect(echoes).toEqual([]);
    });
  });

  describe('item 7: outbound calls from the router', () => {
    let caller: Awaited<ReturnType<typeof account>>;
    const chat = (model: string) =>
      fetch(`${system.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'x-api-key': caller.key, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
      });

    beforeAll(async () => {
      caller = await account('outbound');
      await grantCredits(system.baseUrl, caller.teamId, 100);
    }, 60_000);

    it('when an allowed provider answers, then the call goes through with its key (the control)', async () => {
      const res = await chat(OPENAI_MODEL);
      expect(res.status).toBe(200);
      expect(openai.requests.at(-1)?.headers.authorization).toBe(`Bearer ${openai.apiKey}`);
    });

    it('when an allowed provider redirects to a loopback name, then the redirect is not followed', async () => {
      const before = openai.requests.length;
      const res = await chat(REDIRECT_MODEL);
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(bounce.seen).toEqual(['POST /v1/chat/completions']);
      expect(openai.requests.length).toBe(before);
    });

    it('when a provider is named by a DNS name that resolves to loopback, then the call is refused and never made', async () => {
      if (!hostnameModel) {
        console.log(`skipped: ${os.hostname()} does not resolve to loopback here`);
        return;
      }
      const before = openai.requests.length;
      const res = await chat(HOSTNAME_MODEL);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(JSON.stringify(await res.json())).toContain('not servable');
      expect(openai.requests.length).toBe(before);
    });
  });

  describe('item 6: afterwards, no secret in any output', () => {
    it('when the run is over, then no service logged a key, cookie, token, password or URL signature', async () => {
      const owner = await account('signed');
      const upload = (await (
        await fetch(`${system.baseUrl}/core/datasets/upload/url`, {
          method: 'POST',
          headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
          body: JSON.stringify({
            dataset_name: 'signed',
            dataset_type: 'extraction',
            format: 'jsonl',
            filename: 'a.jsonl',
          }),
        })
      ).json()) as { upload_url: string };
      const signature = new URL(upload.upload_url).searchParams.get('sig')!;
      secrets.add(signature);
      expect((await fetch(upload.upload_url, { method: 'PUT', body: '{"text":"x","entities":[]}\n' })).status).toBe(
        200,
      );
      // Let the processes flush what they print.
      await new Promise((r) => setTimeout(r, 500));
      const outputs = [
        { file: 'pnpm start output', text: system.logs() },
        { file: 'second gateway output', text: second.output() },
        ...filesUnder(system.dataDir),
      ];
      const hits = [...secrets].flatMap((secret) =>
        outputs.filter((o) => o.text.includes(secret)).map((o) => `${secret.slice(0, 8)}… in ${o.file}`),
      );
      console.log(
        `secret scan: ${secrets.size} secrets across ${outputs.length} outputs (${outputs.reduce((n, o) => n + o.text.length, 0)} chars): ${hits.length} hits`,
      );
      expect(system.logs().length).toBeGreaterThan(1000);
      expect(hits).toEqual([]);
    });
  });
});
