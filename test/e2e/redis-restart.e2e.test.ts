/**
 * Issue 19, suite item 2: Redis restarted mid-load. The system runs with REDIS_URL on a private
 * redis-server this test owns (never the shared one). While clients send inferences and reads, that
 * Redis is SIGKILLed and started again on the same port. The gateway keeps serving (its rate limits
 * fall back to in-process counters), answers nothing but 200 or a 503 `{detail}`, reports Redis in
 * /readyz, goes back to the shared counters within 10 s, and loses no acknowledged write.
 * Losing Postgres is test/e2e/outage.e2e.test.ts.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { eventually, withClient } from '@whetstone/testing';
import { loadClient, type Outcome } from './load-client';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

/** The spec's bound: serving normally again within this long after Redis is back. */
const RECOVERY_MS = 10_000;
/** How long Redis stays down. */
const DOWN_MS = 4_000;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** True once a Redis on the port answers PING. */
const pong = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500, () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (b: Buffer) => (socket.destroy(), resolve(b.toString().startsWith('+PONG'))));
  });

function startRedis(port: number): ChildProcess {
  return spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: 'ignore' },
  );
}

describe('Redis restarted under load (pnpm start with REDIS_URL)', () => {
  let system: RunningSystem;
  let redis: ChildProcess;
  let port: number;
  let key: string;
  let teamId: string;
  let session: { cookie: string; csrf: string };

  beforeAll(async () => {
    port = await freePort();
    redis = startRedis(port);
    await eventually(() => pong(port), 10_000, 100);
    system = await startSystem({ redis: false, env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
    const signedUp = await signUpWithKey(system.baseUrl, 'redis-restart');
    ({ key, teamId } = signedUp);
    session = signedUp;
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
    redis?.kill('SIGKILL');
  }, 60_000);

  const { call, infer, listDatasets } = loadClient(
    () => system.baseUrl,
    () => key,
  );
  const readiness = async () => {
    const res = await fetch(`${system.baseUrl}/readyz`).catch(() => undefined);
    return res ? { ...((await res.json()) as { redis?: string }), http: res.status } : undefined;
  };
  const newKey = async (name: string) => {
    const res = await fetch(`${system.baseUrl}/create-api-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: session.cookie, 'x-csrf-token': session.csrf },
      body: JSON.stringify({ name }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { secret_key: string; id: string };
  };

  it('when Redis is killed and started again, then the API keeps answering 200 (never 500), /readyz reports it, shared counters resume within 10 s, nothing acknowledged is lost', async () => {
    expect((await infer()).status).toBe(200); // warm: the first extraction loads the model
    expect(await readiness()).toEqual({ http: 200, status: 'ready', redis: 'up' });
    const revoked = await newKey('revoked-while-redis-is-down');
    expect((await call('/core/datasets', { method: 'GET' }, revoked.secret_key)).status).toBe(200); // now cached

    const outcomes: Outcome[] = [];
    let stop = false;
    // Paced well under the team's rate limits: the test is about the outage, not 429s.
    const worker = (request: () => Promise<Outcome>) =>
      (async () => {
        while (!stop) {
          outcomes.push(await request());
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
    const workers = [worker(infer), worker(infer), worker(listDatasets)];
    await new Promise((r) => setTimeout(r, 3_000));

    const killedAt = Date.now();
    redis.kill('SIGKILL');
    const reportedDown = await eventually(async () => (await readiness())?.redis === 'down', 10_000, 100).then(
      () => Date.now() - killedAt,
    );
    // A write while Redis is down: revoking a key (its fan-out to other replicas needs Redis).
    const revoke = await call('/delete-api-key', { method: 'DELETE', body: JSON.stringify({ key_id: revoked.id }) });
    await new Promise((r) => setTimeout(r, Math.max(0, DOWN_MS - (Date.now() - killedAt))));

    redis = startRedis(port);
    await eventually(() => pong(port), 10_000, 50);
    const backAt = Date.now();
    const recoveredMs = await eventually(async () => (await readiness())?.redis === 'up', RECOVERY_MS, 100).then(
      () => Date.now() - backAt,
    );
    await new Promise((r) => setTimeout(r, RECOVERY_MS + 2_000));
    stop = true;
    await Promise.all(workers);

    // The gateway counts in the restarted Redis again (shared counters), not in-process only.
    const counters = execFileSync('redis-cli', ['-p', String(port), '--scan', '--pattern', 'whetstone:*'], {
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean);

    const summary = outcomes.reduce<Record<string, number>>((n, o) => {
      const k = `${o.route} ${o.status}`;
      n[k] = (n[k] ?? 0) + 1;
      return n;
    }, {});
    const report = {
      summary,
      sent: outcomes.length,
      status5xx: outcomes.filter((o) => o.status >= 500).length,
      downMs: backAt - killedAt,
      readyzReportedDownAfterMs: reportedDown,
      readyzUpAfterMs: recoveredMs,
      sharedCountersAfter: counters.length,
      revokeStatus: revoke.status,
    };
    process.stdout.write(`Redis restart: ${JSON.stringify(report)}\n`);

    // Only 200 and the retryable 503 in `{detail}` with Retry-After; no 500, no connection error.
    expect(outcomes.filter((o) => o.status !== 200 && o.status !== 503).slice(0, 5)).toEqual([]);
    for (const o of outcomes.filter((o) => o.status === 503)) {
      expect(o.retryAfter).toMatch(/^\d+$/);
      expect(JSON.parse(o.body)).toEqual({ detail: expect.any(String) });
    }
    // Serving normally within 10 s of Redis being back, on both routes.
    for (const route of ['/inference', '/core/datasets']) {
      const after = outcomes.filter((o) => o.route === route && o.sentAt > backAt + RECOVERY_MS);
      expect({ route, sent: after.length > 0, failed: after.filter((o) => o.status !== 200).length }).toEqual({
        route,
        sent: true,
        failed: 0,
      });
    }
    expect(recoveredMs).toBeLessThan(RECOVERY_MS);
    expect(counters.length).toBeGreaterThan(0);
    expect(await readiness()).toEqual({ http: 200, status: 'ready', redis: 'up' });

    // The revocation acknowledged while Redis was down holds.
    expect(revoke.status).toBe(200);
    expect((await call('/core/datasets', { method: 'GET' }, revoked.secret_key)).status).toBe(401);
    // Every acknowledged inference reaches history, once.
    const acknowledged = outcomes
      .filter((o) => o.route === '/inference' && o.status === 200)
      .map((o) => (JSON.parse(o.body) as { inference_id: string }).inference_id);
    const recorded = await eventually(
      async () => {
        const n = await withClient(system.databaseUrl!, async (c) =>
          Number(
            (
              await c.query<{ n: string }>(
                'SELECT count(*) AS n FROM history.inference_records WHERE team_id = $1 AND id = ANY($2::uuid[])',
                [teamId, acknowledged],
              )
            ).rows[0]!.n,
          ),
        );
        return n >= acknowledged.length ? n : null;
      },
      60_000,
      500,
    ).catch(() => -1);
    expect({ recorded, acknowledged: acknowledged.length }).toEqual({
      recorded: acknowledged.length,
      acknowledged: acknowledged.length,
    });
  }, 240_000);
});
