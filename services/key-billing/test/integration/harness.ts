import type { Client } from '@connectrpc/connect';
import { KeyBillingAdminService, KeyBillingService } from '@whetstone/proto/keybilling/v1';
import { createLogger, createServiceMetrics, startMetricsServer } from '@whetstone/telemetry';
import { prismaOutbox } from '../../src/adapters/prisma-outbox';
import { createPrismaUnitOfWork } from '../../src/adapters/prisma.repositories';
import { createScryptPasswordHasher } from '../../src/adapters/scrypt-password-hasher';
import { systemClock } from '../../src/adapters/system-clock';
import { buildApp, type KeyBillingApp } from '../../src/app';
import { createRpcClient, createRpcServer } from '@whetstone/rpc';
import { createKeyBillingDatabase } from '../factories/database';

export interface Harness {
  addr: string;
  metricsUrl: string;
  app: KeyBillingApp;
  db: Awaited<ReturnType<typeof createKeyBillingDatabase>>;
  client: Client<typeof KeyBillingService>;
  admin: Client<typeof KeyBillingAdminService>;
  close(): Promise<void>;
}

/** The real service in-process on port 0 over a fresh schema, with real gRPC clients. */
export async function startHarness(options: { adminToken?: string } = {}): Promise<Harness> {
  const db = await createKeyBillingDatabase('kb_it');
  const logger = createLogger({ service: 'key-billing-test', level: 'silent' });
  const app = buildApp({
    uow: createPrismaUnitOfWork(db.prisma, db.schema.name, prismaOutbox),
    clock: systemClock,
    // Lower scrypt cost than production: same code path, less CPU on a shared machine.
    passwords: createScryptPasswordHasher({ N: 1 << 12, r: 8, p: 1 }),
    adminToken: options.adminToken,
    logger,
  });
  const metrics = createServiceMetrics('key-billing');
  const server = await createRpcServer({
    name: 'key-billing',
    metrics: metrics.registry,
    port: 0,
    host: '127.0.0.1',
    logger,
    register: (r) => app.registerRoutes(r),
    onCall: metrics.onCall,
  });
  const metricsServer = await startMetricsServer(metrics.registry, 0, '127.0.0.1');
  const addr = `127.0.0.1:${server.port}`;
  return {
    addr,
    metricsUrl: `http://127.0.0.1:${metricsServer.port}/metrics`,
    app,
    db,
    client: createRpcClient(KeyBillingService, { addr, caller: 'key-billing-test' }),
    admin: createRpcClient(KeyBillingAdminService, { addr, caller: 'key-billing-test' }),
    async close() {
      await server.close();
      await metricsServer.close();
      await db.close();
    },
  };
}

/** The typed error a call failed with (one helper for every service's tests). */
export { rpcError } from '@whetstone/testing';
