import { execFile } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEPLOYABLES } from '../../scripts/lib/deployables';
import { startSystem, type RunningSystem } from './system';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Whether `host:port` accepts a TCP connection. 127.0.0.2 is loopback too (Linux routes 127.0.0.0/8 to lo) but
 * not 127.0.0.1: a port bound to 127.0.0.1 refuses it and one bound to every interface accepts it, so it stands in
 * for another machine's address.
 */
const accepts = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/**
 * Issue 2's "done when", tried as a new user would: the system started exactly
 * as `pnpm start` starts it, driven only through public HTTP and the admin CLI.
 */
describe('front door, end to end through pnpm start', () => {
  let system: RunningSystem;
  const json = { 'content-type': 'application/json' };

  beforeAll(async () => {
    // A small per-IP budget so a burst is cheap; the journey below makes 9 requests before the burst.
    system = await startSystem({
      env: {
        RATE_LIMIT_IP_PER_MINUTE: '15',
        RATE_LIMIT_REDIS_PREFIX: `e2e-${Date.now()}:`,
        ADMIN_TOKEN: 'e2e-admin-token-0123456789',
      },
    });
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
  }, 30_000);

  it('when a user signs up, creates a key, uses and revokes it, then every step answers as the spec says', async () => {
    const base = system.baseUrl;
    const email = `e2e${Date.now()}@example.com`;
    const signup = await fetch(`${base}/auth/signup`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email, password: 'correct horse battery' }),
    });
    expect(signup.status).toBe(201);
    const cookie = (signup.headers.get('set-cookie') ?? '').split(';')[0]!;
    const { csrf_token, team } = (await signup.json()) as { csrf_token: string; team: { id: string } };

    const created = await fetch(`${base}/create-api-key`, {
      method: 'POST',
      headers: { ...json, cookie, 'x-csrf-token': csrf_token },
      body: JSON.stringify({ name: 'e2e' }),
    });
    expect(created.status).toBe(200);
    const key = (await created.json()) as { id: string; secret_key: string };

    const list = await fetch(`${base}/list-api-keys`, { headers: { 'x-api-key': key.secret_key } });
    expect(list.status).toBe(200);
    const listed = (await list.json()) as { count: number; keys: { id: string; request_count: number }[] };
    expect(listed.count).toBe(1);
    expect(listed.keys[0]).toMatchObject({ id: key.id, request_count: 0 });

    const wrongPrefix = await fetch(`${base}/list-api-keys`, {
      headers: { 'x-api-key': 'sk-live-0123456789abcdef0123456789abcdef' },
    });
    expect(wrongPrefix.status).toBe(401);
    expect(await wrongPrefix.json()).toEqual({ detail: "Invalid API key format: keys must start with 'wst_sk_'." });

    // The operator CLI grants credits over internal gRPC; the balance shows it.
    const offsetPort = new URL(base).port;
    const kbAddr = `127.0.0.1:${Number(offsetPort) - 8080 + 50051}`;
    const cli = await run(
      'pnpm',
      ['--silent', 'whetstone', 'admin', 'grant-credits', '--team', team.id, '--credits', '25', '--note', 'e2e'],
      {
        cwd: ROOT,
        env: { ...process.env, KEY_BILLING_ADDR: kbAddr, ADMIN_TOKEN: 'e2e-admin-token-0123456789' },
      },
    );
    expect(cli.stdout).toMatch(/525/);
    const usage = (await (
      await fetch(`${base}/billing/usage`, { headers: { 'x-api-key': key.secret_key } })
    ).json()) as { balance_credits: number };
    expect(usage.balance_credits).toBe(525);

    const del = await fetch(`${base}/delete-api-key`, {
      method: 'DELETE',
      headers: { ...json, 'x-api-key': key.secret_key },
      body: JSON.stringify({ key_id: key.id }),
    });
    expect(await del.json()).toEqual({ success: true, message: expect.any(String) });
    expect((await fetch(`${base}/list-api-keys`, { headers: { 'x-api-key': key.secret_key } })).status).toBe(401);

    const openapi = (await (await fetch(`${base}/openapi.json`)).json()) as { info: { version: string } };
    expect(openapi.info.version).toBe('2.0.0');

    const dashboard = await fetch(`${base}/dashboard`);
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toContain('Whetstone dashboard');

    // Last: a burst past the per-IP budget gets 429 with the spec's headers and body. 20 > 15 even if a
    // minute window rolls over during the test, so at least 5 are refused whatever the wall clock does.
    const burst = await Promise.all(Array.from({ length: 20 }, () => fetch(`${base}/openapi.json`)));
    const statuses = burst.map((r) => r.status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(5);
    expect(statuses.filter((s) => s !== 429 && s !== 200)).toEqual([]);
    const limited = burst.find((r) => r.status === 429)!;
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.headers.get('x-ratelimit-scope')).toBe('ip');
    expect(limited.headers.get('x-ratelimit-code')).toBe('ip_rate_limit');
    expect(await limited.json()).toEqual({
      detail: expect.stringContaining('Rate limit exceeded'),
      code: 'ip_rate_limit',
      scope: 'ip',
    });
  }, 120_000);

  it('when the system runs, then the gateway alone listens beyond loopback: every gRPC and metrics port is 127.0.0.1 only', async () => {
    const offset = Number(new URL(system.baseUrl).port) - 8080;
    const ports = DEPLOYABLES.flatMap((d) =>
      [
        { name: d.name, port: d.port },
        { name: `${d.name} metrics`, port: d.metricsPort ?? 0 },
      ].filter((p) => p.port > 0),
    );
    const seen = await Promise.all(
      ports.map(async ({ name, port }) => ({
        name,
        loopback: await accepts('127.0.0.1', port + offset),
        other: await accepts('127.0.0.2', port + offset),
      })),
    );
    expect(seen).toEqual(ports.map(({ name }) => ({ name, loopback: true, other: name === 'gateway' })));
  });
});
