import type { ChildProcess } from 'node:child_process';
import net from 'node:net';

/** A loopback port that was free a moment ago (the kernel's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once `output()` matches `ready`; rejects when the process exits first or the time is up. */
export async function waitForOutput(
  proc: ChildProcess,
  output: () => string,
  ready: RegExp,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (ready.test(output())) return;
    if (proc.exitCode !== null || proc.signalCode !== null)
      throw new Error(
        `${what} exited (${proc.exitCode ?? proc.signalCode}) before it was ready:\n${output().slice(-3000)}`,
      );
    if (Date.now() > deadline)
      throw new Error(`${what} not ready within ${timeoutMs / 1000} s:\n${output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`. */
export async function waitForPort(port: number, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => resolve(true));
      socket.once('error', () => resolve(false));
    }).catch(() => false);
    if (open) return;
    if (Date.now() > deadline) throw new Error(`${what} did not listen on ${port} within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
