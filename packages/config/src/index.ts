import { z } from 'zod';

export { z };

/** Thrown at boot when the environment is invalid; lists every bad variable at once. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parse `env` (default: process.env) against a zod object whose keys are the
 * UPPER_SNAKE variable names. The only place a service reads its environment.
 */
export function loadConfig<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path.join('.') || '(root)';
    const present = issue.path.length > 0 && env[String(issue.path[0])] !== undefined;
    return `${name}: ${issue.message}${present ? '' : ' (not set)'}`;
  });
  throw new ConfigError(problems);
}

/** Common field helpers so every service spells its variables the same way. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  /**
   * The address a server listens on (`HOST`): `127.0.0.1`, loopback only, for an internal port on one machine;
   * `0.0.0.0`, every interface, where other hosts must reach it (a pod: the chart sets it).
   */
  host: (fallback: string) =>
    z
      .string()
      .regex(/^[\w.:-]+$/, 'must be an IP address or host name, e.g. 127.0.0.1 or 0.0.0.0')
      .default(fallback),
  url: () => z.string().url(),
  bool: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'])
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1' || v === 'yes'),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * Another service's gRPC address: `host:port`, or a target that balances over several replicas,
   * `dns:///host:port` or `ipv4:a.b.c.d:port,…` (see @whetstone/rpc).
   */
  addr: () =>
    z
      .string()
      .regex(
        /^(?:(?:dns:\/\/\/)?[\w.-]+:\d+|ipv4:\d+\.\d+\.\d+\.\d+:\d+(?:,\d+\.\d+\.\d+\.\d+:\d+)*)$/,
        'must be host:port, dns:///host:port or ipv4:address:port,…',
      ),
};

export { isNonPublicAddress, publicOnlyLookup, type ConnectLookup } from './network';
