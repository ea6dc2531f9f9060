import path from 'node:path';
import { create } from '@bufbuild/protobuf';
import { ROOT_CONTEXT, context, trace, TraceFlags } from '@opentelemetry/api';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { AppError } from '@whetstone/errors';
import { createLogger } from '@whetstone/telemetry';
import { EchoService, EchoResponseSchema } from '@whetstone/proto/testing/v1';
import { Registry } from 'prom-client';
import {
  LIVENESS_SERVICE,
  activeTraceId,
  callerOf,
  createHealthChecker,
  createRpcClient,
  createRpcServer,
  type RpcServer,
} from '../src';

const lines: string[] = [];
const logger = createLogger({
  service: 'rpc-test',
  level: 'error',
  destination: { write: (l: string) => void lines.push(l) },
});

describe('rpc server and client factories (real HTTP/2 sockets)', () => {
  let server: RpcServer;
  let addr: string;
  const metrics = new Registry();

  beforeAll(async () => {
    server = await createRpcServer({
      name: 'echo',
      port: 0,
      host: '127.0.0.1',
      logger,
      metrics,
      register: (router) =>
        router.service(EchoService, {
          async echo(req, ctx) {
            if (req.fail === 'app-error') {
              throw new AppError('NotFound', 'DATASET_NOT_FOUND', `Dataset ${req.message} not found`, {
                fieldErrors: [{ field: 'name', message: 'unknown', code: 'not_found' }],
                metadata: { hint: 'list datasets' },
              });
            }
            if (req.fail === 'relay') {
              // Call ourselves with a generous timeout; the inbound deadline must win.
              const inner = await createRpcClient(EchoService, { addr, caller: 'relay', timeoutMs: 60_000 }).echo({
                message: 'inner',
                fail: 'report-deadline',
              });
              return create(EchoResponseSchema, { message: inner.message });
            }
            if (req.fail === 'report-deadline')
              return create(EchoResponseSchema, { message: String(ctx.timeoutMs() ?? -1) });
            if (req.fail === 'crash') throw new Error('connection string postgres://admin:s3cret@db leaked');
            if (req.fail === 'db-lost')
              throw Object.assign(new Error('terminating connection due to unexpected postmaster exit'), {
                code: '57P01',
              });
            if (req.fail === 'slow') {
              await new Promise<void>((resolve) => {
                const timer = setTimeout(resolve, 500);
                ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
              });
              ctx.signal.throwIfAborted();
            }
            return create(EchoResponseSchema, {
              message: req.message,
              caller: callerOf(ctx),
              traceId: activeTraceId(),
            });
          },
        }),
    });
    addr = `127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    await server.close();
  });

  const client = () => createRpcClient(EchoService, { addr, caller: 'test-caller' });

  it('when a client calls, then it gets the reply and the server sees the caller identity', async () => {
    expect(await client().echo({ message: 'hi' })).toMatchObject({ message: 'hi', caller: 'test-caller' });
  });

  it('when the handler throws an AppError, then the client rejects with the same kind, reason, fields and metadata', async () => {
    const err = await client()
      .echo({ message: 'x', fail: 'app-error' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      kind: 'NotFound',
      reason: 'DATASET_NOT_FOUND',
      message: 'Dataset x not found',
      fieldErrors: [{ field: 'name', message: 'unknown', code: 'not_found' }],
      metadata: { hint: 'list datasets' },
    });
  });

  it('when the handler crashes, then the client gets a generic Internal error and the cause is only logged', async () => {
    const err = (await client()
      .echo({ message: 'x', fail: 'crash' })
      .catch((e: unknown) => e)) as AppError;
    expect(err).toBeInstanceOf(AppError);
    expect(err.kind).toBe('Internal');
    expect(err.message).toBe('Internal server error');
    expect(JSON.stringify(err.toJSON())).not.toContain('s3cret');
    expect(lines.join('\n')).toContain('unhandled error in RPC handler');
  });

  it('when a call outlives its deadline, then it fails with DeadlineExceeded', async () => {
    const err = (await client()
      .echo({ message: 'x', fail: 'slow' }, { timeoutMs: 50 })
      .catch((e: unknown) => e)) as AppError;
    expect(err.kind).toBe('DeadlineExceeded');
  });

  it('when a handler calls another service, then the inner call inherits the inbound deadline', async () => {
    const res = await client().echo({ message: 'x', fail: 'relay' }, { timeoutMs: 2_000 });
    const innerBudget = Number(res.message);
    expect(innerBudget).toBeGreaterThan(0);
    expect(innerBudget).toBeLessThanOrEqual(2_000);
  });

  it('when a span is active on the client, then the server handler runs in the same trace', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const ctx = trace.setSpanContext(ROOT_CONTEXT, {
      traceId,
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    const res = await context.with(ctx, () => client().echo({ message: 't' }));
    expect(res.traceId).toBe(traceId);
  });

  it('when the service is unreachable, then the client rejects with Unavailable', async () => {
    const dead = createRpcClient(EchoService, { addr: '127.0.0.1:1', caller: 'test' });
    const err = (await dead.echo({ message: 'x' }).catch((e: unknown) => e)) as AppError;
    expect(err).toMatchObject({ kind: 'Unavailable', reason: 'DEPENDENCY_UNAVAILABLE' });
  });

  it('when health is checked, then it follows setServing', async () => {
    const health = createHealthChecker({ addr, caller: 'test' });
    expect(await health.check()).toBe(true);
    server.setServing(false);
    expect(await health.check()).toBe(false);
    server.setServing(true);
    expect(await health.check()).toBe(true);
  });

  it('when a handler loses its database connection, then the client gets Unavailable with a Retry-After, not Internal', async () => {
    const err = (await client()
      .echo({ message: 'x', fail: 'db-lost' })
      .catch((e: unknown) => e)) as AppError;
    expect(err).toMatchObject({ kind: 'Unavailable', reason: 'DEPENDENCY_UNAVAILABLE', retryAfterSeconds: 2 });
    expect(err.message).not.toContain('postmaster');
  });

  it('when a dependency fails, then health is NOT_SERVING for readiness and SERVING for liveness, and recovers', async () => {
    let databaseUp = true;
    const withDeps = await createRpcServer({
      name: 'deps',
      port: 0,
      host: '127.0.0.1',
      logger,
      metrics: new Registry(),
      dependencies: {
        postgres: () => (databaseUp ? Promise.resolve() : Promise.reject(new Error('ECONNREFUSED'))),
        slow: () => new Promise((resolve) => setTimeout(resolve, databaseUp ? 0 : 5_000).unref()),
      },
      register: () => undefined,
    });
    try {
      const health = createHealthChecker({ addr: `127.0.0.1:${withDeps.port}`, caller: 'test', timeoutMs: 3_000 });
      expect(await health.check()).toBe(true);
      databaseUp = false;
      await new Promise((r) => setTimeout(r, 1_100)); // past the probe cache
      expect(await health.check()).toBe(false);
      expect(await health.check(LIVENESS_SERVICE)).toBe(true);
      databaseUp = true;
      await new Promise((r) => setTimeout(r, 1_100));
      expect(await health.check()).toBe(true);
      withDeps.setServing(false);
      expect(await health.check(LIVENESS_SERVICE)).toBe(false);
    } finally {
      await withDeps.close();
    }
  });

  it('when a server starts with servingAtStart false, then readiness is NOT_SERVING and liveness SERVING until setServing(true)', async () => {
    const warming = await createRpcServer({
      name: 'warming',
      port: 0,
      host: '127.0.0.1',
      logger,
      metrics: new Registry(),
      servingAtStart: false,
      register: () => undefined,
    });
    try {
      const health = createHealthChecker({ addr: `127.0.0.1:${warming.port}`, caller: 'test' });
      expect(await health.check()).toBe(false);
      expect(await health.check(LIVENESS_SERVICE)).toBe(true);
      warming.setServing(true);
      expect(await health.check()).toBe(true);
      expect(await health.check(LIVENESS_SERVICE)).toBe(true);
    } finally {
      await warming.close();
    }
  });

  it('when calls complete, then per-RPC duration metrics are recorded by code', async () => {
    const text = await metrics.metrics();
    const counts = text
      .split('\n')
      .filter((l) => l.startsWith('whetstone_rpc_server_duration_seconds_count') && l.includes('method="Echo"'));
    expect(counts.find((l) => l.includes('code="ok"'))).toMatch(/ [1-9]\d*$/);
    expect(counts.find((l) => l.includes('code="not_found"'))).toMatch(/ [1-9]\d*$/);
  });

  it('when a plain @grpc/grpc-js client calls, then it gets the reply and a correct error status (wire interop)', async () => {
    const definition = protoLoader.loadSync(path.resolve(__dirname, '../../../proto/whetstone/testing/v1/echo.proto'), {
      keepCase: false,
    });
    const pkg = grpc.loadPackageDefinition(definition) as unknown as {
      whetstone: {
        testing: {
          v1: {
            EchoService: new (
              addr: string,
              creds: grpc.ChannelCredentials,
            ) => grpc.Client & {
              Echo: (req: object, cb: (err: grpc.ServiceError | null, res: { message: string }) => void) => void;
            };
          };
        };
      };
    };
    const raw = new pkg.whetstone.testing.v1.EchoService(addr, grpc.credentials.createInsecure());
    const call = (req: object) =>
      new Promise<{ message: string }>((resolve, reject) =>
        raw.Echo(req, (err, res) => (err ? reject(err) : resolve(res))),
      );
    expect(await call({ message: 'from grpc-js' })).toMatchObject({ message: 'from grpc-js' });
    const err = (await call({ message: 'x', fail: 'app-error' }).catch((e: unknown) => e)) as grpc.ServiceError;
    expect(err.code).toBe(grpc.status.NOT_FOUND);
    expect(err.details).toBe('Dataset x not found');
    raw.close();
  });
});
