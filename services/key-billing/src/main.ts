/** Composition root: config → adapters → buildApp → listen; drains on SIGTERM. */
import '@whetstone/telemetry/instrument';
import { startServiceEvents } from '@whetstone/events';
import { MICRO_PER_CREDIT } from '@whetstone/catalog';
import { createRpcServer } from '@whetstone/rpc';
import {
  createLogger,
  createServiceMetrics,
  drainOnSignals,
  initTelemetry,
  runMain,
  startMetricsServer,
} from '@whetstone/telemetry';
import { createPrismaClient } from './adapters/prisma-client';
import { prismaOutbox } from './adapters/prisma-outbox';
import { createPrismaUnitOfWork } from './adapters/prisma.repositories';
import { createScryptPasswordHasher } from './adapters/scrypt-password-hasher';
import { systemClock } from './adapters/system-clock';
import { buildApp } from './app';
import { loadKeyBillingConfig } from './config';
import { startUsageConsumer } from './transport/events/usage-recorded.consumer';

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'key-billing' });
  const config = loadKeyBillingConfig();
  const logger = createLogger({ service: 'key-billing', level: config.LOG_LEVEL });
  const prisma = createPrismaClient(config.DATABASE_URL);
  const schema = new URL(config.DATABASE_URL).searchParams.get('schema') ?? 'public';
  const app = buildApp({
    uow: createPrismaUnitOfWork(prisma, schema, prismaOutbox),
    clock: systemClock,
    passwords: createScryptPasswordHasher(),
    adminToken: config.ADMIN_TOKEN,
    freeAllowanceMicro: BigInt(Math.round(config.FREE_ALLOWANCE_CREDITS * Number(MICRO_PER_CREDIT))),
    logger,
  });

  // Events: our outbox → the transport (keys.v1); billing.usage.v1 → exactly-once debits, a batch per transaction.
  const events = startServiceEvents(config, { clientId: 'key-billing', defaultSchema: schema, logger });
  const usage = await startUsageConsumer(events.transport, app, logger);

  // Monthly renewal of paid plans: at start and hourly. Idempotent per team and billing month.
  const renew = () =>
    app.renewMonthly().then(
      (r) => r.renewed > 0 && logger.info(r, 'renewed paid plans'),
      (err: unknown) => logger.warn({ err }, 'monthly renewal failed; will retry within the hour'),
    );
  void renew();
  const renewal = setInterval(() => void renew(), 3_600_000);
  renewal.unref();

  const metrics = createServiceMetrics('key-billing');
  const server = await createRpcServer({
    name: 'key-billing',
    host: config.HOST,
    port: config.PORT,
    logger,
    metrics: metrics.registry,
    dependencies: events.dependencies,
    register: (router) => app.registerRoutes(router),
    onCall: metrics.onCall,
  });
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.HOST);
  logger.info(
    {
      port: server.port,
      metricsPort: metricsServer.port,
      adminGuarded: Boolean(config.ADMIN_TOKEN),
      events: config.EVENTS_TRANSPORT,
    },
    'key-billing listening',
  );

  drainOnSignals(
    logger,
    [
      () => clearInterval(renewal),
      () => server.close(),
      () => usage.stop(),
      () => events.close(),
      () => metricsServer.close(),
      () => prisma.$disconnect(),
    ],
    telemetry,
  );
}

runMain('key-billing', main);
