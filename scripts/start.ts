/**
 * `pnpm start`: runs the whole system on the embedded default.
 * Real Postgres (embedded unless DATABASE_URL is set), migrations, then every
 * deployable as its own process, wired by <SVC>_ADDR variables.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEPLOYABLES, type Deployable } from './lib/deployables';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './lib/embedded-postgres';
import { Supervisor } from './lib/supervisor';
import { withSchema } from '../tools/prisma/connection';
import { deployMigrations, MigrationError } from '../tools/prisma/migrate';

const HELP = `Usage: pnpm start [options]

Starts every Whetstone deployable as its own process, with prefixed logs,
restart of a crashed child, and a clean stop on Ctrl-C.

Without DATABASE_URL an embedded Postgres runs with its data in <data-dir>/postgres;
if it dies it is restarted, and the services reconnect by themselves.
With REDIS_URL set, rate limits and auth-cache invalidation use Redis.

Options:
  --data-dir <dir>      where embedded Postgres, blobs and local secrets live (default: .data)
  --port-offset <n>     add n to every port (run a second copy side by side)    (default: 0)
                        every port must stay at most 65535, and the gateway off ports
                        browsers refuse (10080)
  --trainers <n>        trainer processes to run                                 (default: 1)
  --cpu-prof <dir>      write a V8 CPU profile of each service to <dir>/<service> when it stops
                        (default: WHETSTONE_CPU_PROF_DIR; summarise with bench:profile)
  --raw-logs            print child logs as raw JSON lines
  --no-color            no ANSI colours in log prefixes
  -h, --help            show this help

Environment:
  DATABASE_URL          use this Postgres server instead of the embedded one
  REDIS_URL             use Redis for rate limits and cache invalidation
  LOG_LEVEL             pino level for every service (default: info)
  HOST                  where the gateway listens (default: 0.0.0.0, every interface); the other
                        services' gRPC and metrics ports listen on 127.0.0.1 only
`;

const ROOT = path.resolve(__dirname, '..');
const EMBEDDED_POSTGRES_PORT = 54329;
/**
 * Ports Chromium and Firefox refuse to open (ERR_UNSAFE_PORT): Chromium's net/base/port_util.cc list. Only
 * 10080 can be reached from the gateway's 8080 with a non-negative offset, but the list is the contract.
 */
const BROWSER_BLOCKED_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);
/** How long start-up may go without progress (a service listening or ready) before `pnpm start` says so. */
const NO_PROGRESS_MS = 60_000;

interface StartOptions {
  offset: number;
  trainers: number;
  dataDir: string;
  rawLogs: boolean;
  noColor: boolean;
  /** Directory for each service's CPU profile; undefined: no profiling. */
  cpuProf: string | undefined;
}

/** The command line, checked; a number is the exit code to return at once (help or a usage error). */
function parseOptions(): StartOptions | number {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string', default: '.data' },
      'port-offset': { type: 'string', default: process.env.WHETSTONE_PORT_OFFSET ?? '0' },
      trainers: { type: 'string', default: '1' },
      'cpu-prof': { type: 'string', default: process.env.WHETSTONE_CPU_PROF_DIR },
      'raw-logs': { type: 'boolean', default: false },
      'no-color': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const offset = Number(values['port-offset']);
  const trainers = Number(values.trainers);
  if (!Number.isInteger(offset) || offset < 0) return usageError('--port-offset must be a whole number, 0 or more');
  if (!Number.isInteger(trainers) || trainers < 0 || trainers > 16)
    return usageError('--trainers must be an integer from 0 to 16');
  const options = {
    offset,
    trainers,
    dataDir: path.resolve(ROOT, values['data-dir']!),
    rawLogs: values['raw-logs']!,
    noColor: values['no-color']!,
    cpuProf: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined,
  };
  const basePorts = DEPLOYABLES.flatMap((d) => [
    d.port,
    ...(d.metricsPort ? [d.metricsPort + copiesOf(d, options) - 1] : []),
  ]);
  const gatewayPort = DEPLOYABLES.find((d) => d.kind === 'http')!.port + offset;
  if (BROWSER_BLOCKED_PORTS.has(gatewayPort))
    return usageError(
      `--port-offset ${offset} puts the gateway (and its dashboard) on port ${gatewayPort}, which browsers refuse ` +
        `to open (ERR_UNSAFE_PORT); use another offset, e.g. ${offset + 1}`,
    );
  const highest = Math.max(...basePorts, process.env.DATABASE_URL ? 0 : EMBEDDED_POSTGRES_PORT);
  if (highest + offset > 65535)
    return usageError(
      `--port-offset ${offset} puts port ${highest} at ${highest + offset}, above 65535; use at most ${65535 - highest}`,
    );
  return options;
}

/** Processes per deployable; copies after the first take the next metrics ports. */
function copiesOf(d: Deployable, options: { trainers: number }): number {
  return d.name === 'trainer' ? options.trainers : 1;
}

const log = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<number> {
  const startedAt = Date.now();
  const options = parseOptions();
  if (typeof options === 'number') return options;
  const { offset, dataDir } = options;
  mkdirSync(dataDir, { recursive: true });
  const secrets = loadLocalSecrets(dataDir);

  let embedded: EmbeddedDatabase | undefined;
  // Made first: the embedded Postgres's host reports to it when the server comes back.
  const supervisor = new Supervisor({
    rawLogs: options.rawLogs,
    color: !options.noColor && process.stdout.isTTY,
    write: log,
  });
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    log(`whetstone | starting embedded Postgres in ${path.relative(ROOT, dataDir) || '.'}/postgres`);
    embedded = await startEmbeddedPostgres(dataDir, EMBEDDED_POSTGRES_PORT + offset, (event) => {
      if ('down' in event) {
        log(`whetstone | embedded Postgres exited (${event.down}); restarting it, services will reconnect`);
        return;
      }
      const relaunched = supervisor.restartWaiting();
      log(
        `whetstone | embedded Postgres is back after ${(event.up / 1000).toFixed(1)} s` +
          (relaunched.length ? `; restarting now: ${relaunched.join(', ')}` : ''),
      );
    });
    serverUrl = embedded.url;
  }

  const present = DEPLOYABLES.filter((d) => existsSync(path.join(ROOT, 'services', d.name, 'src', 'main.ts')));
  const port = (d: Deployable) => (d.port === 0 ? 0 : d.port + offset);
  const gateway = DEPLOYABLES.find((d) => d.name === 'gateway')!;
  const publicUrl = `http://localhost:${port(gateway)}`;

  if (!(await migrate(present, serverUrl))) {
    await embedded?.stop();
    return 1;
  }
  const addrs = Object.fromEntries(present.filter((d) => d.addrVar).map((d) => [d.addrVar!, `127.0.0.1:${port(d)}`]));
  for (const d of present) {
    const copies = copiesOf(d, options);
    for (let i = 0; i < copies; i++) {
      supervisor.start({
        label: copies > 1 ? `${d.name}-${i + 1}` : d.name,
        command: process.execPath,
        args: [
          ...(options.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', path.join(options.cpuProf, d.name)] : []),
          '--require',
          'tsx/cjs',
          path.join('services', d.name, 'src', 'main.ts'),
        ],
        cwd: ROOT,
        env: { ...process.env, ...addrs, ...serviceEnv(d, i, { offset, serverUrl, dataDir, secrets, publicUrl }) },
      });
    }
  }
  const runFile = writeRunFile(dataDir, { offset, addrs, publicUrl });
  const stop = stopOnSignals(supervisor, embedded, runFile);
  // Whatever fails from here, the services and the database started above must not outlive this process.
  if (present.some((d) => d.name === 'gateway'))
    await reportReady(present, port, publicUrl, startedAt).catch((err: unknown) =>
      stop(`failed while waiting for readiness (${err instanceof Error ? err.message : String(err)})`, 1),
    );
  return new Promise<number>(() => undefined);
}

/**
 * Brings every deployable's schema up to date in this process, over one connection (tools/prisma/migrate.ts, the
 * same folders and `_prisma_migrations` rows as `prisma migrate deploy`); false (after saying which) when one fails.
 * One line per service.
 */
async function migrate(present: Deployable[], serverUrl: string): Promise<boolean> {
  const targets = present
    .filter((d) => d.schema)
    .map((d) => ({ schema: d.schema!, migrationsDir: path.join(ROOT, 'services', d.name, 'prisma', 'migrations') }));
  const owner = new Map(present.filter((d) => d.schema).map((d) => [d.schema!, d.name]));
  const t0 = Date.now();
  try {
    await deployMigrations(serverUrl, targets, ({ schema, applied, ms }) =>
      log(
        `whetstone | migrated ${owner.get(schema)} (schema ${schema}): ` +
          `${applied.length ? `applied ${applied.length} new migration(s)` : 'up to date'} in ${ms} ms`,
      ),
    );
  } catch (err) {
    const service = err instanceof MigrationError ? owner.get(err.schema) : undefined;
    process.stderr.write(`whetstone | ${err instanceof Error ? err.message : String(err)}\n`);
    process.stderr.write(`whetstone | migrations${service ? ` of ${service}` : ''} failed; not starting\n`);
    return false;
  }
  log(`whetstone | migrations of ${targets.length} services checked in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return true;
}

/** The variables one copy (`i`, from 0) of a deployable runs with, besides the inherited environment and addresses. */
function serviceEnv(
  d: Deployable,
  i: number,
  run: { offset: number; serverUrl: string; dataDir: string; secrets: LocalSecrets; publicUrl: string },
): NodeJS.ProcessEnv {
  return {
    NODE_ENV: process.env.NODE_ENV ?? 'development',
    PORT: String(d.port === 0 ? 0 : d.port + run.offset),
    // Internal gRPC and metrics ports are for this machine alone; the gateway listens where its HOST says
    // (every interface by default), the one public port.
    ...(d.kind === 'http' ? {} : { HOST: '127.0.0.1' }),
    ...(d.metricsPort ? { METRICS_PORT: String(d.metricsPort + run.offset + i) } : {}),
    DATABASE_URL: withSchema(run.serverUrl, d.schema ?? 'public'),
    EVENTS_DATABASE_URL: run.serverUrl,
    EVENTS_TRANSPORT: process.env.EVENTS_TRANSPORT ?? 'postgres',
    BLOB_STORE: process.env.BLOB_STORE ?? 'fs',
    BLOB_FS_ROOT: path.join(run.dataDir, 'blobs'),
    BLOB_SIGNING_SECRET: run.secrets.BLOB_SIGNING_SECRET,
    ADMIN_TOKEN: process.env.ADMIN_TOKEN ?? run.secrets.ADMIN_TOKEN,
    PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? run.publicUrl,
    WHETSTONE_INSTANCE: `${d.name}-${i + 1}`,
  };
}

/**
 * `<data-dir>/run.json`: how to reach the system started from this data dir (`pnpm whetstone admin` reads
 * it, so it talks to this copy whatever its port offset). Removed on a clean stop; a stale one names a pid
 * that is gone.
 */
function writeRunFile(
  dataDir: string,
  run: { offset: number; addrs: Record<string, string>; publicUrl: string },
): string {
  const file = path.join(dataDir, 'run.json');
  writeFileSync(file, JSON.stringify({ pid: process.pid, ...run }, null, 2));
  return file;
}

/** Stops everything on SIGINT/SIGTERM (exit 0); the returned function does the same for an error (exit 1). */
function stopOnSignals(
  supervisor: Supervisor,
  embedded: EmbeddedDatabase | undefined,
  runFile: string,
): (reason: string, code: number) => Promise<void> {
  let stopping = false;
  const stop = async (reason: string, code: number) => {
    if (stopping) return;
    stopping = true;
    log(`whetstone | ${reason}: stopping every service`);
    await supervisor.stopAll();
    await embedded?.stop();
    rmSync(runFile, { force: true });
    log('whetstone | stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void stop('SIGINT', 0));
  process.on('SIGTERM', () => void stop('SIGTERM', 0));
  return stop;
}

/**
 * Ready means every service answers: each gRPC service reports SERVING (grpc.health.v1: its database answers; the
 * model-server's built-in models are warm), then the gateway's /readyz. There is no fixed deadline: on a busy
 * machine start-up can take minutes, so it waits as long as services keep coming up, and says which ones are late
 * only after NO_PROGRESS_MS without any (then keeps waiting).
 */
async function reportReady(
  present: Deployable[],
  port: (d: Deployable) => number,
  publicUrl: string,
  startedAt: number,
): Promise<void> {
  const gateway = present.find((d) => d.name === 'gateway')!;
  const grpc = present.filter((d) => d.port > 0 && d.name !== 'gateway');
  // Loaded here, while the services start, so the supervisor itself starts them without waiting for it.
  // require, not import(): tsx/cjs compiles the first only.
  const { createHealthChecker, closeRpcChannels } = require('@whetstone/rpc') as typeof import('@whetstone/rpc');
  // Ready is grpc.health.v1 SERVING: its database answers, and the model-server's built-in models are warm.
  const serving = (d: Deployable) => {
    const health = createHealthChecker({ addr: `127.0.0.1:${port(d)}`, caller: 'pnpm-start', timeoutMs: 1_000 });
    return async () => (await isListening(port(d))) && health.check();
  };
  const pending = new Map<string, () => Promise<boolean>>([
    ...grpc.map((d) => [d.name, serving(d)] as const),
    ['gateway', () => isReady(`http://127.0.0.1:${port(gateway)}/readyz`)],
  ]);
  let lastProgress = Date.now();
  while (pending.size > 0) {
    for (const [name, probe] of pending) {
      // The gateway last: its /readyz needs the others.
      if (name === 'gateway' && pending.size > 1) continue;
      if (await probe()) {
        pending.delete(name);
        lastProgress = Date.now();
      }
    }
    if (Date.now() - lastProgress > NO_PROGRESS_MS) {
      log(
        `whetstone | still waiting for: ${[...pending.keys()].join(', ')} ` +
          `(no progress for ${NO_PROGRESS_MS / 1000} s; see the logs above)`,
      );
      lastProgress = Date.now();
    }
    if (pending.size > 0) await new Promise((r) => setTimeout(r, 250));
  }
  closeRpcChannels();
  const seconds = Math.round((Date.now() - startedAt) / 1000);
  log(
    [
      `whetstone | ready: dashboard at ${publicUrl}/dashboard (API at ${publicUrl}, OpenAPI at ${publicUrl}/openapi.json; ready ${seconds} s after start)`,
      'whetstone | next steps:',
      `whetstone |   1. open ${publicUrl}/dashboard, sign up, and create an API key`,
      `whetstone |   2. curl -H "X-API-Key: <key>" -H "content-type: application/json" ${publicUrl}/inference \\`,
      `whetstone |        -d '{"model_id":"whetstone-extract-base","text":"Ada Lovelace lived in London.","schema":{"entities":["person","city"]}}'`,
      'whetstone |   3. docs/api.md has every route; `pnpm whetstone admin --help` for operator tasks; Ctrl-C stops everything',
    ].join('\n'),
  );
}

/** Per-installation secrets, generated once and kept in the data dir (mode 600). */
interface LocalSecrets {
  BLOB_SIGNING_SECRET: string;
  ADMIN_TOKEN: string;
}

function loadLocalSecrets(dataDir: string): LocalSecrets {
  const file = path.join(dataDir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  const secrets = {
    BLOB_SIGNING_SECRET: randomBytes(32).toString('hex'),
    ADMIN_TOKEN: randomBytes(24).toString('hex'),
  };
  writeFileSync(file, JSON.stringify(secrets, null, 2));
  chmodSync(file, 0o600);
  return secrets;
}

async function isReady(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false; // not listening yet
  }
}

/** Whether something accepts TCP connections on the port (a gRPC server has bound it). */
function isListening(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function usageError(message: string): number {
  process.stderr.write(`error: ${message}\n\n${HELP}`);
  return 2;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`whetstone | failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
