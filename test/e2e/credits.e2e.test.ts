import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const ADMIN_TOKEN = 'e2e-admin-token-credits-0123456789';
/** The router reuses a team's "spendable" answer this long (denials are never reused); small, so waiting past it is cheap. */
const SPENDABLE_CACHE_MS = 300;

/**
 * Credit denials driven end to end: the operator CLI (`pnpm whetstone admin`)
 * puts a team in each billing state over internal gRPC, and /inference through
 * the gateway answers as the spec says. A denial never clears by waiting,
 * only by a change to the account.
 */
describe('credit denials, end to end through pnpm start', () => {
  let system: RunningSystem;
  let kbAddr: string;

  beforeAll(async () => {
    system = await startSystem({ env: { ADMIN_TOKEN, SPENDABLE_CACHE_MS: String(SPENDABLE_CACHE_MS) } });
    kbAddr = `127.0.0.1:${Number(new URL(system.baseUrl).port) - 8080 + 50051}`;
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
  }, 30_000);

  const admin = async (...args: string[]) =>
    (
      await run('pnpm', ['--silent', 'whetstone', 'admin', ...args], {
        cwd: ROOT,
        env: { ...process.env, KEY_BILLING_ADDR: kbAddr, ADMIN_TOKEN },
      })
    ).stdout;

  const infer = (key: string) =>
    fetch(`${system.baseUrl}/inference`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({
        model_id: 'whetstone-extract-base',
        text: 'Ada Lovelace',
        schema: { entities: ['person'] },
      }),
    });

  /** The denial, then the same denial again after waiting well past every cache involved. */
  async function deniedTwice(key: string, status: number, code: string): Promise<void> {
    for (const wait of [0, 3 * SPENDABLE_CACHE_MS]) {
      await new Promise((r) => setTimeout(r, wait));
      const res = await infer(key);
      expect(res.status).toBe(status);
      expect(res.headers.get('x-should-retry')).toBe('false');
      expect(await res.json()).toEqual({
        code,
        message: expect.any(String),
        resolution_url: expect.stringContaining('/dashboard'),
      });
    }
  }

  it('when a team has no credits left, then /inference is 402 out_of_credits until the operator credits it', async () => {
    const { key, teamId } = await signUpWithKey(system.baseUrl, 'broke');
    expect(
      await admin('adjust-balance', '--team', teamId, '--debit', '500', '--reason', 'e2e: spend the allowance'),
    ).toMatch(/Balance\s+0 credits/);
    await deniedTwice(key, 402, 'out_of_credits');

    await admin('adjust-balance', '--team', teamId, '--credit', '1', '--reason', 'e2e: top-up');
    const res = await infer(key);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { inference_id: string }).inference_id).toMatch(/^[0-9a-f-]{36}$/);
    // The answered call's metering was group-committed before the answer (the router's metrics say so).
    const routerMetrics = await (
      await fetch(`http://127.0.0.1:${Number(new URL(system.baseUrl).port) - 8080 + 9454}/metrics`)
    ).text();
    expect(
      Number(/^inference_router_metering_commit_batch_rows_sum (\d+)/m.exec(routerMetrics)?.[1]),
    ).toBeGreaterThanOrEqual(2);
  }, 180_000);

  it('when a paid team has drawn its overage up to the ceiling, then /inference is 403 credit_ceiling_reached', async () => {
    const { key, teamId } = await signUpWithKey(system.baseUrl, 'ceiling');
    await admin('set-plan', '--team', teamId, '--plan', 'paid', '--included-credits', '0', '--card-verified', 'yes');
    await admin('set-ceiling', '--team', teamId, '--ceiling-credits', '5');
    expect(
      await admin('adjust-balance', '--team', teamId, '--debit', '505', '--reason', 'e2e: draw the overage'),
    ).toMatch(/Overage used\s+5 credits/);
    await deniedTwice(key, 403, 'credit_ceiling_reached');

    await admin('set-ceiling', '--team', teamId, '--ceiling-credits', '50');
    expect((await infer(key)).status).toBe(200);
  }, 180_000);

  it('when a paid plan needs overage but no card is verified, then /inference is 403 card_required', async () => {
    const { key, teamId } = await signUpWithKey(system.baseUrl, 'nocard');
    await admin('set-plan', '--team', teamId, '--plan', 'paid', '--included-credits', '0');
    await admin('set-ceiling', '--team', teamId, '--ceiling-credits', '5');
    await admin('adjust-balance', '--team', teamId, '--debit', '500', '--reason', 'e2e: spend the allowance');
    await deniedTwice(key, 403, 'card_required');

    await admin('set-plan', '--team', teamId, '--plan', 'paid', '--card-verified', 'yes');
    expect((await infer(key)).status).toBe(200);
  }, 180_000);
});
