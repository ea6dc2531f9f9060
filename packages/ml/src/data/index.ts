import { fnv1a } from '../text';

/**
 * Datasets: the canonical JSONL examples, converters from CSV and CoNLL/BIO,
 * validation with row-level errors, and a deterministic held-out split.
 * Shared by the trainer, the ML CLI and (later) the dataset service.
 */

export type DatasetKind = 'extraction' | 'classification' | 'chat';

export interface EntitySpan {
  start: number;
  end: number;
  label: string;
  text?: string;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

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

export interface RowError {
  /** 1-based line (or row) number in the uploaded file. */
  line: number;
  /** Dotted field path, or `(row)` for the whole line. */
  field: string;
  reason: string;
}

export interface ValidationReport {
  examples: Example[];
  errors: RowError[];
  /** Lines repeating an earlier example exactly: reported, not fatal. */
  duplicates: number[];
  /** Labels seen, with counts (entity types or classes). */
  labels: Record<string, number>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkSpan(span: unknown, text: string, field: string, line: number, errors: RowError[]): EntitySpan | null {
  if (!isObject(span)) return (errors.push({ line, field, reason: 'must be an object {start, end, label}' }), null);
  const { start, end, label } = span;
  if (!Number.isInteger(start) || !Number.isInteger(end))
    return (errors.push({ line, field, reason: 'start and end must be integers' }), null);
  if (typeof label !== 'string' || !label.trim())
    return (errors.push({ line, field: `${field}.label`, reason: 'label is missing' }), null);
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
  return { start: s, end: e, label, ...(typeof span.text === 'string' ? { text: span.text } : {}) };
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
    });
    if (errors.length === before && !messages.some((m) => isObject(m) && m.role === 'assistant')) {
      errors.push({ line, field: 'messages', reason: 'needs at least one assistant message to learn from' });
    }
    return errors.length === before ? { messages: messages as ChatMessage[] } : null;
  }

  const text = row.text;
  if (typeof text !== 'string' || !text.trim())
    return (errors.push({ line, field: 'text', reason: 'a non-empty string is required' }), null);
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

  /** As push, with the example's canonical JSON (computed once: for duplicates, the split and the output). */
  pushSerialized(raw: string, line: number): { example: Example; json: string } | null {
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
    errors.forEach((e) => this.error(e));
    if (!example) return null;
    const json = JSON.stringify(example);
    // Two independent 32-bit hashes: a false duplicate needs both to collide.
    const fingerprint = `${fnv1a(json)}:${fnv1a(`#${json}`)}`;
    if (this.seen.has(fingerprint)) this.duplicates.push(line);
    this.seen.add(fingerprint);
    this.valid++;
    labelsOf(example, this.labels);
    return { example, json };
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

/** The deterministic held-out decision for one example (the same rule as splitHeldOut). */
export function isHeldOut(example: unknown, options: { heldOutFraction?: number; seed?: string } = {}): boolean {
  return isHeldOutJson(JSON.stringify(example), options);
}

/** isHeldOut for an example already serialised with JSON.stringify. */
export function isHeldOutJson(json: string, options: { heldOutFraction?: number; seed?: string } = {}): boolean {
  return fnv1a(`${options.seed ?? 'whetstone'}\u0000${json}`) / 0x1_0000_0000 < (options.heldOutFraction ?? 0.1);
}

/** Parse CSV (RFC 4180 quoting) with a header naming `text` and `label` columns into classification JSONL rows. */
export function csvToJsonl(content: string): { jsonl: string; errors: RowError[] } {
  const rows: string[][] = [];
  let field = '';
  let row: string[] = [];
  let quoted = false;
  const endField = () => {
    row.push(field);
    field = '';
  };
  const endRow = () => {
    endField();
    rows.push(row);
    row = [];
  };
  for (let i = 0; i < content.length; i++) {
    const ch = content[i]!;
    if (quoted) {
      if (ch === '"' && content[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === '') quoted = true;
    else if (ch === ',') endField();
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && content[i + 1] === '\n') i++;
      endRow();
    } else field += ch;
  }
  if (field !== '' || row.length > 0) endRow();
  const errors: RowError[] = [];
  const header = (rows.shift() ?? []).map((h) => h.trim().toLowerCase());
  const ti = header.indexOf('text');
  const li = header.indexOf('label');
  if (ti === -1 || li === -1)
    return {
      jsonl: '',
      errors: [{ line: 1, field: '(header)', reason: 'a header with "text" and "label" columns is required' }],
    };
  const out: string[] = [];
  rows.forEach((r, i) => {
    if (r.length === 1 && r[0] === '') return;
    const text = r[ti]?.trim();
    const label = r[li]?.trim();
    if (!text || !label) errors.push({ line: i + 2, field: !text ? 'text' : 'label', reason: 'is empty or missing' });
    else out.push(JSON.stringify({ text, label }));
  });
  return { jsonl: out.join('\n'), errors };
}

/**
 * Convert CoNLL (`token TAG` per line, blank line between sentences) in BIO or
 * IOB1 to JSONL with character offsets; tokens are joined by single spaces.
 * Tags may be `B-PER`, `I-PER`, `O`; labels are lower-cased (`PER` → `per`).
 */
export function conllToJsonl(content: string): { jsonl: string; errors: RowError[] } {
  const out: string[] = [];
  const errors: RowError[] = [];
  let tokens: { token: string; tag: string }[] = [];
  const flush = () => {
    if (tokens.length === 0) return;
    let text = '';
    const entities: EntitySpan[] = [];
    let open: EntitySpan | null = null;
    for (const { token, tag } of tokens) {
      const start = text.length === 0 ? 0 : text.length + 1;
      text = text.length === 0 ? token : `${text} ${token}`;
      const [prefix, type] = tag === 'O' ? ['O', ''] : [tag.slice(0, 1), tag.slice(2).toLowerCase()];
      const continues = open && prefix === 'I' && open.label === type;
      if (continues) open!.end = text.length;
      else {
        if (open) entities.push(open);
        open = prefix === 'O' ? null : { start, end: text.length, label: type };
      }
    }
    if (open) entities.push(open);
    out.push(JSON.stringify({ text, entities: entities.map((e) => ({ ...e, text: text.slice(e.start, e.end) })) }));
    tokens = [];
  };
  content.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('-DOCSTART-')) return flush();
    const parts = line.split(/\s+/);
    const token = parts[0]!;
    const tag = parts[parts.length - 1]!;
    if (parts.length < 2 || !/^(O|[BI]-.+)$/.test(tag))
      return void errors.push({
        line: i + 1,
        field: 'tag',
        reason: `expected "token TAG" with TAG O, B-X or I-X; got "${line}"`,
      });
    tokens.push({ token, tag });
  });
  flush();
  return { jsonl: out.join('\n'), errors };
}

/**
 * A deterministic train/held-out split: each example goes by a hash of its
 * content and the seed, so the same file always splits the same way and an
 * evaluation never trains on its own test rows.
 */
export function splitHeldOut<T>(
  examples: T[],
  options: { heldOutFraction?: number; seed?: string } = {},
): { train: T[]; heldOut: T[] } {
  const train: T[] = [];
  const heldOut: T[] = [];
  for (const e of examples) (isHeldOut(e, options) ? heldOut : train).push(e);
  return { train, heldOut };
}
