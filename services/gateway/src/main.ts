/** Composition root: config → adapters → buildApp → listen; drains on SIGTERM. */
import '@whetstone/telemetry/instrument';
import http from 'node:http';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { FsBlobStore, createSignedUrlHandler } from '@whetstone/blobs';
import { createLogger, drainOnSignals, initTelemetry, runMain } from '@whetstone/telemetry';
import { connectBackends } from './adapters/backends';
import { eventFeed } from './adapters/event-feed';
import { connectSharedState } from './adapters/shared-state';
import { AuthCache } from './application/auth-cache';
import { buildApp } from './app';
import { loadGatewayConfig, rateLimitSettings, type GatewayConfig } from './config';
import { KEYS_TOPIC, keysConsumer } from './transport/events/keys.consumer';
import { answerClientErrors } from './transport/http/errors';

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'gateway' });
  const config = loadGatewayConfig();
  const logger = createLogger({ service: 'gateway', level: config.LOG_LEVEL });
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });

  const authCache = new AuthCache(config.AUTH_CACHE_TTL_SECONDS * 1000);
  const shared = await connectSharedState(config, authCache, logger);
  // Revocations and blocks from key-billing drop cached keys; an ephemeral group per process sees every event.
  const events = eventFeed(config);
  const keysSubscription = await events?.transport.subscribe({
    group: `${config.WHETSTONE_INSTANCE}-${process.pid}-${Date.now()}`,
    topics: [KEYS_TOPIC],
    fromLatest: true,
    handler: keysConsumer(authCache),
    logger,
  });

  const blobHandler = localBlobHandler(config);
  const { app } = buildApp({
    logger,
    ...connectBackends(config, logger),
    ...(blobHandler ? { blobHandler } : {}),
    rateLimiter: shared.rateLimiter,
    rateLimits: rateLimitSettings(config),
    authCache,
    broadcast: shared.broadcast,
    redisUp: shared.redisUp,
    metrics,
    trustProxy: config.TRUST_PROXY,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    maxJsonBodyBytes: config.MAX_JSON_BODY_BYTES,
    maxBatchBodyBytes: config.MAX_BATCH_BODY_BYTES,
    maxFileBytes: config.MAX_FILE_BYTES,
    sessionCookie: config.SESSION_COOKIE_NAME,
  });

  const server = http.createServer(app);
  answerClientErrors(server);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  logger.info({ port: config.PORT, redis: shared.usesRedis }, 'gateway listening');

  drainOnSignals(
    logger,
    [
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        }),
      () => keysSubscription?.stop(),
      () => events?.close(),
      () => shared.close(),
    ],
    telemetry,
  );
}

/** The embedded default's filesystem store serves its signed URLs through the gateway; S3 serves its own. */
function localBlobHandler(config: GatewayConfig) {
  if (config.BLOB_STORE !== 'fs' || !config.BLOB_SIGNING_SECRET) return undefined;
  return createSignedUrlHandler(
    new FsBlobStore({
      root: config.BLOB_FS_ROOT,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      signingSecret: config.BLOB_SIGNING_SECRET,
      maxPutBytes: config.BLOB_MAX_UPLOAD_BYTES,
    }),
  );
}

runMain('gateway', main);
