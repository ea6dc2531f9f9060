/**
 * Hosts the embedded Postgres for `pnpm start` in its own process group (see
 * startEmbeddedPostgres). Protocol over IPC: it sends `{ready: url}` or
 * `{error}`, and stops Postgres on the message `stop`, on SIGTERM, or when its
 * parent goes away.
 */
import { runEmbeddedPostgres } from './embedded-postgres';

async function main(): Promise<void> {
  const [dataDir, port] = process.argv.slice(2);
  if (!dataDir || !port) throw new Error('usage: pg-host <data-dir> <port>');
  let db: Awaited<ReturnType<typeof runEmbeddedPostgres>>;
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
}

void main();
