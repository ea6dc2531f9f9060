import type { IngestSignal } from '../application/ports';

/**
 * Readers waiting for an inference id, woken by this process's own consumer
 * the moment it stores the id: no polling. pgIngestSignal wraps it to hear
 * about ids other replicas stored.
 */
export function inProcessIngestSignal(): IngestSignal & { waiting(): number } {
  const waiters = new Map<string, Set<() => void>>();
  return {
    expect(inferenceId) {
      let wake!: () => void;
      let timer: NodeJS.Timeout | undefined;
      const woken = new Promise<boolean>((resolve) => (wake = () => resolve(true)));
      const set = waiters.get(inferenceId) ?? new Set();
      set.add(wake);
      waiters.set(inferenceId, set);
      const cancel = () => {
        if (timer) clearTimeout(timer);
        set.delete(wake);
        if (!set.size && waiters.get(inferenceId) === set) waiters.delete(inferenceId);
      };
      return {
        arrived: (timeoutMs) =>
          Promise.race([
            woken,
            new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
          ]),
        cancel,
      };
    },
    ingested(inferenceIds) {
      if (!waiters.size) return;
      for (const id of inferenceIds) for (const wake of waiters.get(id) ?? []) wake();
    },
    waiting: () => waiters.size,
  };
}
