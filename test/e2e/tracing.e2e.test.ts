import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { eventually } from '@whetstone/testing';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

/** One span as the OTLP/HTTP JSON exporter sends it, with the service that sent it. */
interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: { stringValue?: string } }[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: { key: string; value: Record<string, unknown> }[];
      }[];
    }[];
  }[];
}

/**
 * A stand-in for an OpenTelemetry collector: accepts OTLP/HTTP JSON on /v1/traces, as the real processes export
 * it, and keeps every span.
 */
async function startOtlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !/json/.test(req.headers['content-type'] ?? '')) {
        res.writeHead(415).end();
        return;
      }
      const payload = JSON.parse(body) as OtlpJson;
      for (const rs of payload.resourceSpans ?? []) {
        const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind,
              attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]])),
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const SPAN_KIND_CONSUMER = 5;

/**
 * Issue 18's tracing, through `pnpm start` with every process exporting OTLP to a receiver in this test: one
 * extraction is one trace from the gateway through the router and the model-server, and on through the outbox
 * and the event log to the history consumer.
 */
describe('tracing, end to end through pnpm start', () => {
  let system: RunningSystem;
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    system = await startSystem({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '200' },
    });
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
    await receiver?.close();
  }, 30_000);

  it('when a client sends a traceparent with an extraction, then gateway, router, model-server and history spans share its trace id', async () => {
    const { key } = await signUpWithKey(system.baseUrl, 'tracing');
    const traceId = randomBytes(16).toString('hex');
    const res = await fetch(`${system.baseUrl}/inference`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': key,
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
      body: JSON.stringify({
        model_id: 'whetstone-extract-base',
        text: 'Ada Lovelace worked with Charles Babbage in London.',
        schema: { entities: ['person', 'city'] },
      }),
    });
    expect(res.status).toBe(200);

    const inTrace = () => receiver.spans.filter((s) => s.traceId === traceId);
    await eventually(
      async () => {
        const services = new Set(inTrace().map((s) => s.service));
        for (const service of ['gateway', 'inference-router', 'model-server', 'inference-history'])
          expect(services).toContain(service);
        return true;
      },
      30_000,
      200,
    );

    const spans = inTrace();
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const one = (service: string, kind: number, name: RegExp) => {
      const found = spans.find((s) => s.service === service && s.kind === kind && name.test(s.name));
      if (!found)
        throw new Error(`no ${service} span ${name}: ${spans.map((s) => `${s.service}:${s.name}`).join(', ')}`);
      return found;
    };
    // The gateway's HTTP server span continues the client's trace; its gRPC call is the router's parent.
    const gatewayHttp = one('gateway', SPAN_KIND_SERVER, /POST/);
    expect(gatewayHttp.attributes['http.request.method'] ?? gatewayHttp.attributes['http.method']).toBe('POST');
    const routerServer = one('inference-router', SPAN_KIND_SERVER, /^whetstone\.inference\.v1\.\w+\/\w+$/);
    const routerParent = byId.get(routerServer.parentSpanId);
    expect(routerParent).toMatchObject({ service: 'gateway', kind: SPAN_KIND_CLIENT });
    // The router's call to the model-server.
    const modelServer = one('model-server', SPAN_KIND_SERVER, /ModelServerService\/Extract$/);
    expect(byId.get(modelServer.parentSpanId)).toMatchObject({ service: 'inference-router', kind: SPAN_KIND_CLIENT });
    // The history consumer took InferenceCompleted from the event log inside the same trace, and wrote it to
    // Postgres under its span.
    const consumer = one('inference-history', SPAN_KIND_CONSUMER, /^process inferences\.v1$/);
    expect(consumer.attributes['messaging.destination.name']).toBe('inferences.v1');
    expect(byId.get(consumer.parentSpanId)?.service).toBe('inference-router');
    expect(spans.some((s) => s.service === 'inference-history' && s.parentSpanId === consumer.spanId)).toBe(true);
    const dbSystem = (s: ReceivedSpan) => s.attributes['db.system.name'] ?? s.attributes['db.system'];
    expect(spans.some((s) => s.service === 'inference-history' && dbSystem(s) === 'postgresql')).toBe(true);
    // The gateway's rate limit on Redis (the system runs with REDIS_URL) is in the trace too.
    expect(spans.some((s) => s.service === 'gateway' && dbSystem(s) === 'redis')).toBe(true);
  }, 90_000);
});
