import { heartbeatEveryMs } from '../domain/progress';
import type { UseCaseDeps } from './deps';
import type { JobLease, LogLevel, LogLine } from './ports';

/**
 * The trainer's side of one leased job: buffered log lines, a heartbeat that
 * also flushes them, and an abort signal raised when the orchestrator says
 * stop (cancelled, deleted, or leased to another trainer).
 */
export class JobSession {
  readonly controller = new AbortController();
  private pending: LogLine[] = [];
  private readonly beat: NodeJS.Timeout;
  private readonly source: string;

  constructor(
    private readonly deps: UseCaseDeps,
    readonly lease: JobLease,
    leaseMs: number,
  ) {
    this.source = `trainer/${deps.trainerId}`;
    this.beat = setInterval(() => this.pulse(), heartbeatEveryMs(leaseMs));
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  log(level: LogLevel, message: string, metrics?: LogLine['metrics']): void {
    this.pending.push({ level, message, ...(metrics ? { metrics } : {}) });
  }

  /** Stop now when the orchestrator's answer says so. */
  obey(goOn: boolean): void {
    if (!goOn) this.controller.abort();
  }

  async flush(): Promise<void> {
    if (!this.pending.length) return;
    const lines = this.pending;
    this.pending = [];
    const goOn = await this.deps.orchestrator.appendLogs(this.lease, this.source, lines).catch(() => true);
    this.obey(goOn);
  }

  close(): void {
    clearInterval(this.beat);
  }

  private pulse(): void {
    void this.deps.orchestrator.heartbeat(this.lease).then(
      (goOn) => this.obey(goOn),
      () => undefined,
    );
    void this.flush();
  }
}
