import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

/** A port nothing listens on: bound, then released. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

describe('the trainer process, stopped as pnpm start stops it', () => {
  it('when Ctrl-C sends SIGINT and the supervisor then SIGTERM, then it says once that it is draining, then that it stopped, and exits 0', async () => {
    const blobs = mkdtempSync(path.join(os.tmpdir(), 'trainer-stop-'));
    const child = spawn(
      process.execPath,
      ['--require', 'tsx/cjs', path.join('services', 'trainer', 'src', 'main.ts')],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          METRICS_PORT: '0',
          TRAINING_ORCHESTRATOR_ADDR: `127.0.0.1:${await closedPort()}`,
          BLOB_STORE: 'fs',
          BLOB_FS_ROOT: blobs,
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 50_000;
      while (!output.includes('trainer waiting for work')) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`trainer did not start:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      child.kill('SIGINT');
      await new Promise((r) => setTimeout(r, 50));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(blobs, { recursive: true, force: true });
    }
    const messages = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; signal?: string })
      .filter((entry) => entry.msg === 'draining' || entry.msg === 'stopped' || entry.msg === 'stopping');
    expect(messages.map((m) => [m.msg, m.signal])).toEqual([
      ['draining', 'SIGINT'],
      ['stopped', undefined],
    ]);
  }, 60_000);
});
