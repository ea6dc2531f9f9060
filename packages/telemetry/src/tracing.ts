import { NodeSDK } from '@opentelemetry/sdk-node';
import { envDetector, hostDetector, osDetector, processDetector } from '@opentelemetry/resources';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';

/**
 * Start OpenTelemetry tracing for a service. Only the env, host, os and
 * process resource detectors run (cloud detectors probe metadata IPs). Spans
 * are exported only when OTEL_EXPORTER_OTLP_ENDPOINT is set; trace context
 * still propagates without it (see @whetstone/rpc).
 */
export function initTelemetry(options: { service: string; env?: NodeJS.ProcessEnv }): { shutdown(): Promise<void> } {
  const env = options.env ?? process.env;
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const sdk = new NodeSDK({
    serviceName: options.service,
    resourceDetectors: [envDetector, hostDetector, osDetector, processDetector],
    ...(endpoint ? { traceExporter: new OTLPTraceExporter() } : {}),
    instrumentations: [],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
