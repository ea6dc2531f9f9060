import { Pool } from 'pg';
import { SpanKind, context, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createLogger } from '@whetstone/telemetry';
import { createTestSchema, eventually, testDatabaseUrl, type TestSchema } from '@whetstone/testing';
import { appendOutbox, ensureOutbox, PgEventLog, startOutboxRelay, traceHeaders, type Subscription } from '../src';

const logger = createLogger({ service: 'events-tracing-test', level: 'silent' });
const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
const tracer = trace.getTracer('events-tracing-test');

/** The producer's trace, carried by the outbox row, through the relay and the Postgres event log, to a consumer. */
describe('trace context through outbox, relay and consumer (real Postgres)', () => {
  let pool: Pool;
  let logSchema: TestSchema;
  let producer: TestSchema;
  let log: PgEventLog;
  const subscriptions: Subscription[] = [];

  beforeAll(async () => {
    pool = new Pool({ connectionString: testDatabaseUrl(), max: 10 });
    logSchema = await createTestSchema('evtrace');
    producer = await createTestSchema('evtraceprod');
    log = new PgEventLog(pool, logSchema.name);
    await ensureOutbox(pool, producer.name);
  });

  afterAll(async () => {
    await Promise.all(subscriptions.map((s) => s.stop()));
    await log.close();
    await logSchema.drop();
    await producer.drop();
    await pool.end();
  });

  /** Writes one outbox row inside a producer span, as a request handler would; returns that span's context. */
  const produce = (topic: string) =>
    tracer.startActiveSpan('handle request', async (span) => {
      await appendOutbox(pool, producer.name, [
        { topic, key: 'k', type: 'test.Event', payload: new Uint8Array([1]), headers: traceHeaders() },
      ]);
      span.end();
      return span.spanContext();
    });

  it.each([['one by one', false] as const, ['in batches', true] as const])(
    'when a consumer takes an event %s, then its handler runs in a CONSUMER span that is a child of the producer span',
    async (_label, batched) => {
      const topic = `trace-${batched ? 'batch' : 'single'}.v1`;
      const seen: { traceId: string; spanId: string }[] = [];
      const record = async () => void seen.push(trace.getSpanContext(context.active())!);
      subscriptions.push(
        await log.subscribe({
          group: `g-${topic}`,
          topics: [topic],
          logger,
          ...(batched ? { handleBatch: record } : { handler: record }),
        }),
      );
      const relay = startOutboxRelay({ pool, schema: producer.name, transport: log, logger, pollMs: 20 });
      try {
        const parent = await produce(topic);
        await eventually(async () => seen.length === 1);
        const consumer = exporter
          .getFinishedSpans()
          .find((s) => s.kind === SpanKind.CONSUMER && s.attributes['messaging.destination.name'] === topic);
        expect(consumer).toBeDefined();
        expect(consumer!.name).toBe(`process ${topic}`);
        expect(consumer!.spanContext().traceId).toBe(parent.traceId);
        expect(consumer!.parentSpanContext?.spanId).toBe(parent.spanId);
        expect(consumer!.attributes['messaging.consumer.group.name']).toBe(`g-${topic}`);
        // The handler saw the consumer span as active (so its own spans and log lines join the trace).
        expect(seen[0]).toMatchObject({ traceId: parent.traceId, spanId: consumer!.spanContext().spanId });
      } finally {
        await relay.stop();
      }
    },
  );
});
