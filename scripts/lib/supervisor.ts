import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';

export interface ChildSpec {
  /** Log prefix, e.g. `gateway` or `trainer-2`. */
  label: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export interface SupervisorOptions {
  /** Print child log lines as they are (JSON) instead of a short human form. */
  rawLogs: boolean;
  color: boolean;
  write: (line: string) => void;
}

const COLORS = [36, 35, 33, 32, 34, 91, 96, 95, 93];
const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
/** The first restart is almost immediate (a crashed service is back sooner); repeated crashes back off. */
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 30_000;
/** A child that stayed up this long has its restart backoff reset. */
const HEALTHY_AFTER_MS = 60_000;

/**
 * Runs each deployable as its own process with prefixed logs, restarts a
 * crashed child with exponential backoff, and stops them all cleanly.
 */
export class Supervisor {
  private readonly children = new Map<string, ChildProcess>();
  /** Children waiting out their restart backoff: relaunch now (and forget the backoff). */
  private readonly waiting = new Map<string, () => void>();
  private stopping = false;
  private colorIndex = 0;

  constructor(private readonly options: SupervisorOptions) {}

  start(spec: ChildSpec): void {
    const color = COLORS[this.colorIndex++ % COLORS.length]!;
    const prefix = this.options.color ? `\x1b[${color}m${spec.label.padEnd(22)}\x1b[0m|` : `${spec.label.padEnd(22)}|`;
    let backoffMs = FIRST_BACKOFF_MS;

    const launch = () => {
      const startedAt = Date.now();
      const child = spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
      this.children.set(spec.label, child);
      for (const stream of [child.stdout, child.stderr]) {
        readline
          .createInterface({ input: stream })
          .on('line', (line) => this.options.write(`${prefix} ${this.format(line)}`));
      }
      child.on('exit', (code, signal) => {
        this.children.delete(spec.label);
        if (this.stopping) return;
        if (Date.now() - startedAt > HEALTHY_AFTER_MS) backoffMs = FIRST_BACKOFF_MS;
        this.options.write(
          `${prefix} exited (${signal ?? `code ${code}`}); restarting in ${(backoffMs / 1000).toFixed(1)} s`,
        );
        const relaunch = () => {
          clearTimeout(timer);
          this.waiting.delete(spec.label);
          if (!this.stopping) launch();
        };
        const timer = setTimeout(relaunch, backoffMs);
        timer.unref();
        this.waiting.set(spec.label, () => {
          backoffMs = FIRST_BACKOFF_MS;
          relaunch();
        });
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
      });
    };
    launch();
  }

  /**
   * Relaunch at once every child waiting out a restart backoff, e.g. when the database it needs is
   * back: a service that crashed at start while it was down must not wait up to 30 s more.
   */
  restartWaiting(): string[] {
    const labels = [...this.waiting.keys()];
    for (const relaunch of [...this.waiting.values()]) relaunch();
    return labels;
  }

  /** SIGTERM every child, then SIGKILL whatever is left after the grace period. */
  async stopAll(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    const waits = [...this.children.values()].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    );
    await Promise.all(waits);
  }

  private format(line: string): string {
    if (this.options.rawLogs || !line.startsWith('{')) return line;
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      const { level, time, msg, service: _s, name: _n, pid: _p, hostname: _h, ...rest } = entry;
      const when =
        typeof time === 'string'
          ? time.slice(11, 19)
          : new Date(Number(time ?? Date.now())).toISOString().slice(11, 19);
      const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
      return `${when} ${LEVELS[Number(level)] ?? String(level)} ${String(msg ?? '')}${extra}`;
    } catch {
      return line;
    }
  }
}
