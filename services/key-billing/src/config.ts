import { env, loadConfig, z } from '@whetstone/config';
import { eventsEnv } from '@whetstone/events';

const schema = z.object({
  ...eventsEnv,
  PORT: env.port(50051),
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
