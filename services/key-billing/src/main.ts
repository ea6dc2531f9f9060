/** Composition root: config → adapters → buildApp → listen; drains on SIGTERM. */
import { createLogger } from '@whetstone/telemetry';
import { createPrismaClient } from './adapters/prisma-client';
import { prismaOutbox } from './adapters/prisma-outbox';
import { createPrismaUnitOfWork } from './adapters/prisma.repositories';
import { createScryptPasswordHasher } from './adapters/scrypt-password-hasher';
import { systemClock } from './adapters/system-clock';
import { buildApp } from './app';
import { loadKeyBillingConfig } from './config';
import { createMetrics, startMetricsServer } from './transport/metrics';
import { startRpcServer } from './transport/rpc/server';

async function main(): Promise<void> {
  const config = loadKeyBillingConfig();
  const logger = createLogger({ service: 'key-billing', level: config.LOG_LEVEL });
  const prisma = createPrismaClient(config.DATABASE_URL);
  const schema = new URL(config.DATABASE_URL).searchParams.get('schema') ?? 'public';
  const app = buildApp({
    uow: createPrismaUnitOfWork(prisma, schema, prismaOutbox),
    clock: systemClock,
    passwords: createScryptPasswordHasher(),
    adminToken: config.ADMIN_TOKEN,
    logger,
  });
  const metrics = createMetrics();
  const server = await startRpcServer({ port: config.PORT, logger, register: (router) => app.registerRoutes(router), interceptors: [metrics.rpcInterceptor] });
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT);
  logger.info({ port: server.port, metricsPort: metricsServer.port, adminGuarded: Boolean(config.ADMIN_TOKEN) }, 'key-billing listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    await server.close();
    await metricsServer.close();
    await prisma.$disconnect();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`key-billing failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
