import { Pool } from 'pg';
import { create } from '@bufbuild/protobuf';
import { PgEventLog, startOutboxRelay, type OutboxRelay } from '@whetstone/events';
import { createLogger } from '@whetstone/telemetry';
import { createTestSchema, testDatabaseUrl, type TestSchema } from '@whetstone/testing';
import { SetAccountBlockedRequestSchema } from '@whetstone/proto/keybilling/v1';
import { createKey, signUp, startGateway, startKeyBilling, type Gateway } from './harness';

type KB = Awaited<ReturnType<typeof startKeyBilling>>;

describe('keys.v1 invalidation: key-billing outbox → relay → event log → gateway cache', () => {
  let kb: KB;
  let gw: Gateway;
  let pool: Pool;
  let logSchema: TestSchema;
  let log: PgEventLog;
  let relay: OutboxRelay;

  beforeAll(async () => {
    kb = await startKeyBilling();
    pool = new Pool({ connectionString: testDatabaseUrl(), max: 6 });
    logSchema = await createTestSchema('keys_log');
    log = new PgEventLog(pool, logSchema.name);
    relay = startOutboxRelay({
      pool,
      schema: kb.db.schema.name,
      transport: log,
      logger: createLogger({ service: 't', level: 'silent' }),
      pollMs: 20,
    });
    // No Redis fan-out here, and a 30 s auth cache: only the event can make the next request fail.
    gw = await startGateway(kb, { events: log });
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    await relay?.stop();
    await log?.close();
    await logSchema?.drop();
    await pool?.end();
    await kb?.close();
  });

  it('when an operator blocks an account, then the gateway refuses its cached key without waiting for the TTL', async () => {
    const user = await signUp(gw.url);
    const key = await createKey(gw.url, user);
    const list = () => fetch(`${gw.url}/list-api-keys`, { headers: { 'x-api-key': key.secret_key } });
    expect((await list()).status).toBe(200);

    await kb.admin.setAccountBlocked(
      create(SetAccountBlockedRequestSchema, {
        account: { selector: { case: 'teamId', value: user.teamId } },
        blocked: true,
        reason: 'fraud review',
      }),
    );

    let status = 200;
    for (let i = 0; i < 100 && status === 200; i++) {
      status = (await list()).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(401);
  });

  it('when a cached key reaches its expires_at, then it is refused at once, not after the cache TTL', async () => {
    const user = await signUp(gw.url);
    const expiresAt = new Date(Date.now() + 2_000);
    const created = await fetch(`${gw.url}/create-api-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: user.cookie, 'x-csrf-token': user.csrf },
      body: JSON.stringify({ name: 'short-lived', expires_at: expiresAt.toISOString() }),
    });
    expect(created.status).toBe(200);
    const { secret_key } = (await created.json()) as { secret_key: string };
    const list = () => fetch(`${gw.url}/list-api-keys`, { headers: { 'x-api-key': secret_key } });
    expect((await list()).status).toBe(200); // now in the 30 s auth cache

    await new Promise((r) => setTimeout(r, expiresAt.getTime() - Date.now() + 50));
    const late = await list();
    expect(late.status).toBe(401);
    expect(await late.json()).toEqual({ detail: 'This API key has expired.' });
  });

  it('when an account is blocked, then its dashboard session can no longer create keys, projects or uploads', async () => {
    const user = await signUp(gw.url);
    const session = { 'content-type': 'application/json', cookie: user.cookie, 'x-csrf-token': user.csrf };
    await kb.admin.setAccountBlocked(
      create(SetAccountBlockedRequestSchema, {
        account: { selector: { case: 'teamId', value: user.teamId } },
        blocked: true,
        reason: 'fraud review',
      }),
    );
    const createKeyRes = await fetch(`${gw.url}/create-api-key`, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({ name: 'after the block' }),
    });
    expect(createKeyRes.status).toBe(401);
    expect(await createKeyRes.json()).toEqual({ detail: 'This account is blocked.' });
    const me = await fetch(`${gw.url}/auth/me`, { headers: { cookie: user.cookie } });
    expect(me.status).toBe(401);
  });
});
