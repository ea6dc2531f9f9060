import type { Pool, PoolClient } from 'pg';
import type { Logger } from '@whetstone/telemetry';

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;

export interface PgListener {
  /** Whether the LISTEN connection is up now (false while it reconnects). */
  readonly connected: boolean;
  stop(): Promise<void>;
}

export interface PgListenOptions {
  pool: Pool;
  channel: string;
  /** Each NOTIFY's payload ('' when it had none). */
  onNotify: (payload: string) => void;
  /**
   * Called once the connection is back after a loss: notifications sent meanwhile were missed,
   * so a subscriber looks for work now instead of waiting for its next poll.
   */
  onReconnect?: () => void;
  logger: Pick<Logger, 'warn' | 'info'>;
}

/**
 * THE way to LISTEN on a Postgres channel: one dedicated connection from the pool that, when the
 * database goes away (restart, failover, a killed backend), is dropped and re-established with
 * backoff (0.1 s doubling to 5 s), without crashing the process. The first connection is made
 * before this resolves, so a service that starts without its database fails at start as before.
 */
export async function listenWithReconnect(options: PgListenOptions): Promise<PgListener> {
  const { pool, channel, logger } = options;
  let client: PoolClient | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let delay = FIRST_RETRY_MS;

  const onNotification = (n: { channel: string; payload?: string | undefined }) => {
    if (n.channel === channel) options.onNotify(n.payload ?? '');
  };

  const connect = async (): Promise<void> => {
    const c = await pool.connect();
    const lost = (err: unknown) => {
      if (client !== c) return;
      client = undefined;
      c.off('notification', onNotification);
      // Released with the error, so the pool discards the broken connection.
      c.release(err instanceof Error ? err : new Error('connection lost'));
      if (stopped) return;
      logger.warn({ err, channel }, 'LISTEN connection lost; reconnecting');
      schedule();
    };
    c.on('notification', onNotification);
    c.on('error', lost);
    c.on('end', () => lost(new Error('connection ended')));
    try {
      await c.query(`LISTEN ${channel}`);
    } catch (err) {
      c.off('notification', onNotification);
      c.release(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
    client = c;
  };

  const schedule = () => {
    retry = setTimeout(() => {
      retry = undefined;
      if (stopped) return;
      connect().then(
        () => {
          delay = FIRST_RETRY_MS;
          logger.info({ channel }, 'LISTEN connection re-established');
          options.onReconnect?.();
        },
        () => {
          delay = Math.min(MAX_RETRY_MS, delay * 2);
          schedule();
        },
      );
    }, delay);
    retry.unref();
  };

  await connect();
  return {
    get connected() {
      return client !== undefined;
    },
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = undefined;
      if (!c) return;
      c.off('notification', onNotification);
      await c.query(`UNLISTEN ${channel}`).catch(() => undefined);
      c.release();
    },
  };
}
