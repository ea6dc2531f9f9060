/**
 * Feedback datasets: human verdicts on a project's inferences (a correction, or a confirmation of the original
 * output) turned into training rows in the formats the trainer reads.
 */
import type { DatasetType } from './dataset';

/** One verdict as the dataset service keeps it: the answer a human vouched for, on the inference's input texts. */
export interface FeedbackVerdict {
  inferenceId: string;
  teamId: string;
  projectId: string;
  task: string;
  verdict: 'correct' | 'incorrect';
  /** The corrected output (incorrect) or the original one (correct): one object per input, or one object. */
  answer: unknown;
  inputs: string[];
  schema: Record<string, unknown> | null;
  submittedAt: Date;
  /** A decoder inference's conversation (the judged reply follows it); absent for extraction. */
  messages?: ChatMessage[];
}

/** An inference deleted from history: its verdict leaves the project's next feedback dataset version. */
export interface FeedbackDeletion {
  inferenceId: string;
  teamId: string;
  projectId: string;
  deletedAt: Date;
}

/** What a delivered batch of feedback.v1 changes: verdicts to store, and deleted inferences to drop. */
export interface FeedbackChanges {
  verdicts: FeedbackVerdict[];
  deletions: FeedbackDeletion[];
}

export interface ChatMessage {
  role: string;
  content: string;
}

export interface EntitySpan {
  start: number;
  end: number;
  label: string;
}

export interface ClassificationRow {
  task: string;
  labels: string[];
  multi_label?: boolean;
}

/** A row of the trainer's JSONL: extraction rows have `entities`, classification-only rows do not; chat rows `messages`. */
export interface FeedbackRow {
  text?: string;
  entities?: EntitySpan[];
  classifications?: ClassificationRow[];
  messages?: ChatMessage[];
}

/** Why (part of) a verdict did not become a row; shown in the version's report. */
export interface FeedbackIssue {
  field: string;
  reason: string;
}

/** What one verdict becomes: its rows (none when any part could not be converted) and why. */
export interface FeedbackExamples {
  rows: FeedbackRow[];
  issues: FeedbackIssue[];
}

/** The team's dataset that collects a project's feedback. */
export function feedbackDatasetName(projectId: string): string {
  return `feedback-${projectId}`;
}

/**
 * Generation when any row is a chat turn (a decoder project), else extraction when any row has entities
 * (classification-only rows then get an empty entity list), else classification.
 */
export function feedbackDatasetType(
  rows: FeedbackRow[],
): Extract<DatasetType, 'extraction' | 'classification' | 'generation'> {
  if (rows.some((r) => r.messages)) return 'generation';
  return rows.some((r) => r.entities) ? 'extraction' : 'classification';
}

/** The row as the dataset of `type` stores it. */
export function rowFor(type: DatasetType, row: FeedbackRow): FeedbackRow {
  return type === 'extraction' && !row.entities ? { text: row.text, entities: [], ...classificationsOf(row) } : row;
}

const classificationsOf = (row: FeedbackRow) => (row.classifications ? { classifications: row.classifications } : {});
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Keys of an output that are not classification tasks (relations, structures and decoder replies are not collected yet). */
const NOT_TASKS = new Set(['entities', 'relations', 'relation_extraction', 'structures', 'confidence', 'text']);

/**
 * Converts a verdict into rows, one per input text. Entity mentions given as surface strings are located in the
 * text (every whole-word occurrence, else any occurrence); a mention that is nowhere in the text, or an output that
 * holds nothing to learn, leaves the whole verdict out, with an issue per problem, rather than train on a half row.
 */
export function feedbackExamples(v: FeedbackVerdict): FeedbackExamples {
  if (v.messages?.length) return chatExample(v.messages, v.answer);
  const answers = Array.isArray(v.answer) ? v.answer : [v.answer];
  if (answers.length !== v.inputs.length)
    return {
      rows: [],
      issues: [{ field: 'output', reason: `has ${answers.length} outputs for ${v.inputs.length} inputs` }],
    };
  const rows: FeedbackRow[] = [];
  const issues: FeedbackIssue[] = [];
  answers.forEach((answer, i) => {
    const field = v.inputs.length > 1 ? `output.${i}` : 'output';
    const row = rowOf(v.inputs[i]!, answer, v.schema, field, issues);
    if (row) rows.push(row);
  });
  return issues.length ? { rows: [], issues } : { rows, issues };
}

/**
 * A decoder verdict as one chat row: the conversation, then the reply a human vouched for as the assistant's turn
 * (`{text}` for a correction; the stored `[{text, finish_reason}]` for a confirmation).
 */
function chatExample(messages: ChatMessage[], answer: unknown): FeedbackExamples {
  const reply = Array.isArray(answer) ? answer[0] : answer;
  const text = typeof reply === 'string' ? reply : isRecord(reply) && typeof reply.text === 'string' ? reply.text : '';
  if (!text.trim()) return { rows: [], issues: [{ field: 'output', reason: 'has no reply text to learn from' }] };
  return { rows: [{ messages: [...messages, { role: 'assistant', content: text }] }], issues: [] };
}

function rowOf(
  text: string,
  answer: unknown,
  schema: Record<string, unknown> | null,
  field: string,
  issues: FeedbackIssue[],
): FeedbackRow | null {
  if (!isRecord(answer)) return (issues.push({ field, reason: 'is not an output object' }), null);
  const row: FeedbackRow = { text };
  if (answer.entities !== undefined) row.entities = spansOf(text, answer.entities, `${field}.entities`, issues);
  const classifications = Object.entries(answer)
    .filter(([task]) => !NOT_TASKS.has(task))
    .map(([task, value]) => classificationOf(task, value, schema))
    .filter((c): c is ClassificationRow => c !== null);
  if (classifications.length) row.classifications = classifications;
  if (!row.entities && !row.classifications)
    return (issues.push({ field, reason: 'has no entities or classifications to learn from' }), null);
  return row;
}

interface Mention {
  surface: string;
  label: string;
  field: string;
  start?: number;
}

function spansOf(text: string, entities: unknown, field: string, issues: FeedbackIssue[]): EntitySpan[] {
  if (!isRecord(entities)) return (issues.push({ field, reason: 'must be an object of entity type → mentions' }), []);
  const mentions: Mention[] = [];
  for (const [label, list] of Object.entries(entities)) {
    if (!Array.isArray(list)) {
      issues.push({ field: `${field}.${label}`, reason: 'must be a list of mentions' });
      continue;
    }
    list.forEach((m, j) => {
      const at = `${field}.${label}.${j}`;
      if (typeof m === 'string') mentions.push({ surface: m, label, field: at });
      else if (isRecord(m) && typeof m.text === 'string')
        mentions.push({
          surface: m.text,
          label,
          field: at,
          ...(typeof m.start === 'number' && text.slice(m.start, m.start + m.text.length) === m.text
            ? { start: m.start }
            : {}),
        });
      else issues.push({ field: at, reason: 'must be a string or {text, start, end}' });
    });
  }
  // Longer mentions claim their text first, so "New York" is not split by a "York" of another type.
  mentions.sort((a, b) => b.surface.length - a.surface.length);
  const spans: EntitySpan[] = [];
  const overlaps = (s: number, e: number) => spans.some((x) => s < x.end && x.start < e);
  for (const m of mentions) {
    const starts = m.start !== undefined ? [m.start] : occurrences(text, m.surface);
    if (!m.surface.trim() || !starts.length) {
      issues.push({ field: m.field, reason: `"${m.surface}" is not in the input text` });
      continue;
    }
    for (const s of starts)
      if (!overlaps(s, s + m.surface.length)) spans.push({ start: s, end: s + m.surface.length, label: m.label });
  }
  return spans.sort((a, b) => a.start - b.start || a.end - b.end);
}

/** Start offsets of `surface` in `text`: the whole-word ones, or every one when none is a whole word. */
function occurrences(text: string, surface: string): number[] {
  if (!surface) return [];
  const all: number[] = [];
  for (let i = text.indexOf(surface); i >= 0; i = text.indexOf(surface, i + surface.length)) all.push(i);
  const word = /[\p{L}\p{N}]/u;
  const whole = all
    .filter((i) => !word.test(text[i - 1] ?? '') || !word.test(surface[0]!))
    .filter((i) => !word.test(text[i + surface.length] ?? '') || !word.test(surface.at(-1)!));
  return whole.length ? whole : all;
}

function classificationOf(
  task: string,
  value: unknown,
  schema: Record<string, unknown> | null,
): ClassificationRow | null {
  const labelOf = (x: unknown) =>
    typeof x === 'string' ? x : isRecord(x) && typeof x.label === 'string' ? x.label : null;
  const list = Array.isArray(value) ? value : [value];
  const labels = list.map(labelOf).filter((l): l is string => !!l);
  if (!labels.length || labels.length !== list.length) return null;
  const multi = multiLabel(schema, task) ?? labels.length > 1;
  return { task, labels, ...(multi ? { multi_label: true } : {}) };
}

/** The schema's multi_label for a task, in either of GLiNER2's classification shapes; null when it does not say. */
function multiLabel(schema: Record<string, unknown> | null, task: string): boolean | null {
  const c = schema?.classifications;
  const spec = Array.isArray(c) ? c.find((t) => isRecord(t) && t.task === task) : isRecord(c) ? c[task] : undefined;
  return isRecord(spec) && typeof spec.multi_label === 'boolean' ? spec.multi_label : null;
}
