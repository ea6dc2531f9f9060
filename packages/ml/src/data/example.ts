/** What a dataset trains: extraction (entities, classifications, relations, structures), classification or chat. */
export type DatasetKind = 'extraction' | 'classification' | 'chat';

/** An entity mention: character offsets `[start, end)` into the row's text, its label, and optionally the text itself. */
export interface EntitySpan {
  start: number;
  end: number;
  label: string;
  text?: string;
}

/** One turn of a chat row. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** One validated dataset row (canonical JSONL). */
export interface Example {
  text?: string;
  entities?: EntitySpan[];
  /** Single-label rows as in banking77: `{label, task}`. */
  label?: string;
  task?: string;
  /** Multi-task or multi-label rows: `[{task, labels, multi_label?}]`. */
  classifications?: { task: string; labels: string[]; multi_label?: boolean }[];
  relations?: { label: string; head: EntitySpan; tail: EntitySpan }[];
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
