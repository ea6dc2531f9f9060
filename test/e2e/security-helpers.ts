import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { eventually } from '@whetstone/testing';
import type { RunningSystem } from './system';

const ROOT = path.resolve(__dirname, '..', '..');

/** A free loopback port (probed, then released). */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

/** A provider that answers every request with a redirect to `location`, recording what it got. */
export async function redirector(location: string) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(307, { location }).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Every file under a directory (the system's data dir: its log and state files), as text. */
export function filesUnder(dir: string): { file: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(file);
    if (!entry.isFile() || statSync(file).size > 20_000_000) return [];
    return [{ file, text: readFileSync(file, 'latin1') }];
  });
}

/** A second gateway process on the same backends, Redis and event log as the system's own. */
export interface SecondGateway {
  url: string;
  /** Everything it printed so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Start another gateway with exactly the environment of the system's gateway (read from /proc, so it gets
 * the same backends, Redis and event log), on a free port: the way a second replica runs.
 */
export async function startSecondGateway(system: RunningSystem): Promise<SecondGateway> {
  const [pid] = system.pids('gateway');
  const inherited = Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  const port = await freePort();
  let output = '';
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', 'services/gateway/src/main.ts'], {
    cwd: ROOT,
    env: { ...inherited, PORT: String(port), WHETSTONE_INSTANCE: 'gateway-second' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    await eventually(async () => (await fetch(`${url}/readyz`).catch(() => null))?.status === 200, 120_000);
  } catch (err) {
    await stop();
    throw new Error(`second gateway not ready: ${String(err)}\n${output.slice(-2000)}`);
  }
  return { url, output: () => output, stop };
}
