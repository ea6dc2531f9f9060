/** What a dataset trains: extraction (entities, classifications, relations, structures), classification or chat. */
export type DatasetKind = 'extraction' | 'classification' | 'chat';

/** An entity mention: character offsets `[start, end)` into the row's text, its label, and optionally the text itself. */
export interface EntitySpan {
  start: number;
  end: number;
  label: string;
  text?: string;
}

/** A relation argument given by a relation-classification row: offsets `[start, end)`, its type optionally. */
export interface ArgumentSpan {
  start: number;
  end: number;
  label?: string;
  text?: string;
}

/** Relation labels that mean "no relation" in a relation-classification row (TACRED, SemEval and plain names). */
export const NO_RELATION_LABELS: readonly string[] = ['no_relation', 'none', 'other', 'no relation', 'norelation'];

/** Whether a relation-classification label means "no relation" (case-insensitive). */
export const isNoRelation = (label: string): boolean => NO_RELATION_LABELS.includes(label.trim().toLowerCase());

/** One turn of a chat row. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  /** OpenAI's fine-tuning weight, assistant messages only: 0 leaves the message out of the loss; absent means 1. */
  weight?: 0 | 1;
}

/** One validated dataset row (canonical JSONL). */
export interface Example {
  text?: string;
  entities?: EntitySpan[];
  /** Single-label rows as in banking77: `{label, task}`; with `head` and `tail`, the relation between them. */
  label?: string;
  task?: string;
  /** Multi-task or multi-label rows: `[{task, labels, multi_label?}]`. */
  classifications?: { task: string; labels: string[]; multi_label?: boolean }[];
  relations?: { label: string; head: EntitySpan; tail: EntitySpan }[];
  /**
   * Relation classification with given spans (TACRED, SemEval style): the row's one ordered pair, whose relation is
   * `label` (a label in {@link NO_RELATION_LABELS} when they are not related).
   */
  head?: ArgumentSpan;
  tail?: ArgumentSpan;
  /** Structure instances by structure name: field → its value(s), as written in the text (or one of the field's choices). */
  structures?: Record<string, Record<string, string | string[]>[]>;
  messages?: ChatMessage[];
}

/** A problem with one row of an uploaded file. */
export interface RowError {
  /** 1-based line (or row) number in the uploaded file. */
  line: number;
  /** Dotted field path, or `(row)` for the whole line. */
  field: string;
  reason: string;
}

/** Everything validating a whole file found. */
export interface ValidationReport {
  examples: Example[];
  errors: RowError[];
  /** Lines repeating an earlier example exactly: reported, not fatal. */
  duplicates: number[];
  /** Labels seen, with counts (entity types or classes). */
  labels: Record<string, number>;
}
