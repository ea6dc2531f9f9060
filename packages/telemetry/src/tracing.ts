import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { envDetector, hostDetector, osDetector, processDetector } from '@opentelemetry/resources';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';

/** Probes and scrapes: not worth a trace each (Kubernetes calls them every few seconds). */
const UNTRACED_PATHS = new Set(['/livez', '/readyz', '/metrics']);

/**
 * Whether this process exports traces: only when an OTLP endpoint is set in the standard variables
 * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT), and neither OTEL_SDK_DISABLED=true
 * nor OTEL_TRACES_EXPORTER=none says otherwise.
 */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

let instrumented = false;

/**
 * Patch http/express, pg (which also covers Prisma, whose driver adapter runs on pg) and ioredis. They patch
 * modules as they are required, so this must run before those modules load: a composition root imports
 * `@whetstone/telemetry/instrument` first. A no-op when tracing is off, so an untraced process pays nothing.
 * gRPC is traced by @whetstone/rpc itself, and events by @whetstone/events (see docs/observability.md).
 */
export function enableInstrumentations(env: NodeJS.ProcessEnv = process.env): void {
  if (instrumented || !tracingEnabled(env)) return;
  instrumented = true;
  registerInstrumentations({
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]!),
      }),
      new ExpressInstrumentation(),
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
}

/**
 * Start OpenTelemetry tracing for a service when an OTLP endpoint is configured (see `tracingEnabled`); the
 * exporter is OTLP over HTTP (JSON) and reads every other setting from the standard OTEL_* variables. Only
 * the env, host, os and process resource detectors run (cloud detectors probe metadata IPs). When tracing is
 * off nothing starts; W3C trace context still passes through gRPC calls and events (see @whetstone/rpc).
 */
export function initTelemetry(options: { service: string; env?: NodeJS.ProcessEnv }): { shutdown(): Promise<void> } {
  const env = options.env ?? process.env;
  if (!tracingEnabled(env)) return { shutdown: async () => undefined };
  enableInstrumentations(env);
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME?.trim() || options.service,
    resourceDetectors: [envDetector, hostDetector, osDetector, processDetector],
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
    // Traces only: metrics are Prometheus (/metrics) and logs are pino on stdout.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
