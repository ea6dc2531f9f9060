import { create } from '@bufbuild/protobuf';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AppError } from '@whetstone/errors';
import { EchoService, EchoResponseSchema } from '@whetstone/proto/testing/v1';
import { createLogger } from '@whetstone/telemetry';
import { Registry } from 'prom-client';
import { closeRpcChannels, createHealthChecker, createRpcClient, createRpcServer, type RpcServer } from '../src';

const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
const logger = createLogger({ service: 'rpc-tracing-test', level: 'silent' });

describe('rpc spans with a tracing SDK', () => {
  let server: RpcServer;
  let addr: string;

  beforeAll(async () => {
    server = await createRpcServer({
      name: 'echo',
      port: 0,
      host: '127.0.0.1',
      logger,
      metrics: new Registry(),
      register: (router) =>
        router.service(EchoService, {
          async echo(req) {
            if (req.fail === 'app-error') throw new AppError('NotFound', 'DATASET_NOT_FOUND', 'no such dataset');
            return create(EchoResponseSchema, { message: req.message });
          },
        }),
    });
    addr = `127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    closeRpcChannels();
    await server.close();
  });

  beforeEach(() => exporter.reset());

  const spansOf = async (work: () => Promise<unknown>) => {
    const outer = await trace.getTracer('test').startActiveSpan('outer', async (span) => {
      await work().catch(() => undefined);
      span.end();
      return span.spanContext();
    });
    // The server span ends just after the reply is sent.
    for (let i = 0; i < 50 && exporter.getFinishedSpans().length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    const spans = exporter.getFinishedSpans();
    return {
      outer,
      client: spans.find((s) => s.kind === SpanKind.CLIENT)!,
      server: spans.find((s) => s.kind === SpanKind.SERVER)!,
    };
  };

  it('when a call is made inside a span, then a client span and a server span continue that trace', async () => {
    const client = createRpcClient(EchoService, { addr, caller: 'test' });
    const { outer, client: c, server: s } = await spansOf(() => client.echo({ message: 'hi' }));
    expect(c.name).toBe('whetstone.testing.v1.EchoService/Echo');
    expect(c.parentSpanContext?.spanId).toBe(outer.spanId);
    expect(s.name).toBe('whetstone.testing.v1.EchoService/Echo');
    expect(s.parentSpanContext?.spanId).toBe(c.spanContext().spanId);
    expect(s.spanContext().traceId).toBe(outer.traceId);
    expect(s.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'whetstone.testing.v1.EchoService',
      'rpc.method': 'Echo',
      'rpc.grpc.status_code': 0,
    });
    expect(c.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('when the handler fails, then both spans carry the gRPC status code and an error status', async () => {
    const client = createRpcClient(EchoService, { addr, caller: 'test' });
    const { client: c, server: s } = await spansOf(() => client.echo({ message: 'x', fail: 'app-error' }));
    for (const span of [c, s]) {
      expect(span.attributes['rpc.grpc.status_code']).toBe(5); // NOT_FOUND
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
    }
  });

  it('when health is checked, then no span is recorded on the server', async () => {
    await createHealthChecker({ addr, caller: 'test' }).check();
    await new Promise((r) => setTimeout(r, 50));
    expect(exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER)).toEqual([]);
  });
});
