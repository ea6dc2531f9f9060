import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { createHealthChecker, createRpcClient } from '@whetstone/rpc';
import { createLogger } from '@whetstone/telemetry';
import { testRedisUrl } from '@whetstone/testing';
import { KeyBillingService } from '@whetstone/proto/keybilling/v1';
import { startHarness, type Harness as KeyBillingHarness } from '../../../key-billing/test/integration/harness';
import { keyBillingOverRpc } from '../../src/adapters/key-billing.client';
import { MemoryRateLimiter } from '../../src/adapters/memory-rate-limiter';
import { RedisRateLimiter } from '../../src/adapters/redis-rate-limiter';
import { redisInvalidation } from '../../src/adapters/redis-invalidation';
import { AuthCache } from '../../src/application/auth-cache';
import type { EventTransport } from '@whetstone/events';
import { keysConsumer, KEYS_TOPIC } from '../../src/transport/events/keys.consumer';
import { buildApp, type GatewayDeps } from '../../src/app';
import { answerClientErrors } from '../../src/transport/http/errors';
import { DEFAULT_RATE_LIMITS, type RateLimitSettings } from '../../src/domain/rate-limit';

export interface Gateway {
  url: string;
  close(): Promise<void>;
}

export interface GatewayOptions {
  rateLimits?: Partial<RateLimitSettings>;
  redis?: boolean;
  /** Isolates Redis counters between test files. */
  redisPrefix?: string;
  extraRoutes?: GatewayDeps['extraRoutes'];
  /** A fixed clock makes window-boundary effects impossible in tests. */
  now?: () => number;
  /** Subscribe this replica to keys.v1 on the given event log, as main.ts does. */
  events?: EventTransport;
  blobHandler?: GatewayDeps['blobHandler'];
  /** A stand-in inference-router (e.g. a scripted fake of the port). */
  inference?: GatewayDeps['inference'];
}

/** A real gateway on port 0, talking gRPC to a real key-billing. */
export async function startGateway(keyBilling: KeyBillingHarness, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = createLogger({ service: 'gateway-test', level: 'silent' });
  const client = createRpcClient(KeyBillingService, { addr: keyBilling.addr, caller: 'gateway' });
  const health = createHealthChecker({ addr: keyBilling.addr, caller: 'gateway' });
  const authCache = new AuthCache(30_000);
  const redis = options.redis ? new Redis(testRedisUrl()) : undefined;
  const subscriber = redis?.duplicate();
  const fanout =
    redis && subscriber
      ? await redisInvalidation(redis, subscriber, (inv) => authCache.invalidate(inv), logger)
      : undefined;
  const keysSubscription = await options.events?.subscribe({
    group: `gateway-test-${Math.random().toString(36).slice(2)}`,
    topics: [KEYS_TOPIC],
    fromLatest: true,
    handler: keysConsumer(authCache),
    logger,
  });
  const { app } = buildApp({
    logger,
    keyBilling: keyBillingOverRpc(client, () => health.check()),
    rateLimiter: redis
      ? new RedisRateLimiter(redis, options.redisPrefix ?? `test:${Math.random().toString(36).slice(2)}:`)
      : new MemoryRateLimiter(),
    rateLimits: { ...DEFAULT_RATE_LIMITS, ...options.rateLimits },
    authCache,
    broadcast: fanout?.broadcast ?? (async () => undefined),
    metrics: new Registry(),
    trustProxy: 'loopback',
    publicBaseUrl: 'http://localhost:8080',
    maxJsonBodyBytes: 64 * 1024,
    maxBatchBodyBytes: 256 * 1024,
    maxFileBytes: 1024 * 1024,
    sessionCookie: 'wst_session',
    ...(options.extraRoutes ? { extraRoutes: options.extraRoutes } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.blobHandler ? { blobHandler: options.blobHandler } : {}),
    ...(options.inference ? { inference: options.inference } : {}),
  });
  const server = http.createServer(app);
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await keysSubscription?.stop();
      await fanout?.close();
      subscriber?.disconnect();
      redis?.disconnect();
    },
  };
}

export { startHarness as startKeyBilling };

/** A dashboard user: signed up, with its session cookie and CSRF token. */
export interface DashboardUser {
  email: string;
  cookie: string;
  csrf: string;
  teamId: string;
}

export async function signUp(
  gatewayUrl: string,
  email = `u${Date.now()}${Math.floor(Math.random() * 1e6)}@example.com`,
): Promise<DashboardUser> {
  const res = await fetch(`${gatewayUrl}/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery' }),
  });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { csrf_token: string; team: { id: string } };
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  return { email, cookie, csrf: body.csrf_token, teamId: body.team.id };
}

export async function createKey(
  gatewayUrl: string,
  user: DashboardUser,
  name = 'test key',
): Promise<{ id: string; secret_key: string }> {
  const res = await fetch(`${gatewayUrl}/create-api-key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: user.cookie, 'x-csrf-token': user.csrf },
    body: JSON.stringify({ name }),
  });
  if (res.status !== 200) throw new Error(`create key failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string; secret_key: string };
}
