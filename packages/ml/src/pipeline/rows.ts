import { isNoRelation, type Example } from '../data';
import type { CanonicalRow } from './types';

/** One classification task's training examples, gathered from every row that labels it. */
interface ClassificationTaskData {
  task: string;
  multiLabel: boolean;
  examples: { text: string; labels: string[] }[];
}

/**
 * Rows → encoder examples (entities, and relations where a row lists them),
 * given pairs (`{text, head, tail, label}` relation-classification rows) and
 * per-task classification examples (list, dict and banking77 `{label, task}`
 * forms).
 */
export function prepare(rows: (CanonicalRow | Example)[]): {
  entities: Example[];
  /** Relation-classification rows: one given head and tail each, and their relation (or a no-relation label). */
  pairs: Example[];
  encoderRows: Example[];
  tasks: ClassificationTaskData[];
  hasEntities: boolean;
  relationLabels: string[];
  structures: Record<string, Record<string, 'str' | 'list'>>;
} {
  const entities: Example[] = [];
  const pairs: Example[] = [];
  const encoderRows: Example[] = [];
  let rowClasses: { task: string; labels: string[] }[] = [];
  const tasks = new Map<string, ClassificationTaskData>();
  const relationLabels = new Set<string>();
  const structures: Record<string, Record<string, 'str' | 'list'>> = {};
  let hasEntities = false;
  const add = (text: string, task: string, labels: string[], multi: boolean) => {
    let t = tasks.get(task);
    if (!t) tasks.set(task, (t = { task, multiLabel: multi, examples: [] }));
    t.multiLabel ||= multi || labels.length > 1;
    t.examples.push({ text, labels });
    rowClasses.push({ task, labels });
  };
  for (const raw of rows) {
    const row = raw as Example & CanonicalRow;
    const text = row.text ?? '';
    if (!text) continue;
    if (row.head && row.tail && typeof row.label === 'string') {
      const pair: Example = { text, head: row.head, tail: row.tail, label: row.label };
      pairs.push(pair);
      encoderRows.push(pair);
      if (!isNoRelation(row.label)) relationLabels.add(row.label);
      continue;
    }
    rowClasses = [];
    let tagged: Example | null = null;
    const fields = row.structures
      ? structureSpans(text, row.structures as NonNullable<Example['structures']>, structures)
      : null;
    for (const c of fields?.choices ?? []) add(text, c.task, c.labels, c.multi);
    if (Array.isArray(row.entities) || Array.isArray(row.relations) || fields) {
      const spans = [
        ...(row.entities ?? []).map((e) => ({ start: e.start, end: e.end, label: e.label })),
        ...(fields?.spans ?? []),
      ];
      // An argument without a type takes the type of the gold entity at its offsets.
      const argument = (a: { start: number; end: number; label?: string }) => ({
        start: a.start,
        end: a.end,
        label: a.label ?? spans.find((e) => e.start === a.start && e.end === a.end)?.label ?? '',
      });
      const relations = Array.isArray(row.relations)
        ? row.relations.map((r) => ({ label: r.label, head: argument(r.head), tail: argument(r.tail) }))
        : undefined;
      tagged = { text, entities: spans, ...(relations ? { relations } : {}) };
      entities.push(tagged);
      if (spans.length) hasEntities = true;
      for (const r of relations ?? []) relationLabels.add(r.label);
    }
    if (typeof row.label === 'string') add(text, row.task ?? 'label', [row.label], false);
    if (Array.isArray(row.classifications))
      for (const c of row.classifications) add(text, c.task, c.labels, c.multi_label === true);
    else if (row.classifications && typeof row.classifications === 'object') {
      for (const [task, v] of Object.entries(row.classifications))
        add(text, task, Array.isArray(v) ? v : [v], Array.isArray(v));
    }
    // The encoder learns from the row's tags and relations, and from its classes (pooled head).
    if (tagged || rowClasses.length)
      encoderRows.push({ ...(tagged ?? { text }), ...(rowClasses.length ? { classifications: rowClasses } : {}) });
  }
  return {
    entities,
    pairs,
    encoderRows,
    tasks: [...tasks.values()],
    hasEntities,
    relationLabels: [...relationLabels].sort(),
    structures,
  };
}

/** The label (entity type or classification task) a structure field trains: `structure.field`. */
export const structureLabel = (structure: string, field: string) => `${structure}.${field}`;

/**
 * Structure instances as training signal: a field value written in the text
 * becomes an entity span labelled `structure.field` (its first unused
 * occurrence, exact case first); a value not in the text is one of the field's
 * choices and becomes a classification label of task `structure.field`. Field
 * types (`str` or `list`) are recorded for the manifest.
 */
function structureSpans(
  text: string,
  structures: NonNullable<Example['structures']>,
  types: Record<string, Record<string, 'str' | 'list'>>,
): {
  spans: { start: number; end: number; label: string }[];
  choices: { task: string; labels: string[]; multi: boolean }[];
} {
  const spans: { start: number; end: number; label: string }[] = [];
  const choices: { task: string; labels: string[]; multi: boolean }[] = [];
  const taken = (s: number, e: number) => spans.some((x) => s < x.end && e > x.start);
  const find = (value: string): number => {
    for (const hay of [text, text.toLowerCase()]) {
      const needle = hay === text ? value : value.toLowerCase();
      for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + 1))
        if (!taken(at, at + value.length)) return at;
    }
    return -1;
  };
  for (const [name, instances] of Object.entries(structures)) {
    const fieldTypes = (types[name] ??= {});
    for (const inst of instances)
      for (const [field, raw] of Object.entries(inst)) {
        const values = Array.isArray(raw) ? raw : [raw];
        if (Array.isArray(raw) || fieldTypes[field] === undefined)
          fieldTypes[field] = Array.isArray(raw) ? 'list' : (fieldTypes[field] ?? 'str');
        const label = structureLabel(name, field);
        const absent: string[] = [];
        for (const v of values) {
          const at = find(v);
          if (at >= 0) spans.push({ start: at, end: at + v.length, label });
          else absent.push(v);
        }
        if (absent.length) choices.push({ task: label, labels: absent, multi: Array.isArray(raw) });
      }
  }
  return { spans: spans.sort((a, b) => a.start - b.start), choices };
}
