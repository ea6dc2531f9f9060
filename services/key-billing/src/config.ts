import { env, loadConfig, z } from '@whetstone/config';
import { eventsEnv } from '@whetstone/events';

const schema = z.object({
  ...eventsEnv,
  PORT: env.port(50051),
  /** Where the gRPC and metrics ports listen: loopback unless set (the chart sets 0.0.0.0). */
  HOST: env.host('127.0.0.1'),
  METRICS_PORT: env.port(9451),
  DATABASE_URL: env.url(),
  /** When set, admin RPCs require `authorization: Bearer <ADMIN_TOKEN>`. */
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  LOG_LEVEL: env.logLevel(),
  /** The free plan's one-time signup allowance, in credits (1 credit = $0.01). */
  FREE_ALLOWANCE_CREDITS: z.coerce.number().min(0).max(1_000_000).default(500),
});

/** key-billing's validated environment. */
export type KeyBillingConfig = z.infer<typeof schema>;

/** Read and validate the environment; lists every bad variable at once. */
export function loadKeyBillingConfig(source: NodeJS.ProcessEnv = process.env): KeyBillingConfig {
  return loadConfig(schema, source);
}

/** What the operator CLI (`pnpm whetstone admin`) reads; passed on as given (the service judges the token). */
export interface AdminCliEnv {
  /** host:port of key-billing's gRPC server. */
  KEY_BILLING_ADDR?: string | undefined;
  /** Bearer token for the admin service. */
  ADMIN_TOKEN?: string | undefined;
}

export function loadAdminCliEnv(source: NodeJS.ProcessEnv = process.env): AdminCliEnv {
  return { KEY_BILLING_ADDR: source.KEY_BILLING_ADDR, ADMIN_TOKEN: source.ADMIN_TOKEN };
}
