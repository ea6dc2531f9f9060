import type { Logger } from '@whetstone/telemetry';

/** A Logger that keeps what was logged, so a test can check that a cause was logged and not shown. */
export function recordingLogger(): Logger & { lines: { level: string; fields: object; message?: string }[] } {
  const lines: { level: string; fields: object; message?: string }[] = [];
  const at =
    (level: string) =>
    (fields: object, message?: string): void => {
      lines.push({ level, fields, message });
    };
  const logger = {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger;
}
