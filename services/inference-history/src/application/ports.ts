/**
 * What history's use cases need from the outside, in plain shapes: the record
 * store (Prisma), the in-process ingest signal, and the feedback event outbox.
 */
import type { Feedback, InferenceRecord, ListFilter } from '../domain/record';

/** Counting every match of a broad filter over millions of rows costs more than the page itself: totals stop here. */
export const TOTAL_CAP = 1_000;

export interface Page {
  records: InferenceRecord[];
  /** Matches, exact up to TOTAL_CAP. */
  total: number;
  /** More than TOTAL_CAP match; total is TOTAL_CAP. */
  totalCapped: boolean;
}

export interface HistoryStore {
  /** Stores each record unless its id is already held (redelivery is a no-op); returns how many were new. */
  ingest(records: InferenceRecord[]): Promise<number>;
  /** The record of that id, whatever its team (use cases scope it), or null. */
  get(inferenceId: string): Promise<InferenceRecord | null>;
  /** One page, newest first, and how many match in all, counted up to TOTAL_CAP (then totalCapped). */
  list(teamId: string, filter: ListFilter): Promise<Page>;
  /** Stores the verdict on the record and appends FeedbackSubmitted to the outbox, in one transaction. */
  saveFeedback(record: InferenceRecord, feedback: Feedback): Promise<void>;
}

/**
 * Wakes readers waiting for an inference id when the consumer has stored it.
 * `expect` is called before the store is read, so an ingest that lands between
 * the read and the wait is never missed.
 */
export interface IngestSignal {
  expect(inferenceId: string): { arrived: (timeoutMs: number) => Promise<boolean>; cancel: () => void };
  ingested(inferenceIds: string[]): void;
}
