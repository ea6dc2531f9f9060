import type { HistoryStore, IngestSignal } from './ports';

/** Everything the use cases share; built once in main.ts (or a test) and handed to buildApp. */
export interface HistoryDeps {
  store: HistoryStore;
  signal: IngestSignal;
  now: () => Date;
  /** How long a read waits for a recent id the consumer has not stored yet. */
  readWaitMs: number;
  /** Ids minted longer ago than this are never in flight: unknown means 404 at once. */
  inFlightWindowMs: number;
}
