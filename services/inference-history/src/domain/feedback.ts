import type { FieldError } from '@whetstone/errors';
import type { InferenceRecord, Verdict } from './record';

/** Feedback notes are at most this long (the spec's limit). */
export const MAX_NOTES = 5_000;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const keysOf = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : isRecord(v) ? Object.keys(v) : [];

/** The labels a stored schema allows, whatever GLiNER2 shape the caller used; null when the call had no schema. */
interface Labels {
  entities: Set<string>;
  relations: Set<string>;
  classifications: Map<string, { labels: Set<string>; multi: boolean }>;
  /** structure → field → allowed choices (empty: free text from the input). */
  structures: Map<string, Map<string, Set<string>>>;
}

function labelsOf(schema: Record<string, unknown>): Labels {
  const classifications = new Map<string, { labels: Set<string>; multi: boolean }>();
  const c = schema.classifications;
  const add = (task: unknown, labels: unknown, multi: unknown) => {
    if (typeof task === 'string') classifications.set(task, { labels: new Set(keysOf(labels)), multi: multi === true });
  };
  if (Array.isArray(c)) for (const t of c) if (isRecord(t)) add(t.task, t.labels, t.multi_label);
  if (isRecord(c))
    for (const [task, v] of Object.entries(c)) add(task, isRecord(v) ? v.labels : v, isRecord(v) && v.multi_label);
  const structures = new Map<string, Map<string, Set<string>>>();
  if (isRecord(schema.structures))
    for (const [name, fields] of Object.entries(schema.structures)) {
      const entries: [string, unknown][] = Array.isArray(fields)
        ? fields.map((f) => (typeof f === 'string' ? [f.split('::')[0]!, f] : [String(isRecord(f) ? f.name : ''), f]))
        : isRecord(fields)
          ? Object.entries(fields)
          : [];
      structures.set(name, new Map(entries.map(([field, spec]) => [field, new Set(choicesOf(spec))])));
    }
  return {
    entities: new Set(keysOf(schema.entities)),
    relations: new Set(keysOf(schema.relations)),
    classifications,
    structures,
  };
}

/** A structure field's fixed choices: `{choices: [...]}` or GLiNER2's `"name::[a|b]::str"`. */
function choicesOf(spec: unknown): string[] {
  if (isRecord(spec)) return keysOf(spec.choices);
  if (typeof spec !== 'string') return [];
  const part = spec.split('::').find((p) => /^\[.*\]$/.test(p));
  return part
    ? part
        .slice(1, -1)
        .split('|')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
}

/** Collects problems with one corrected output against its input text and the schema's labels. */
class ShapeCheck {
  readonly issues: FieldError[] = [];
  constructor(
    private readonly text: string,
    private readonly labels: Labels | null,
  ) {}

  private bad(field: string, message: string): void {
    if (this.issues.length < 50) this.issues.push({ field, message, code: 'shape' });
  }

  /** An entity mention: a string that occurs in the text, or {text, start?, end?} whose offsets point at it. */
  span(v: unknown, field: string): void {
    if (typeof v === 'string') {
      if (!v || !this.text.includes(v)) this.bad(field, `'${v}' does not occur in the inference's input text`);
      return;
    }
    if (!isRecord(v) || typeof v.text !== 'string' || !v.text) {
      this.bad(field, 'must be a string of the input text or {text, start, end}');
      return;
    }
    const { start, end } = v;
    if (start === undefined && end === undefined) return this.span(v.text, `${field}.text`);
    const ok = Number.isInteger(start) && Number.isInteger(end) && (start as number) >= 0;
    if (!ok || this.text.slice(start as number, end as number) !== v.text)
      this.bad(field, `start and end must point at '${v.text}' inside the input text`);
  }

  entities(v: unknown, field: string): void {
    if (!isRecord(v)) return this.bad(field, 'must be an object of entity type → mentions');
    for (const [label, mentions] of Object.entries(v)) {
      if (this.labels && !this.labels.entities.has(label))
        this.bad(`${field}.${label}`, "is not an entity type of the inference's schema");
      if (!Array.isArray(mentions)) this.bad(`${field}.${label}`, 'must be a list of mentions');
      else mentions.forEach((m, i) => this.span(m, `${field}.${label}.${i}`));
    }
  }

  relations(v: unknown, field: string): void {
    if (!isRecord(v)) return this.bad(field, 'must be an object of relation → [head, tail] pairs');
    for (const [label, pairs] of Object.entries(v)) {
      if (this.labels && !this.labels.relations.has(label))
        this.bad(`${field}.${label}`, "is not a relation of the inference's schema");
      if (!Array.isArray(pairs)) {
        this.bad(`${field}.${label}`, 'must be a list of pairs');
        continue;
      }
      pairs.forEach((p, i) => {
        const [head, tail] = Array.isArray(p) && p.length === 2 ? p : isRecord(p) ? [p.head, p.tail] : [null, null];
        if (head === null || tail === null) return this.bad(`${field}.${label}.${i}`, 'must be [head, tail]');
        this.span(head, `${field}.${label}.${i}.head`);
        this.span(tail, `${field}.${label}.${i}.tail`);
      });
    }
  }

  /** A label (or {label}) from the task's labels; a list of them only for multi-label tasks. */
  classification(v: unknown, field: string, task: { labels: Set<string>; multi: boolean } | undefined): void {
    const one = (x: unknown, f: string) => {
      const label = isRecord(x) ? x.label : x;
      if (typeof label !== 'string') this.bad(f, 'must be a label');
      else if (task && !task.labels.has(label)) this.bad(f, `'${label}' is not a label of this task in the schema`);
    };
    if (!Array.isArray(v)) return one(v, field);
    if (task && !task.multi) return this.bad(field, 'must be one label: the task is not multi-label');
    v.forEach((x, i) => one(x, `${field}.${i}`));
  }

  structure(v: unknown, field: string, fields: Map<string, Set<string>> | undefined): void {
    if (!Array.isArray(v)) return this.bad(field, 'must be a list of instances');
    v.forEach((instance, i) => {
      if (!isRecord(instance)) return this.bad(`${field}.${i}`, 'must be an object of field → value');
      for (const [name, value] of Object.entries(instance)) {
        const f = `${field}.${i}.${name}`;
        const choices = fields?.get(name);
        if (fields && !choices) this.bad(f, 'is not a field of this structure in the schema');
        const values = value === null ? [] : Array.isArray(value) ? value : [value];
        for (const x of values)
          if (choices?.size) this.classification(x, f, { labels: choices, multi: true });
          else this.span(x, f);
      }
    });
  }

  output(v: unknown, field: string): void {
    if (!isRecord(v)) return this.bad(field, 'must be an object shaped like the original output');
    const l = this.labels;
    for (const [key, value] of Object.entries(v)) {
      const f = field ? `${field}.${key}` : key;
      if (key === 'entities') this.entities(value, f);
      else if (key === 'relation_extraction') this.relations(value, f);
      else if (l?.classifications.has(key)) this.classification(value, f, l.classifications.get(key));
      else if (l?.structures.has(key)) this.structure(value, f, l.structures.get(key));
      else if (l) this.bad(f, "is not part of the inference's schema");
      else if (Array.isArray(value) && value.some(isRecord)) this.structure(value, f, undefined);
      else this.classification(value, f, undefined);
    }
  }
}

/** A decoder reply's correction: `{text}` with the right reply. */
function checkReply(v: unknown): FieldError[] {
  const ok = isRecord(v) && typeof v.text === 'string' && v.text.length > 0 && Object.keys(v).length === 1;
  return ok ? [] : [{ field: 'corrected_output', message: 'must be {text} with the right reply', code: 'shape' }];
}

/**
 * What is wrong with a verdict on a record: the verdict/correction combination,
 * the notes' length, and a correction that does not have the shape of the
 * original output (entity spans inside the input text, labels and tasks from
 * the request's schema; one object per input, as a list when the call had several).
 */
export function feedbackProblems(
  record: InferenceRecord,
  input: { verdict: Verdict; correctedOutput: unknown; notes: string },
): FieldError[] {
  const issues: FieldError[] = [];
  if (input.notes.length > MAX_NOTES)
    issues.push({ field: 'notes', message: `must be at most ${MAX_NOTES} characters`, code: 'too_big' });
  const given = input.correctedOutput !== null && input.correctedOutput !== undefined;
  if (input.verdict === 'correct') {
    if (given)
      issues.push({
        field: 'corrected_output',
        message: 'must be omitted or null when verdict is correct',
        code: 'not_allowed',
      });
    return issues;
  }
  if (!given)
    return [
      ...issues,
      { field: 'corrected_output', message: 'is required when verdict is incorrect', code: 'required' },
    ];
  if (record.task === 'generate') return [...issues, ...checkReply(input.correctedOutput)];

  const labels = record.schema ? labelsOf(record.schema) : null;
  const texts = record.inputs;
  if (texts.length <= 1) {
    const check = new ShapeCheck(texts[0] ?? '', labels);
    check.output(input.correctedOutput, 'corrected_output');
    return [...issues, ...check.issues];
  }
  const list = input.correctedOutput;
  if (!Array.isArray(list) || list.length !== texts.length)
    return [
      ...issues,
      { field: 'corrected_output', message: `must be a list of ${texts.length} outputs, one per input`, code: 'shape' },
    ];
  list.forEach((out, i) => {
    const check = new ShapeCheck(texts[i]!, labels);
    check.output(out, `corrected_output.${i}`);
    issues.push(...check.issues);
  });
  return issues;
}
