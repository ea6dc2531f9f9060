import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { testDatabaseUrl, testRedisUrl, withClient } from '@whetstone/testing';
import { DEPLOYABLES } from '../../scripts/lib/deployables';

const ROOT = path.resolve(__dirname, '..', '..');
/** scripts/start.ts's embedded Postgres port, before the offset. */
const EMBEDDED_POSTGRES_PORT = 54329;

/** The environment without DATABASE_URL when the system must start its own embedded Postgres. */
function withoutDatabaseUrl(env: NodeJS.ProcessEnv, embedded: boolean): NodeJS.ProcessEnv {
  if (!embedded) return env;
  const { DATABASE_URL: _omitted, ...rest } = env;
  return rest;
}

export interface RunningSystem {
  /** Base URL of the gateway, e.g. http://127.0.0.1:9080. */
  baseUrl: string;
  /** Everything the processes printed so far. */
  logs(): string;
  /** Process ids of one deployable's processes (e.g. to kill a trainer mid-job). */
  pids(service: string): number[];
  /** The system's data dir (embedded Postgres, blobs, local secrets). */
  dataDir: string;
  /** Its database on the test server (each service's schema inside), to check its rows; unset on the embedded Postgres. */
  databaseUrl?: string;
  stop(): Promise<void>;
}

export interface SystemOptions {
  /** Extra environment for every service (e.g. small rate limits). */
  env?: Record<string, string>;
  redis?: boolean;
  /** Run on the embedded Postgres, as a fresh laptop does, instead of a database on the test server. */
  embeddedPostgres?: boolean;
}

/**
 * Start the whole system exactly as `pnpm start` does, against a fresh database
 * on the test Postgres server and a private data dir, on a random port offset.
 */
export async function startSystem(options: SystemOptions = {}): Promise<RunningSystem> {
  const dbName = `whetstone_e2e_${randomBytes(4).toString('hex')}`;
  const server = testDatabaseUrl();
  const embedded = options.embeddedPostgres === true;
  if (!embedded) await withClient(server, (c) => c.query(`CREATE DATABASE ${dbName}`));
  const dbUrl = new URL(server);
  dbUrl.pathname = `/${dbName}`;
  // Two systems (two jest workers) and the integration suites share one Postgres (100 connections): each
  // service's pools stay small.
  dbUrl.searchParams.set('connection_limit', '4');

  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'whetstone-e2e-'));
  // mkdtemp makes it 0700; run as root, the embedded Postgres runs as its own user and must get in.
  if (embedded) chmodSync(dataDir, 0o755);
  const offset = await freeOffset(embedded ? [EMBEDDED_POSTGRES_PORT] : []);
  let output = '';
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--require',
      'tsx/cjs',
      'scripts/start.ts',
      '--data-dir',
      dataDir,
      '--port-offset',
      String(offset),
      '--raw-logs',
      '--no-color',
    ],
    {
      cwd: ROOT,
      env: {
        ...withoutDatabaseUrl(process.env, embedded),
        ...options.env,
        ...(embedded ? {} : { DATABASE_URL: dbUrl.toString() }),
        ...(options.redis === false ? {} : { REDIS_URL: testRedisUrl() }),
        LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const baseUrl = `http://127.0.0.1:${8080 + offset}`;
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
    if (!embedded) await withClient(server, (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
  };

  // Generous: on a loaded 2-core machine migrations and eight processes can take minutes to come up.
  const deadline = Date.now() + 240_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`pnpm start exited early:\n${output.slice(-4000)}`);
    }
    if (/ready: dashboard at/.test(output)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`system not ready within 240 s:\n${output.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const pids = (service: string) =>
    execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(child.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(path.join('services', service, 'src', 'main.ts')))
      .map((line) => Number(line.trim().split(/\s+/)[0]));
  return { baseUrl, logs: () => output, stop, pids, dataDir, ...(embedded ? {} : { databaseUrl: dbUrl.toString() }) };
}

/** A new user with a dashboard session and one API key, created through the public routes. */
export async function signUpWithKey(
  baseUrl: string,
  label = 'e2e',
): Promise<{ key: string; teamId: string; cookie: string; csrf: string; email: string }> {
  const json = { 'content-type': 'application/json' };
  const email = `${label}-${Date.now()}-${randomBytes(3).toString('hex')}@example.com`;
  const signup = await fetch(`${baseUrl}/auth/signup`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email, password: 'correct horse battery' }),
  });
  if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${await signup.text()}`);
  const cookie = (signup.headers.get('set-cookie') ?? '').split(';')[0]!;
  const { csrf_token, team } = (await signup.json()) as { csrf_token: string; team: { id: string } };
  const created = await fetch(`${baseUrl}/create-api-key`, {
    method: 'POST',
    headers: { ...json, cookie, 'x-csrf-token': csrf_token },
    body: JSON.stringify({ name: label }),
  });
  if (created.status !== 200) throw new Error(`key creation failed: ${created.status} ${await created.text()}`);
  const { secret_key } = (await created.json()) as { secret_key: string };
  return { key: secret_key, teamId: team.id, cookie, csrf: csrf_token, email };
}

const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });

/** The kernel's range for outgoing connections' local ports (Linux's default when it cannot be read). */
function ephemeralPorts(): [number, number] {
  try {
    const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(lo) && Number.isInteger(hi)) return [lo!, hi!];
  } catch {
    // not Linux
  }
  return [32768, 60999];
}

/**
 * A random port offset whose every port is free now and outside the kernel's
 * ephemeral range. Inside it, an outgoing connection of another suite (they
 * keep gRPC connections open) can take a port between the probe and the bind,
 * and the service that wanted it never starts (the likely cause of a CI run
 * where the model-server never answered and every extraction got 503).
 * Offsets 10950–15000 put the gRPC ports above the range and the others below.
 */
async function freeOffset(extraPorts: number[]): Promise<number> {
  const ports = DEPLOYABLES.flatMap((d) => [
    d.port,
    ...(d.metricsPort ? [d.metricsPort, d.metricsPort + 1, d.metricsPort + 2] : []),
  ])
    .concat(extraPorts)
    .filter((p) => p > 0);
  const [lo, hi] = ephemeralPorts();
  const outside = (offset: number) => ports.every((p) => p + offset < lo || (p + offset > hi && p + offset <= 65535));
  const gateway = DEPLOYABLES.find((d) => d.kind === 'http')!.port;
  // pnpm start refuses an offset that puts the gateway on a port browsers block (10080).
  const all = Array.from({ length: 14_000 }, (_, k) => 1000 + k).filter(
    (offset) => ports.every((p) => p + offset <= 65535) && gateway + offset !== 10080,
  );
  const outsideRange = all.filter(outside);
  const candidates = outsideRange.length ? outsideRange : all;
  for (let attempt = 0; ; attempt++) {
    const offset = candidates[Math.floor(Math.random() * candidates.length)]!;
    const free = await Promise.all(ports.map((p) => canListen(p + offset)));
    if (free.every(Boolean) || attempt >= 20) return offset;
  }
}
