/**
 * Hosts the embedded Postgres for `pnpm start` in its own process group (see
 * startEmbeddedPostgres). Protocol over IPC: it sends `{ready: url}` or
 * `{error}`, then `{down: why}` and `{up: ms}` if the server dies and is
 * restarted; it stops Postgres on the message `stop`, on SIGTERM, or when its
 * parent goes away.
 *
 * It supervises the server like `pnpm start` supervises services: when the
 * server process exits unasked (killed, crashed), it starts it again on the same
 * data, retrying with backoff (0.25 s doubling to 2 s) until it is up. Services
 * reconnect by themselves.
 */
import { runEmbeddedPostgres, type HostEvent, type HostedPostgres } from './embedded-postgres';

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 2_000;

async function main(): Promise<void> {
  const [dataDir, port] = process.argv.slice(2);
  if (!dataDir || !port) throw new Error('usage: pg-host <data-dir> <port>');
  let db: HostedPostgres;
  try {
    db = await runEmbeddedPostgres(dataDir, Number(port));
  } catch (err) {
    process.send?.({ error: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  }
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await db.stop().catch(() => undefined);
    process.exit(0);
  };
  process.on('message', (m) => m === 'stop' && void stop());
  process.on('disconnect', () => void stop());
  process.on('SIGTERM', () => void stop());
  // A terminal Ctrl-C is for `pnpm start`, which stops this host last.
  process.on('SIGINT', () => undefined);
  process.send?.({ ready: db.url });
  void supervise(db, () => stopping);
}

/** Restart the server whenever it exits while we are not stopping. */
async function supervise(db: HostedPostgres, stopping: () => boolean): Promise<void> {
  const tell = (event: HostEvent) => process.send?.(event);
  for (;;) {
    const why = await db.exited();
    if (stopping()) return;
    const downAt = Date.now();
    tell({ down: why });
    for (let delay = FIRST_RETRY_MS; ; delay = Math.min(MAX_RETRY_MS, delay * 2)) {
      // Backends of a killed server exit on their own within moments; until then a new one cannot start.
      await new Promise((r) => setTimeout(r, delay));
      if (stopping()) return;
      try {
        await db.restart();
        break;
      } catch {
        // try again
      }
    }
    if (stopping()) return;
    tell({ up: Date.now() - downAt });
  }
}

void main();
