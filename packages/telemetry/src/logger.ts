import { context, trace } from '@opentelemetry/api';
import pino from 'pino';
import { RepeatLimiter } from './repeat-limiter';

/** The concrete pino logger `createLogger` returns. */
export type PinoLogger = pino.Logger;

/**
 * The one logger port every layer takes: structured fields first, then a
 * message. pino's logger satisfies it, and a unit test can pass a plain object.
 */
export interface Logger {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
  /** A logger that adds `bindings` to every line. */
  child(bindings: Record<string, unknown>): Logger;
}

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

/**
 * One JSON logger per process, with secret redaction built in. Warnings and errors that repeat are
 * summarised rather than written each time, and a stack trace is written once (see RepeatLimiter).
 */
export function createLogger(options: LoggerOptions): PinoLogger {
  let summarising = false;
  const limiter = new RepeatLimiter((level, fields, message) => {
    const name = pino.levels.labels[level] as pino.Level | undefined;
    if (!name) return;
    summarising = true;
    try {
      root[name](fields, message);
    } finally {
      summarising = false;
    }
  });
  // Summaries are written after start-up, once `root` exists.
  const root: pino.Logger = pino(
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
      hooks: {
        logMethod(args, method, level) {
          if (level < WARN_LEVEL || summarising) return method.apply(this, args);
          const [first, second] = args as unknown[];
          const fields = typeof first === 'object' && first !== null ? (first as Record<string, unknown>) : undefined;
          const message = String((fields ? second : first) ?? '');
          const err = fields?.err;
          const decision = limiter.decide(level, message, err);
          if (!decision.write) return;
          if (decision.dropStack && err instanceof Error) {
            // The same error, its stack cut to its first line (the full one was printed before).
            const short = Object.assign(Object.create(Object.getPrototypeOf(err) as object) as Error, err, {
              message: err.message,
              stack: `${err.name}: ${err.message} (stack printed before)`,
            });
            return method.apply(this, [{ ...fields, err: short }, message]);
          }
          return method.apply(this, args);
        },
      },
    },
    options.destination,
  );
  return root;
}

const WARN_LEVEL = 40;
