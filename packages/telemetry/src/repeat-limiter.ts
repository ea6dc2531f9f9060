/** How long a warning or error is remembered: repeats inside it are counted, not written. */
export const REPEAT_WINDOW_MS = 10_000;
/** Distinct warnings and errors remembered at once; past it the oldest is forgotten. */
const MAX_TRACKED = 500;
/** Distinct stack traces remembered (each is printed once per process). */
const MAX_STACKS = 2_000;

/** What to do with one log call. */
export type RepeatDecision =
  | {
      write: true;
      /** Print the error without its stack: the same one was printed with it before. */ dropStack: boolean;
    }
  | { write: false };

interface Entry {
  windowStart: number;
  suppressed: number;
  level: number;
  message: string;
}

/**
 * Keeps logging bounded while something keeps failing (a database outage makes every request
 * fail the same way). Warnings and errors are grouped by level, message and error (type, code and
 * message, with numbers and ids blanked). The first of a group is written; repeats within
 * REPEAT_WINDOW_MS are counted, and when the window ends one summary line says how many there were.
 * So each distinct failure writes at most two lines per 10 s, and its stack trace once per process.
 */
export class RepeatLimiter {
  private readonly entries = new Map<string, Entry>();
  private readonly stacks = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** Writes the summary of a group's repeats. */
    private readonly summarise: (
      level: number,
      fields: { repeated: number; window_s: number },
      message: string,
    ) => void,
    private readonly now: () => number = Date.now,
  ) {}

  decide(level: number, message: string, err: unknown): RepeatDecision {
    const at = this.now();
    this.flush(at);
    const errorKey = err instanceof Error ? signature(err) : '';
    const key = `${level}|${message}|${errorKey}`;
    const entry = this.entries.get(key);
    if (entry) {
      entry.suppressed++;
      this.armTimer();
      return { write: false };
    }
    if (this.entries.size >= MAX_TRACKED) this.evictOldest();
    this.entries.set(key, { windowStart: at, suppressed: 0, level, message });
    if (!errorKey) return { write: true, dropStack: false };
    const seen = this.stacks.has(errorKey);
    if (!seen) {
      if (this.stacks.size >= MAX_STACKS) this.stacks.clear();
      this.stacks.add(errorKey);
    }
    return { write: true, dropStack: seen };
  }

  /** Summarise and forget every group whose window has ended by `at`. */
  flush(at = this.now()): void {
    for (const [key, entry] of this.entries) {
      if (at - entry.windowStart < REPEAT_WINDOW_MS) continue;
      this.entries.delete(key);
      if (entry.suppressed > 0) {
        const seconds = Math.round(REPEAT_WINDOW_MS / 1000);
        this.summarise(
          entry.level,
          { repeated: entry.suppressed, window_s: seconds },
          `${entry.suppressed} more like this in the last ${seconds} s: ${entry.message}`,
        );
      }
    }
  }

  /** A summary is due even if nothing more is logged; the timer never keeps the process alive. */
  private armTimer(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
      if ([...this.entries.values()].some((e) => e.suppressed > 0)) this.armTimer();
    }, REPEAT_WINDOW_MS);
    this.timer.unref();
  }

  private evictOldest(): void {
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.entries.delete(oldest.value);
  }
}

/** An error's identity for grouping: type, code and message with the parts that vary (numbers, ids) blanked. */
function signature(err: Error): string {
  const code = (err as { code?: unknown }).code;
  const message = err.message.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/gi, '<id>').replace(/\d+/g, '<n>');
  return `${err.name}|${typeof code === 'string' || typeof code === 'number' ? code : ''}|${message}`;
}
