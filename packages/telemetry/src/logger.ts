import { context, trace } from '@opentelemetry/api';
import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Paths whose values never reach a log line: keys, passwords, cookies, hub
 * tokens and presigned URLs (which are bearer credentials).
 */
export const REDACT_PATHS = [
  'password',
  '*.password',
  'secret',
  '*.secret',
  'secret_key',
  '*.secret_key',
  'secretKey',
  '*.secretKey',
  'apiKey',
  '*.apiKey',
  'api_key',
  '*.api_key',
  'hub_token',
  '*.hub_token',
  'hubToken',
  '*.hubToken',
  'token',
  '*.token',
  'download_url',
  '*.download_url',
  'upload_url',
  '*.upload_url',
  'url',
  '*.url',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers.cookie',
];

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Where to write; defaults to stdout. Tests pass a stream to inspect output. */
  destination?: pino.DestinationStream;
}

/** One JSON logger per process, with secret redaction built in. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.service,
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Correlate log lines with traces when a span is active.
      mixin() {
        const span = trace.getSpanContext(context.active());
        return span ? { trace_id: span.traceId, span_id: span.spanId } : {};
      },
    },
    options.destination,
  );
}
