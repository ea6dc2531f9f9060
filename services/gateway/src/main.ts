/** Composition root: config → adapters → buildApp → listen; drains on SIGTERM. */
import http from 'node:http';
import { Redis } from 'ioredis';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { createRpcClient, createHealthChecker } from '@whetstone/rpc';
import { createLogger, initTelemetry, runMain } from '@whetstone/telemetry';
import { FsBlobStore, createSignedUrlHandler } from '@whetstone/blobs';
import { createEventTransport, pgPoolFromUrl, type EventTransport } from '@whetstone/events';
import { keysConsumer, KEYS_TOPIC } from './transport/events/keys.consumer';
import { KeyBillingService } from '@whetstone/proto/keybilling/v1';
import { keyBillingOverRpc } from './adapters/key-billing.client';
import { inferenceOverRpc } from './adapters/inference.client';
import { datasetsOverRpc } from './adapters/dataset.client';
import { trainingOverRpc } from './adapters/training.client';
import { TrainingService } from '@whetstone/proto/training/v1';
import { DatasetService } from '@whetstone/proto/dataset/v1';
import { InferenceRouterService } from '@whetstone/proto/inference/v1';
import { MemoryRateLimiter } from './adapters/memory-rate-limiter';
import { RedisRateLimiter } from './adapters/redis-rate-limiter';
import { redisInvalidation } from './adapters/redis-invalidation';
import { AuthCache } from './application/auth-cache';
import { buildApp } from './app';
import { loadGatewayConfig, rateLimitSettings } from './config';

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'gateway' });
  const config = loadGatewayConfig();
  const logger = createLogger({ service: 'gateway', level: config.LOG_LEVEL });
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });

  const keyBillingClient = createRpcClient(KeyBillingService, {
    addr: config.KEY_BILLING_ADDR,
    caller: 'gateway',
    logger,
  });
  const keyBillingHealth = createHealthChecker({ addr: config.KEY_BILLING_ADDR, caller: 'gateway' });
  const keyBilling = keyBillingOverRpc(keyBillingClient, () => keyBillingHealth.check());
  // Optional back ends: their routes are mounted only when their address is configured.
  const backend = <P>(
    addr: string | undefined,
    make: (addr: string, ready: () => Promise<boolean>) => P,
  ): P | undefined => {
    if (!addr) return undefined;
    const health = createHealthChecker({ addr, caller: 'gateway' });
    return make(addr, () => health.check());
  };
  const inference = backend(config.INFERENCE_ROUTER_ADDR, (addr, ready) =>
    inferenceOverRpc(
      createRpcClient(InferenceRouterService, { addr, caller: 'gateway', logger, timeoutMs: 60_000 }),
      ready,
    ),
  );
  const datasets = backend(config.DATASET_ADDR, (addr, ready) =>
    datasetsOverRpc(createRpcClient(DatasetService, { addr, caller: 'gateway', logger, timeoutMs: 30_000 }), ready),
  );
  const training = backend(config.TRAINING_ORCHESTRATOR_ADDR, (addr, ready) =>
    trainingOverRpc(createRpcClient(TrainingService, { addr, caller: 'gateway', logger, timeoutMs: 30_000 }), ready),
  );
  const authCache = new AuthCache(config.AUTH_CACHE_TTL_SECONDS * 1000);

  const redis = config.REDIS_URL
    ? new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2, enableAutoPipelining: true })
    : undefined;
  const subscriber = redis?.duplicate();
  const fanout =
    redis && subscriber
      ? await redisInvalidation(redis, subscriber, (inv) => authCache.invalidate(inv), logger)
      : undefined;

  const events = eventTransport(config);
  const keysSubscription = await events?.transport.subscribe({
    group: `${config.WHETSTONE_INSTANCE}-${process.pid}-${Date.now()}`,
    topics: [KEYS_TOPIC],
    fromLatest: true,
    handler: keysConsumer(authCache),
    logger,
  });

  const blobHandler =
    config.BLOB_STORE === 'fs' && config.BLOB_SIGNING_SECRET
      ? createSignedUrlHandler(
          new FsBlobStore({
            root: config.BLOB_FS_ROOT,
            publicBaseUrl: config.PUBLIC_BASE_URL,
            signingSecret: config.BLOB_SIGNING_SECRET,
            maxPutBytes: config.BLOB_MAX_UPLOAD_BYTES,
          }),
        )
      : undefined;

  const { app } = buildApp({
    logger,
    keyBilling,
    ...(inference ? { inference } : {}),
    ...(datasets ? { datasets } : {}),
    ...(training ? { training } : {}),
    ...(blobHandler ? { blobHandler } : {}),
    rateLimiter: redis ? new RedisRateLimiter(redis, config.RATE_LIMIT_REDIS_PREFIX) : new MemoryRateLimiter(),
    rateLimits: rateLimitSettings(config),
    authCache,
    broadcast: fanout?.broadcast ?? (async () => undefined),
    metrics,
    trustProxy: config.TRUST_PROXY,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    maxJsonBodyBytes: config.MAX_JSON_BODY_BYTES,
    sessionCookie: config.SESSION_COOKIE_NAME,
  });

  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  logger.info({ port: config.PORT, redis: Boolean(redis) }, 'gateway listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    await keysSubscription?.stop();
    await events?.close();
    await fanout?.close();
    subscriber?.disconnect();
    redis?.disconnect();
    await telemetry.shutdown().catch(() => undefined);
    logger.info({}, 'stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/** The keys.v1 feed: the shared Postgres event log by default, Kafka on Kubernetes. */
function eventTransport(
  config: ReturnType<typeof loadGatewayConfig>,
): { transport: EventTransport; close: () => Promise<void> } | undefined {
  if (config.EVENTS_TRANSPORT === 'kafka') {
    const transport = createEventTransport({
      kind: 'kafka',
      brokers: (config.KAFKA_BROKERS ?? '').split(',').filter(Boolean),
      clientId: config.WHETSTONE_INSTANCE,
    });
    return { transport, close: () => transport.close() };
  }
  if (!config.EVENTS_DATABASE_URL) return undefined;
  const { pool } = pgPoolFromUrl(config.EVENTS_DATABASE_URL, 3);
  const transport = createEventTransport({ kind: 'postgres', pool });
  return {
    transport,
    close: async () => {
      await transport.close();
      await pool.end();
    },
  };
}

runMain('gateway', main);
