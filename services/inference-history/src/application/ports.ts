/**
 * What history's use cases need from the outside, in plain shapes: the record
 * store (Prisma), the in-process ingest signal, the feedback event outbox, and
 * the conversation store.
 */
import type { Conversation, ConversationItem } from '../domain/conversation';
import type { JudgeKind, JudgeSettings, JudgeVerdict } from '../domain/judge';
import type { Feedback, InferenceRecord, ListFilter } from '../domain/record';

/** Counting every match of a broad filter over millions of rows costs more than the page itself: totals stop here. */
export const TOTAL_CAP = 1_000;

export interface Page {
  records: InferenceRecord[];
  /** Matches, exact up to TOTAL_CAP (or the page's limit, with countToPage). */
  total: number;
  /** More than that cap match; total is the cap. */
  totalCapped: boolean;
}

export interface HistoryStore {
  /** Stores each record unless its id is already held (redelivery is a no-op); returns how many were new. */
  ingest(records: InferenceRecord[]): Promise<number>;
  /** The record of that id, whatever its team (use cases scope it), or null. */
  get(inferenceId: string): Promise<InferenceRecord | null>;
  /**
   * One page, newest first (or oldest first), and how many match in all, counted up to TOTAL_CAP (then
   * totalCapped); null when the filter's cursor (afterId) names no record of the team that matches the filter.
   */
  list(teamId: string, filter: ListFilter): Promise<Page | null>;
  /**
   * Stores the verdict on the record and appends FeedbackSubmitted to the outbox, in one transaction; false (and
   * nothing written) when the record was deleted since it was read.
   */
  saveFeedback(record: InferenceRecord, feedback: Feedback): Promise<boolean>;
  /**
   * Deletes the record, keeps its id so that a redelivered event never stores it again, and appends
   * InferenceDeleted to the outbox, in one transaction.
   */
  delete(record: InferenceRecord, deletedAt: Date): Promise<void>;
  /** Replaces the record's metadata; returns the record as updated, or null when it is gone. */
  updateMetadata(record: InferenceRecord, metadata: Record<string, string>): Promise<InferenceRecord | null>;
  /** Whether a record of that id was deleted (its id is all that is kept). */
  wasDeleted(inferenceId: string): Promise<boolean>;
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

/** A pending record the judge worker has claimed (for one lease), with its attempt count and project settings. */
export interface ClaimedRecord {
  record: InferenceRecord;
  /** Attempts so far, this one included. */
  attempts: number;
  settings: JudgeSettings;
}

/**
 * Judge settings and the judge queue. Records are queued at ingest (sampled by their project's rate, in the same
 * statement that stores them), so a record is never lost between storing and judging, whatever restarts.
 */
export interface JudgeStore {
  /** The project's settings as stored for that team, or null when never configured (or another team's). */
  getSettings(teamId: string, projectId: string): Promise<JudgeSettings | null>;
  /** Replaces the project's settings; returns them as stored. */
  saveSettings(teamId: string, settings: JudgeSettings): Promise<JudgeSettings>;
  /**
   * Claims up to `limit` pending records that are due (SKIP LOCKED: replicas never take the same one), counting an
   * attempt and pushing each a lease ahead so that a worker that dies mid-judgement hands it back when the lease ends.
   */
  claim(limit: number, leaseMs: number): Promise<ClaimedRecord[]>;
  /** Stores the verdict: llmaj_score, rationale, kind and model; the record leaves the queue. */
  saveVerdict(inferenceId: string, verdict: JudgeVerdict, at: Date): Promise<void>;
  /** Keeps the record pending, due again at `retryAt`, remembering the failure. */
  retryLater(inferenceId: string, error: string, retryAt: Date): Promise<void>;
  /** Gives up: judge_status failed with the reason. */
  fail(inferenceId: string, error: string, at: Date): Promise<void>;
}

/** One kind of judge: scores a record in [0, 1] with a short rationale, or throws (AppError retryable or not). */
export interface Judge {
  readonly kind: JudgeKind;
  judge(record: InferenceRecord, settings: JudgeSettings): Promise<JudgeVerdict>;
}

/** One page of a conversation's items, in the order asked. */
export interface ItemPage {
  items: ConversationItem[];
  /** Whether more items lie beyond the page in that order. */
  hasMore: boolean;
}

/** Conversations and their items, in the history schema. Another team's conversation reads as absent. */
export interface ConversationStore {
  /** Stores the conversation with its first items at positions 0, 1, … in one transaction. */
  create(conversation: Conversation, items: ConversationItem[]): Promise<void>;
  get(teamId: string, id: string): Promise<Conversation | null>;
  updateMetadata(teamId: string, id: string, metadata: Record<string, string>): Promise<Conversation | null>;
  /** Deletes the conversation and its items; false when it is not the team's. */
  delete(teamId: string, id: string): Promise<boolean>;
  /**
   * Appends the items at the conversation's next positions, in order and consecutive, reserved under the
   * conversation's row lock in the insert's transaction; false when it is not the team's.
   */
  append(teamId: string, id: string, items: ConversationItem[]): Promise<boolean>;
  /** A page of the items by position, strictly beyond `afterId` in that order; null when `afterId` is not one of them. */
  listItems(
    conversationId: string,
    page: { limit: number; afterId?: string | undefined; ascending: boolean },
  ): Promise<ItemPage | null>;
  getItem(conversationId: string, itemId: string): Promise<ConversationItem | null>;
  /** Those of the items named that are in the conversation, by position. */
  getItems(conversationId: string, itemIds: string[]): Promise<ConversationItem[]>;
  /** False when the item is not in the conversation. */
  deleteItem(conversationId: string, itemId: string): Promise<boolean>;
}
