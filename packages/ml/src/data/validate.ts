import { fnv1a } from '../text/tokenize';
import type {
  ArgumentSpan,
  ChatMessage,
  DatasetKind,
  EntitySpan,
  Example,
  RowError,
  ValidationReport,
} from './example';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkSpan(span: unknown, text: string, field: string, line: number, errors: RowError[]): EntitySpan | null {
  return checkArgument(span, text, field, line, errors, true) as EntitySpan | null;
}

/** A span's offsets and text checked against the row's text; its label is required or, when given, a non-empty string. */
function checkArgument(
  span: unknown,
  text: string,
  field: string,
  line: number,
  errors: RowError[],
  labelRequired: boolean,
): ArgumentSpan | null {
  const shape = labelRequired ? '{start, end, label}' : '{start, end, label?}';
  if (!isObject(span)) return (errors.push({ line, field, reason: `must be an object ${shape}` }), null);
  const { start, end, label } = span;
  if (!Number.isInteger(start) || !Number.isInteger(end))
    return (errors.push({ line, field, reason: 'start and end must be integers' }), null);
  if ((labelRequired || label !== undefined) && (typeof label !== 'string' || !label.trim()))
    return (
      errors.push({
        line,
        field: `${field}.label`,
        reason: labelRequired ? 'label is missing' : 'must be a non-empty string',
      }),
      null
    );
  const s = start as number;
  const e = end as number;
  if (s < 0 || e > text.length || s >= e) {
    return (
      errors.push({
        line,
        field,
        reason: `offsets [${s}, ${e}) are outside the text (length ${text.length}) or empty`,
      }),
      null
    );
  }
  if (span.text !== undefined && span.text !== text.slice(s, e)) {
    return (
      errors.push({
        line,
        field: `${field}.text`,
        reason: `"${String(span.text)}" does not match the text at [${s}, ${e}): "${text.slice(s, e)}"`,
      }),
      null
    );
  }
  return {
    start: s,
    end: e,
    ...(typeof label === 'string' ? { label } : {}),
    ...(typeof span.text === 'string' ? { text: span.text } : {}),
  };
}

/**
 * A relation-classification row: `{text, head, tail, label}`, one ordered pair of given spans and its relation
 * (`no_relation`, `none` or `Other` when unrelated); the spans' types are optional.
 */
function readGivenPair(row: Record<string, unknown>, text: string, line: number, errors: RowError[]): Example | null {
  const before = errors.length;
  const head = checkArgument(row.head, text, 'head', line, errors, false);
  const tail = checkArgument(row.tail, text, 'tail', line, errors, false);
  if (typeof row.label !== 'string' || !row.label.trim())
    errors.push({
      line,
      field: 'label',
      reason: 'the relation between head and tail is required (no_relation, none or Other when there is none)',
    });
  if (head && tail && head.start === tail.start && head.end === tail.end)
    errors.push({ line, field: 'tail', reason: 'head and tail are the same span' });
  if (row.relations !== undefined)
    errors.push({
      line,
      field: 'relations',
      reason: 'a row with head and tail gives one relation; leave out relations',
    });
  return errors.length === before ? { text, head: head!, tail: tail!, label: row.label as string } : null;
}

/** Validate one parsed JSON row of the given kind; pushes row-level errors and returns the example if valid. */
export function validateExample(row: unknown, kind: DatasetKind, line: number, errors: RowError[]): Example | null {
  const before = errors.length;
  if (!isObject(row)) return (errors.push({ line, field: '(row)', reason: 'each line must be a JSON object' }), null);
  if (kind === 'chat') {
    const messages = row.messages;
    if (!Array.isArray(messages) || messages.length === 0)
      return (
        errors.push({ line, field: 'messages', reason: 'a non-empty array of {role, content} is required' }),
        null
      );
    messages.forEach((m, i) => {
      if (!isObject(m) || !['system', 'user', 'assistant'].includes(String(m.role)))
        errors.push({ line, field: `messages.${i}.role`, reason: 'must be system, user or assistant' });
      else if (typeof m.content !== 'string' || !m.content)
        errors.push({ line, field: `messages.${i}.content`, reason: 'must be a non-empty string' });
      else if (m.weight !== undefined && (m.role !== 'assistant' || (m.weight !== 0 && m.weight !== 1)))
        errors.push({ line, field: `messages.${i}.weight`, reason: 'must be 0 or 1, on an assistant message only' });
    });
    const learnable = (m: unknown) => isObject(m) && m.role === 'assistant' && m.weight !== 0;
    if (errors.length === before && !messages.some(learnable)) {
      errors.push({
        line,
        field: 'messages',
        reason: 'needs at least one assistant message to learn from (one not given weight 0)',
      });
    }
    return errors.length === before ? { messages: messages as ChatMessage[] } : null;
  }

  const text = row.text;
  if (typeof text !== 'string' || !text.trim())
    return (errors.push({ line, field: 'text', reason: 'a non-empty string is required' }), null);
  // One given pair per row (relation classification), in a dataset of either kind.
  if (row.head !== undefined || row.tail !== undefined) return readGivenPair(row, text, line, errors);
  const example: Example = { text };

  const readClassifications = () => {
    example.classifications = [];
    (row.classifications as unknown[]).forEach((c, i) => {
      if (
        !isObject(c) ||
        typeof c.task !== 'string' ||
        !Array.isArray(c.labels) ||
        c.labels.length === 0 ||
        !c.labels.every((l) => typeof l === 'string' && l)
      ) {
        errors.push({
          line,
          field: `classifications.${i}`,
          reason: 'must be {task, labels: [string, ...], multi_label?}',
        });
      } else {
        example.classifications!.push({
          task: c.task,
          labels: c.labels as string[],
          ...(c.multi_label === true ? { multi_label: true } : {}),
        });
      }
    });
  };
  if (kind === 'classification') {
    if (typeof row.label === 'string' && row.label.trim()) {
      example.label = row.label;
      if (typeof row.task === 'string') example.task = row.task;
    } else if (Array.isArray(row.classifications) && row.classifications.length > 0) {
      readClassifications();
    } else {
      errors.push({ line, field: 'label', reason: 'a label (or a classifications array) is required' });
    }
    return errors.length === before ? example : null;
  }

  if (row.structures !== undefined) readStructures(row.structures, example, line, errors);
  if (!Array.isArray(row.entities)) {
    if (example.structures) return errors.length === before ? example : null;
    return (errors.push({ line, field: 'entities', reason: 'an array is required (it may be empty)' }), null);
  }
  example.entities = [];
  row.entities.forEach((span, i) => {
    const ok = checkSpan(span, text, `entities.${i}`, line, errors);
    if (ok) example.entities!.push(ok);
  });
  // Extraction rows may also carry classification tasks.
  if (Array.isArray(row.classifications) && row.classifications.length > 0) readClassifications();
  if (row.relations !== undefined) {
    if (!Array.isArray(row.relations)) errors.push({ line, field: 'relations', reason: 'must be an array' });
    else {
      example.relations = [];
      row.relations.forEach((r, i) => {
        if (!isObject(r) || typeof r.label !== 'string' || !r.label)
          return void errors.push({ line, field: `relations.${i}.label`, reason: 'label is missing' });
        const head = checkSpan(r.head, text, `relations.${i}.head`, line, errors);
        const tail = checkSpan(r.tail, text, `relations.${i}.tail`, line, errors);
        if (head && tail) example.relations!.push({ label: r.label, head, tail });
      });
    }
  }
  return errors.length === before ? example : null;
}

/** `structures`: `{name: [{field: "value" | ["value", …]}, …]}`, every value a non-empty string. */
function readStructures(value: unknown, example: Example, line: number, errors: RowError[]): void {
  if (!isObject(value))
    return void errors.push({
      line,
      field: 'structures',
      reason: 'must be an object of structure name → array of instances',
    });
  const out: NonNullable<Example['structures']> = {};
  for (const [name, instances] of Object.entries(value)) {
    if (!Array.isArray(instances)) {
      errors.push({ line, field: `structures.${name}`, reason: 'must be an array of instances ({field: value})' });
      continue;
    }
    out[name] = [];
    instances.forEach((inst, i) => {
      if (!isObject(inst))
        return void errors.push({
          line,
          field: `structures.${name}.${i}`,
          reason: 'an instance must be an object of field → value',
        });
      const fields: Record<string, string | string[]> = {};
      for (const [f, v] of Object.entries(inst)) {
        const ok =
          (typeof v === 'string' && v.trim() !== '') ||
          (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string' && x.trim() !== ''));
        if (!ok)
          errors.push({
            line,
            field: `structures.${name}.${i}.${f}`,
            reason: 'must be a non-empty string or an array of them',
          });
        else fields[f] = v as string | string[];
      }
      out[name]!.push(fields);
    });
  }
  example.structures = out;
}

function labelsOf(example: Example, into: Record<string, number>): void {
  const add = (l: string) => (into[l] = (into[l] ?? 0) + 1);
  example.entities?.forEach((e) => add(e.label));
  if (example.label) add(example.label);
  example.classifications?.forEach((c) => c.labels.forEach(add));
  example.relations?.forEach((r) => add(r.label));
  for (const [name, instances] of Object.entries(example.structures ?? {}))
    for (const inst of instances) for (const f of Object.keys(inst)) add(`${name}.${f}`);
}

/** Decode strictly as UTF-8; a bad byte sequence is a row-level error on its line, not a crash. */
export function decodeUtf8(bytes: Uint8Array): { text: string; error?: RowError } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    const text = new TextDecoder('utf-8').decode(bytes);
    const line = text.slice(0, text.indexOf('\uFFFD')).split('\n').length;
    return { text, error: { line, field: '(row)', reason: 'the file is not valid UTF-8 here' } };
  }
}

/**
 * Line-at-a-time validation of canonical JSONL, for files too large to hold:
 * push each line, keep or stream the examples it returns, then `finish()`.
 * Duplicates are remembered by a 64-bit fingerprint, not the whole row.
 */
/** Where a row asks to go: training, or the held-out split that evaluations score. */
export type PinnedSplit = 'train' | 'heldout';

const SPLIT_NAMES: Record<string, PinnedSplit> = {
  train: 'train',
  heldout: 'heldout',
  test: 'heldout',
  validation: 'heldout',
  dev: 'heldout',
};

/** The row's `split` field: undefined when absent (the hash decides), null (with an error) when not a known name. */
function pinnedSplit(row: unknown, line: number, errors: RowError[]): PinnedSplit | undefined | null {
  if (!isObject(row) || row.split === undefined) return undefined;
  const split = typeof row.split === 'string' ? SPLIT_NAMES[row.split.toLowerCase()] : undefined;
  if (split) return split;
  errors.push({ line, field: 'split', reason: 'must be "train" or "heldout" (also "test", "validation" or "dev")' });
  return null;
}

export class JsonlValidator {
  readonly errors: RowError[] = [];
  readonly duplicates: number[] = [];
  readonly labels: Record<string, number> = {};
  valid = 0;
  rows = 0;
  private readonly seen = new Set<string>();

  constructor(
    private readonly kind: DatasetKind,
    private readonly options: { minExamples?: number; maxErrors?: number } = {},
  ) {}

  /** Errors beyond `maxErrors` are counted here, not kept. */
  droppedErrors = 0;

  private error(e: RowError): void {
    if (this.errors.length < (this.options.maxErrors ?? Number.POSITIVE_INFINITY)) this.errors.push(e);
    else this.droppedErrors++;
  }

  /** Checks one line; returns the example when it is valid. */
  push(raw: string, line: number): Example | null {
    return this.pushSerialized(raw, line)?.example ?? null;
  }

  /**
   * As push, with the example's canonical JSON (computed once: for duplicates, the split and the output), and the
   * split the row pins, if any (`"split": "train"`, or `"heldout"` / `"test"` / `"validation"` / `"dev"`).
   */
  pushSerialized(raw: string, line: number): { example: Example; json: string; split?: PinnedSplit } | null {
    const trimmed = raw.trim();
    if (!trimmed) return null;
    this.rows++;
    let row: unknown;
    try {
      row = JSON.parse(trimmed);
    } catch (err) {
      this.error({ line, field: '(row)', reason: `invalid JSON: ${(err as Error).message}` });
      return null;
    }
    const errors: RowError[] = [];
    const example = validateExample(row, this.kind, line, errors);
    const split = pinnedSplit(row, line, errors);
    errors.forEach((e) => this.error(e));
    if (!example || split === null) return null;
    const json = JSON.stringify(example);
    // Two independent 32-bit hashes: a false duplicate needs both to collide.
    const fingerprint = `${fnv1a(json)}:${fnv1a(`#${json}`)}`;
    if (this.seen.has(fingerprint)) this.duplicates.push(line);
    this.seen.add(fingerprint);
    this.valid++;
    labelsOf(example, this.labels);
    return split ? { example, json, split } : { example, json };
  }

  /** Whole-file checks: no examples at all, or too few to train on. */
  finish(): void {
    if (this.valid === 0 && this.errors.length === 0)
      this.error({ line: 0, field: '(file)', reason: 'the file has no examples' });
    const min = this.options.minExamples ?? 0;
    if (this.valid > 0 && this.valid < min)
      this.error({
        line: 0,
        field: '(file)',
        reason: `at least ${min} valid examples are needed for training; found ${this.valid}`,
      });
  }

  get totalErrors(): number {
    return this.errors.length + this.droppedErrors;
  }
}

/** Validate canonical JSONL content: every line parsed and checked, every problem reported with its line. */
export function validateJsonl(
  content: string,
  kind: DatasetKind,
  options: { minExamples?: number } = {},
): ValidationReport {
  const validator = new JsonlValidator(kind, options);
  const examples: Example[] = [];
  content.split('\n').forEach((raw, i) => {
    const example = validator.push(raw, i + 1);
    if (example) examples.push(example);
  });
  validator.finish();
  return { examples, errors: validator.errors, duplicates: validator.duplicates, labels: validator.labels };
}
