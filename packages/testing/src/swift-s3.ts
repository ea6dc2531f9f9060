import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitForPort } from './processes';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SERVERS = ['account', 'container', 'object'] as const;

/** A one-node OpenStack Swift with its S3 API on loopback: a real S3 endpoint that checks every signature. */
export interface S3Server {
  /** `http://127.0.0.1:<port>`, for S3_ENDPOINT. */
  endpoint: string;
  port: number;
  accessKey: string;
  secretKey: string;
  region: string;
  /** The last lines the servers printed. */
  logs(): string;
  /** Stop every Swift process (`signal`), as an outage; the data stays. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start them again on the same ports and data; resolves once the S3 endpoint answers. */
  restart(): Promise<void>;
  /** Stop and remove the data. */
  stop(): Promise<void>;
}

/** Swift and its s3api from Debian's packages (tools/swift/install.sh installs them when missing). */
export function ensureSwift(): void {
  execFileSync('bash', [path.join(ROOT, 'tools', 'swift', 'install.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
}

function serverConf(dir: string, name: string, port: number): string {
  return [
    '[DEFAULT]',
    `swift_dir = ${dir}`,
    `devices = ${path.join(dir, 'srv')}`,
    'mount_check = false',
    'bind_ip = 127.0.0.1',
    `bind_port = ${port}`,
    'workers = 0',
    'log_level = WARNING',
    '[pipeline:main]',
    `pipeline = ${name}-server`,
    `[app:${name}-server]`,
    `use = egg:swift#${name}`,
    '',
  ].join('\n');
}

function proxyConf(dir: string, port: number, account: string, user: string, secret: string): string {
  // [name in the pipeline, entry point]
  const filters = [
    ['catch_errors', 'catch_errors'],
    ['gatekeeper', 'gatekeeper'],
    ['healthcheck', 'healthcheck'],
    ['proxy-logging', 'proxy_logging'],
    ['listing_formats', 'listing_formats'],
    ['copy', 'copy'],
    ['dlo', 'dlo'],
  ];
  return [
    '[DEFAULT]',
    `swift_dir = ${dir}`,
    'bind_ip = 127.0.0.1',
    `bind_port = ${port}`,
    'workers = 0',
    'log_level = WARNING',
    '[pipeline:main]',
    // s3api turns S3 requests (SigV4 headers or presigned query strings, checked by tempauth against the user's
    // key) into Swift requests; slo carries S3 multipart uploads.
    'pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo proxy-logging proxy-server',
    '[app:proxy-server]',
    'use = egg:swift#proxy',
    'account_autocreate = true',
    ...filters.map(([name, egg]) => `[filter:${name}]\nuse = egg:swift#${egg}`),
    // tempauth insists on a memcache client; with no memcached it only caches nothing.
    '[filter:cache]',
    'use = egg:swift#memcache',
    'memcache_servers = 127.0.0.1:9',
    '[filter:s3api]',
    'use = egg:swift#s3api',
    'location = us-east-1',
    '[filter:tempauth]',
    'use = egg:swift#tempauth',
    `user_${account}_${user} = ${secret} .admin`,
    '[filter:slo]',
    'use = egg:swift#slo',
    '',
  ].join('\n');
}

/** Configuration, rings and a device directory for a one-node Swift in `dir`, on four free ports. */
async function layOut(dir: string) {
  mkdirSync(path.join(dir, 'srv', 'd1'), { recursive: true });
  const ports = {
    proxy: await freePort(),
    account: await freePort(),
    container: await freePort(),
    object: await freePort(),
  };
  const [account, user] = ['whetstone', 'tester'];
  const secretKey = randomBytes(18).toString('base64url');
  writeFileSync(
    path.join(dir, 'swift.conf'),
    `[swift-hash]\nswift_hash_path_suffix = ${randomBytes(8).toString('hex')}\nswift_hash_path_prefix = whetstone\n` +
      '[storage-policy:0]\nname = Policy-0\ndefault = yes\n',
  );
  for (const name of SERVERS) writeFileSync(path.join(dir, `${name}.conf`), serverConf(dir, name, ports[name]));
  writeFileSync(path.join(dir, 'proxy.conf'), proxyConf(dir, ports.proxy, account, user, secretKey));
  const rings = path.join(ROOT, 'tools', 'swift', 'rings.py');
  execFileSync('/usr/bin/python3', [rings, dir, String(ports.account), String(ports.container), String(ports.object)]);
  return { ports, accessKey: `${account}:${user}`, secretKey };
}

/**
 * Lay out a one-node Swift in a temp dir (rings with one replica, `mount_check = false`, `workers = 0`, a proxy
 * with s3api and tempauth) on four free loopback ports, and start it. The processes are killed when this
 * process exits.
 */
export async function startS3Server(): Promise<S3Server> {
  ensureSwift();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'whetstone-swift-'));
  const { ports, accessKey, secretKey } = await layOut(dir);

  let children: ChildProcess[] = [];
  let output = '';
  const keep = (b: Buffer) => (output = (output + b.toString()).slice(-20_000));
  const killOnExit = () => children.forEach((c) => c.kill('SIGKILL'));
  process.once('exit', killOnExit);

  const launch = async () => {
    children = [...SERVERS, 'proxy' as const].map((name) => {
      const child = spawn(`swift-${name}-server`, [path.join(dir, `${name}.conf`), '-v'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      return child;
    });
    for (const name of SERVERS) await waitForPort(ports[name], 120_000, `swift-${name}-server`);
    const deadline = Date.now() + 120_000;
    for (;;) {
      const res = await fetch(`http://127.0.0.1:${ports.proxy}/healthcheck`).catch(() => undefined);
      if (res?.status === 200) return;
      const dead = children.find((c) => c.exitCode !== null);
      if (dead || Date.now() > deadline) throw new Error(`Swift did not start:\n${output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    await Promise.all(
      children
        .filter((c) => c.exitCode === null && c.signalCode === null)
        .map((c) => {
          const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
          c.kill(signal);
          const force = setTimeout(() => c.kill('SIGKILL'), 10_000);
          return exited.then(() => clearTimeout(force));
        }),
    );
  };

  try {
    await launch();
  } catch (err) {
    await kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    endpoint: `http://127.0.0.1:${ports.proxy}`,
    port: ports.proxy,
    accessKey,
    secretKey,
    region: 'us-east-1',
    logs: () => output,
    kill,
    restart: async () => {
      await kill('SIGKILL');
      await launch();
    },
    stop: async () => {
      await kill('SIGTERM');
      process.removeListener('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
