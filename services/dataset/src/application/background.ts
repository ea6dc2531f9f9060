/** Processing that outlives the call that started it, tracked so tests and shutdown can wait for it. */
export class BackgroundWork {
  private readonly running = new Map<string, Promise<void>>();

  /** Runs `task` for `id` unless a task for `id` already runs; a rejection is passed to `onError`. */
  start(id: string, task: () => Promise<void>, onError: (err: unknown) => void): void {
    if (this.running.has(id)) return;
    const run = task()
      .catch(onError)
      .finally(() => this.running.delete(id));
    this.running.set(id, run);
  }

  /** Resolves when the task for `id` (if any) has ended. */
  async settled(id: string): Promise<void> {
    await this.running.get(id);
  }

  /** Resolves when no task runs, including tasks started while waiting. */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running.values()]);
  }
}
