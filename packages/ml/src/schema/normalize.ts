import type { ExtractionSchema } from '../pipeline/types';

/** One schema problem, named by its field path (for 422 `errors`). */
export interface SchemaIssue {
  field: string;
  message: string;
}

/** One field of a normalised structure: its value type, allowed choices (empty: free text) and description. */
export interface StructureField {
  name: string;
  type: 'str' | 'list';
  choices: string[];
  description: string;
}

/** The one internal form of a native extraction schema, whatever shape the caller used. */
export interface NormalizedSchema {
  entities: string[];
  /** Optional per-entity descriptions (GLiNER2's dict form). */
  entityDescriptions: Record<string, string>;
  classifications: { task: string; labels: string[]; multi_label: boolean }[];
  relations: string[];
  structures: { name: string; fields: StructureField[] }[];
}

/** An invalid extraction schema; `issues` names every bad field (the message joins them). */
export class SchemaError extends Error {
  constructor(readonly issues: SchemaIssue[]) {
    super(issues.map((i) => `${i.field}: ${i.message}`).join('; '));
    this.name = 'SchemaError';
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.trim().length > 0;

/**
 * Accepts GLiNER2's shapes: `entities` as a list or a `{label: description}`
 * dict, `classifications` as a list of `{task, labels, multi_label?}` or a dict
 * keyed by task, `relations` as a list or a dict, `structures` as
 * `{name: {field: "str" | "list" | {type, choices, description}}}` (a field
 * spec string may also be GLiNER2's `"field::str::description"`).
 * Throws SchemaError naming every bad field; an empty schema is an error.
 */
export function normalizeSchema(input: unknown, path = 'schema'): NormalizedSchema {
  const issues: SchemaIssue[] = [];
  const out: NormalizedSchema = {
    entities: [],
    entityDescriptions: {},
    classifications: [],
    relations: [],
    structures: [],
  };
  if (!isRecord(input))
    throw new SchemaError([
      { field: path, message: 'must be an object with entities, classifications, relations or structures' },
    ]);
  const s = input as ExtractionSchema & Record<string, unknown>;
  for (const key of Object.keys(s)) {
    if (!['entities', 'classifications', 'relations', 'structures'].includes(key))
      issues.push({
        field: `${path}.${key}`,
        message: 'unknown key; expected entities, classifications, relations or structures',
      });
  }

  if (s.entities !== undefined) {
    if (Array.isArray(s.entities)) {
      s.entities.forEach((e, i) =>
        nonEmptyString(e)
          ? out.entities.push(e.trim())
          : issues.push({ field: `${path}.entities[${i}]`, message: 'must be a non-empty string' }),
      );
    } else if (isRecord(s.entities)) {
      for (const [label, description] of Object.entries(s.entities)) {
        if (!nonEmptyString(label)) issues.push({ field: `${path}.entities`, message: 'labels must be non-empty' });
        else {
          out.entities.push(label.trim());
          if (typeof description === 'string') out.entityDescriptions[label.trim()] = description;
        }
      }
    } else
      issues.push({
        field: `${path}.entities`,
        message: 'must be a list of entity types or a {type: description} object',
      });
  }

  if (s.classifications !== undefined) {
    const tasks: [string, unknown][] = Array.isArray(s.classifications)
      ? s.classifications.map((c, i) => [`${path}.classifications[${i}]`, c])
      : isRecord(s.classifications)
        ? Object.entries(s.classifications).map(([task, v]) => [
            `${path}.classifications.${task}`,
            Array.isArray(v) ? { task, labels: v } : isRecord(v) ? { task, ...v } : v,
          ])
        : [[`${path}.classifications`, undefined]];
    for (const [field, c] of tasks) {
      if (!isRecord(c)) {
        issues.push({ field, message: 'must be {task, labels, multi_label?} (or a list of labels in the dict form)' });
        continue;
      }
      if (!nonEmptyString(c.task)) issues.push({ field: `${field}.task`, message: 'must be a non-empty string' });
      if (!Array.isArray(c.labels) || c.labels.length < 2 || !c.labels.every(nonEmptyString)) {
        issues.push({ field: `${field}.labels`, message: 'must list at least two non-empty labels' });
        continue;
      }
      if (c.multi_label !== undefined && typeof c.multi_label !== 'boolean')
        issues.push({ field: `${field}.multi_label`, message: 'must be a boolean' });
      if (nonEmptyString(c.task))
        out.classifications.push({
          task: c.task.trim(),
          labels: (c.labels as string[]).map((l) => l.trim()),
          multi_label: c.multi_label === true,
        });
    }
  }

  if (s.relations !== undefined) {
    const names = Array.isArray(s.relations) ? s.relations : isRecord(s.relations) ? Object.keys(s.relations) : null;
    if (!names)
      issues.push({
        field: `${path}.relations`,
        message: 'must be a list of relation names or a {name: description} object',
      });
    else
      names.forEach((r, i) =>
        nonEmptyString(r)
          ? out.relations.push(r.trim())
          : issues.push({ field: `${path}.relations[${i}]`, message: 'must be a non-empty string' }),
      );
  }

  if (s.structures !== undefined) {
    if (!isRecord(s.structures))
      issues.push({ field: `${path}.structures`, message: 'must be {structure: {field: spec}}' });
    else
      for (const [name, fields] of Object.entries(s.structures)) {
        const parsed = parseStructure(fields, `${path}.structures.${name}`, issues);
        if (parsed.length) out.structures.push({ name, fields: parsed });
      }
  }

  if (
    !issues.length &&
    !out.entities.length &&
    !out.classifications.length &&
    !out.relations.length &&
    !out.structures.length
  ) {
    issues.push({
      field: path,
      message: 'is empty: give at least one of entities, classifications, relations or structures',
    });
  }
  if (issues.length) throw new SchemaError(issues);
  return out;
}

function parseStructure(fields: unknown, field: string, issues: SchemaIssue[]): StructureField[] {
  const entries: [string, unknown][] = Array.isArray(fields)
    ? fields.map((f) =>
        typeof f === 'string' ? [f.split('::')[0] ?? f, f] : [String((f as { name?: unknown })?.name ?? ''), f],
      )
    : isRecord(fields)
      ? Object.entries(fields)
      : [];
  if (!entries.length) {
    issues.push({ field, message: 'must name at least one field' });
    return [];
  }
  const out: StructureField[] = [];
  for (const [name, spec] of entries) {
    if (!nonEmptyString(name)) {
      issues.push({ field, message: 'field names must be non-empty' });
      continue;
    }
    if (typeof spec === 'string') {
      // "str", "list", or GLiNER2's "name::type::description" / "name::[a|b]::str".
      const parts = spec.split('::');
      const typePart = parts.find((p) => p === 'str' || p === 'list') ?? (spec === 'list' ? 'list' : 'str');
      const choicePart = parts.find((p) => /^\[.*\]$/.test(p));
      out.push({
        name,
        type: typePart as 'str' | 'list',
        choices: choicePart
          ? choicePart
              .slice(1, -1)
              .split('|')
              .map((c) => c.trim())
              .filter(Boolean)
          : [],
        description: parts
          .slice(1)
          .filter((p) => p !== 'str' && p !== 'list' && !/^\[.*\]$/.test(p))
          .join(' '),
      });
    } else if (isRecord(spec)) {
      const type = spec.type ?? 'str';
      if (type !== 'str' && type !== 'list')
        issues.push({ field: `${field}.${name}.type`, message: "must be 'str' or 'list'" });
      const choices = spec.choices ?? [];
      if (!Array.isArray(choices) || !choices.every(nonEmptyString))
        issues.push({ field: `${field}.${name}.choices`, message: 'must be a list of strings' });
      out.push({
        name,
        type: type === 'list' ? 'list' : 'str',
        choices: Array.isArray(choices) ? (choices as string[]) : [],
        description: typeof spec.description === 'string' ? spec.description : '',
      });
    } else issues.push({ field: `${field}.${name}`, message: "must be 'str', 'list' or {type, choices, description}" });
  }
  return out;
}
