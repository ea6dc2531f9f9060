import { loadAfinn, loadGlove, type Embeddings } from '../assets/load';
import type { ExtractionModel, ExtractionResult, ModelManifest, PredictOptions } from '../pipeline/types';
import { normalizeSchema, type NormalizedSchema, type StructureField } from '../schema/normalize';
import { tokenize } from '../text/tokenize';
import { baseEmbeddings, baseEntities, baseEntitiesMany } from './base-entities';
import { zeroShotSpans, type ZeroShotSpan } from './entities';

/** The built-in extraction base model's id: zero-shot as is, and the base every extraction training job starts from. */
export const EXTRACT_BASE_ID = 'whetstone-extract-base';

const STOP = new Set(
  'a an the of to in on at for and or but is are was were be been it this that with as by from i you he she we they my your our their me him her us them not no so do does did have has had'.split(
    ' ',
  ),
);

/** Mean GloVe vector of the content words; null when none is known. */
function meanVector(glove: Embeddings, words: string[]): Float32Array | null {
  const acc = new Float32Array(glove.dim);
  let n = 0;
  for (const w of words) {
    if (STOP.has(w)) continue;
    const v = glove.vector(w);
    if (!v) continue;
    for (let d = 0; d < acc.length; d++) acc[d]! += v[d]!;
    n++;
  }
  if (!n) return null;
  return acc;
}

function cosine(a: Float32Array | null, b: Float32Array | null): number {
  if (!a || !b) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let d = 0; d < a.length; d++) {
    dot += a[d]! * b[d]!;
    na += a[d]! * a[d]!;
    nb += b[d]! * b[d]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

const NEGATORS = new Set(['not', 'no', 'never', "n't", 'nothing', 'hardly', 'without']);
const POSITIVE_WORDS = ['positive', 'good', 'happy', 'praise', 'satisfied', 'great'];
const NEGATIVE_WORDS = ['negative', 'bad', 'unhappy', 'complaint', 'angry', 'dissatisfied'];

/** AFINN-165 valence of a text in [-1, 1], with a negator flipping the next three words. */
export function valence(textWords: string[]): number {
  const lexicon = loadAfinn();
  let sum = 0;
  let flip = 0;
  for (const w of textWords) {
    if (NEGATORS.has(w) || w.endsWith("n't")) {
      flip = 3;
      continue;
    }
    const v = lexicon[w] ?? 0;
    sum += flip > 0 ? -v : v;
    if (flip > 0) flip--;
  }
  return Math.tanh(sum / 4);
}

/** +1 for labels that mean "positive", -1 for "negative", 0 otherwise (exact words, then GloVe). */
function polarity(labelWords: string[]): number {
  if (labelWords.some((w) => POSITIVE_WORDS.includes(w))) return 1;
  if (labelWords.some((w) => NEGATIVE_WORDS.includes(w))) return -1;
  return 0;
}

const words = (s: string) =>
  tokenize(s.toLowerCase())
    .map((t) => t.text)
    .filter((w) => /\p{L}/u.test(w));

/**
 * Scores labels against a text: cosine between the text's mean word vector and
 * each label's, plus a boost when a label word (or its stem) occurs in the
 * text. Returns softmax-normalised confidences (single-label) or independent
 * sigmoid-like ones (multi-label), both in [0, 1].
 */
export function zeroShotLabelScores(
  text: string,
  labels: string[],
  multiLabel: boolean,
): { label: string; confidence: number }[] {
  const glove = loadGlove();
  const textWords = words(text);
  const textSet = new Set(textWords);
  const stems = new Set(textWords.map((w) => w.slice(0, 5)));
  const tv = meanVector(glove, textWords);
  const tone = valence(textWords);
  const raw = labels.map((label) => {
    const lw = words(label.replace(/[_-]/g, ' '));
    // GloVe puts antonyms close together; sentiment-like labels also get the text's valence.
    let s = cosine(tv, meanVector(glove, lw)) + 0.8 * tone * polarity(lw);
    if (lw.some((w) => textSet.has(w))) s += 0.35;
    else if (lw.some((w) => w.length > 4 && stems.has(w.slice(0, 5)))) s += 0.2;
    // Each content word of the label, matched to its closest text word, averaged: catches
    // "refund" in a long text about money without favouring labels with more words.
    const content = lw.filter((w) => !STOP.has(w));
    let match = 0;
    for (const w of content) {
      let best = 0;
      for (const t of textSet) if (!STOP.has(t)) best = Math.max(best, w === t ? 1 : glove.similarity(w, t));
      match += best;
    }
    return s + (content.length ? (0.5 * match) / content.length : 0);
  });
  if (multiLabel) return labels.map((label, i) => ({ label, confidence: 1 / (1 + Math.exp(-(raw[i]! - 0.9) * 8)) }));
  const max = Math.max(...raw);
  const exp = raw.map((r) => Math.exp((r - max) * 12));
  const sum = exp.reduce((a, b) => a + b, 0);
  return labels.map((label, i) => ({ label, confidence: exp[i]! / sum }));
}

const round = (x: number) => Number(x.toFixed(4));

function spanItem(s: { text: string; confidence: number; start: number; end: number }, o: PredictOptions): unknown {
  if (!o.includeConfidence && !o.includeSpans) return s.text;
  return {
    text: s.text,
    ...(o.includeConfidence ? { confidence: round(s.confidence) } : {}),
    ...(o.includeSpans ? { start: s.start, end: s.end } : {}),
  };
}

/** Shapes classification scores as GLiNER2 does: a label (or list), or `{label, confidence}` objects. */
export function shapeClassification(
  scores: { label: string; confidence: number }[],
  multiLabel: boolean,
  threshold: number,
  o: PredictOptions,
): unknown {
  const sorted = [...scores].sort((a, b) => b.confidence - a.confidence);
  const item = (s: { label: string; confidence: number }) =>
    o.includeConfidence ? { label: s.label, confidence: round(s.confidence) } : s.label;
  if (multiLabel) return sorted.filter((s) => s.confidence >= threshold).map(item);
  return item(sorted[0]!);
}

const SENTENCE_END = /[.!?]\s/g;

/** Zero-shot relations: ordered pairs of entities in one sentence whose in-between words resemble the relation name. */
/** A relation between two spans of a text, with a confidence. */
export interface RelationMention {
  relation: string;
  head: { text: string; start: number; end: number; confidence: number };
  tail: { text: string; start: number; end: number; confidence: number };
  confidence: number;
}

/** Zero-shot relations: neighbouring entities of one sentence whose in-between words resemble the relation name. */
export function zeroShotRelations(
  text: string,
  relations: string[],
  threshold: number,
): { relation: string; head: ZeroShotSpan; tail: ZeroShotSpan; confidence: number }[] {
  const glove = loadGlove();
  const spans = zeroShotSpans(text, ['person', 'organization', 'location', 'date'], 0.4);
  const boundaries = [...text.matchAll(SENTENCE_END)].map((m) => m.index + 1);
  const sentenceOf = (pos: number) => boundaries.filter((b) => b <= pos).length;
  const out: { relation: string; head: ZeroShotSpan; tail: ZeroShotSpan; confidence: number }[] = [];
  for (const relation of relations) {
    const rw = words(relation.replace(/[_-]/g, ' '));
    for (let i = 0; i < spans.length; i++) {
      for (let j = i + 1; j < spans.length; j++) {
        const head = spans[i]!;
        const tail = spans[j]!;
        // Dates only take part in relations about time.
        if (
          (head.label === 'date' || tail.label === 'date') &&
          !rw.some((w) => ['date', 'when', 'time', 'year', 'born', 'founded', 'on'].includes(w))
        )
          continue;
        if (sentenceOf(head.start) !== sentenceOf(tail.start)) continue;
        // Only neighbours: a relation rarely skips over another entity.
        if (spans.some((o) => o.start >= head.end && o.end <= tail.start)) continue;
        const between = words(text.slice(head.end, tail.start));
        if (between.length > 12) continue;
        let best = 0;
        for (const r of rw)
          for (const b of between)
            if (!STOP.has(b) || r === b) best = Math.max(best, r === b ? 1 : glove.similarity(r, b));
        const confidence = Math.min(1, 0.25 + 0.75 * best) * Math.min(head.confidence, tail.confidence) ** 0.25;
        if (confidence >= threshold) out.push({ relation, head, tail, confidence });
      }
    }
  }
  return out;
}

/** A trained model's answer for a structure field: spans of a text field, or scores of its choices; null when not trained. */
export type StructureFieldAnswer =
  | { spans: { text: string; start: number; end: number; confidence: number }[] }
  | { scores: { label: string; confidence: number }[] }
  | null;

function structureValue(
  text: string,
  field: StructureField,
  threshold: number,
  o: PredictOptions,
  trained: StructureFieldAnswer = null,
): unknown {
  if (trained && 'scores' in trained) return shapeClassification(trained.scores, field.type === 'list', threshold, o);
  if (trained) {
    const spans = [...trained.spans].sort((a, b) => b.confidence - a.confidence);
    if (field.type === 'list') return spans.sort((a, b) => a.start - b.start).map((s) => spanItem(s, o));
    return spans[0] ? spanItem(spans[0], o) : null;
  }
  if (field.choices.length >= 2) {
    const scores = zeroShotLabelScores(text, field.choices, field.type === 'list');
    const picked = shapeClassification(scores, field.type === 'list', threshold, o);
    return picked;
  }
  const label = field.description ? `${field.name} ${field.description}` : field.name.replace(/[_-]/g, ' ');
  const spans = zeroShotSpans(text, [label], Math.min(threshold, 0.45)).sort((a, b) => b.confidence - a.confidence);
  if (field.type === 'list') return spans.map((s) => spanItem(s, o));
  return spans[0] ? spanItem(spans[0], o) : null;
}

/**
 * GLiNER2-shaped results from a normalised schema, given an entity extractor
 * (zero-shot, or a trained model that falls back to zero-shot).
 */
export function extractWith(
  text: string,
  schema: NormalizedSchema,
  options: PredictOptions,
  parts: {
    entities: (
      text: string,
      labels: string[],
      threshold: number,
    ) => { text: string; label: string; start: number; end: number; confidence: number }[];
    classify: (
      text: string,
      task: { task: string; labels: string[]; multi_label: boolean },
    ) => { label: string; confidence: number }[];
    /** Relation mentions for the requested relation names (the zero-shot base's when absent). */
    relations?: (text: string, relations: string[], threshold: number) => RelationMention[];
    /** A trained structure field's answer (the zero-shot base's when absent or null). */
    structureField?: (text: string, structure: string, field: StructureField) => StructureFieldAnswer;
  },
): ExtractionResult {
  const threshold = options.threshold && options.threshold > 0 ? options.threshold : 0.5;
  const result: ExtractionResult = {};
  if (schema.entities.length) {
    const entities: Record<string, unknown[]> = Object.fromEntries(schema.entities.map((l) => [l, []]));
    for (const s of parts.entities(text, schema.entities, threshold)) entities[s.label]?.push(spanItem(s, options));
    result.entities = entities;
  }
  for (const task of schema.classifications) {
    result[task.task] = shapeClassification(parts.classify(text, task), task.multi_label, threshold, options);
  }
  if (schema.relations.length) {
    const rel: Record<string, unknown[]> = Object.fromEntries(schema.relations.map((r) => [r, []]));
    for (const r of (parts.relations ?? zeroShotRelations)(text, schema.relations, Math.min(threshold, 0.6))) {
      rel[r.relation]!.push(
        options.includeConfidence || options.includeSpans
          ? {
              head: spanItem(r.head, options),
              tail: spanItem(r.tail, options),
              ...(options.includeConfidence ? { confidence: round(r.confidence) } : {}),
            }
          : [r.head.text, r.tail.text],
      );
    }
    result.relation_extraction = rel;
  }
  for (const structure of schema.structures) {
    const instance: Record<string, unknown> = {};
    for (const field of structure.fields)
      instance[field.name] = structureValue(
        text,
        field,
        threshold,
        options,
        parts.structureField?.(text, structure.name, field) ?? null,
      );
    result[structure.name] = Object.values(instance).some((v) => v !== null && !(Array.isArray(v) && !v.length))
      ? [instance]
      : [];
  }
  return result;
}

const MANIFEST: ModelManifest = {
  format: 'whetstone-model/1',
  baseModel: EXTRACT_BASE_ID,
  task: 'extraction',
  trainingType: 'full',
  schema: { entities: [], classifications: [], relations: [] },
  tokenizer: 'whetstone-words/1',
  hyperparameters: { nrEpochs: 0, learningRate: 0, seed: 0 },
  metrics: null,
  createdAt: '2026-11-01T00:00:00.000Z',
};

const baseParts = {
  classify: (t: string, task: { labels: string[]; multi_label: boolean }) =>
    zeroShotLabelScores(t, task.labels, task.multi_label),
};

/**
 * `whetstone-extract-base`: any label names, no training. Entities of the
 * named types the encoder base was pretrained on from its label-name head,
 * any other label from patterns, compromise, WordNet and GloVe similarity
 * (./base-entities.ts); classifications, relations and structures from GloVe
 * similarity to the label names.
 */
export const extractBaseModel: ExtractionModel = {
  manifest: MANIFEST,
  extract(text, schema, options = {}) {
    return extractWith(text, normalizeSchema(schema), options, { ...baseParts, entities: baseEntities });
  },
  // The encoder's entities for every text in batched passes; the rest is rules and lookups per text.
  extractMany(texts, schema, options = {}) {
    const norm = normalizeSchema(schema);
    const threshold = options.threshold && options.threshold > 0 ? options.threshold : 0.5;
    const found = norm.entities.length ? baseEntitiesMany(texts, norm.entities, threshold) : [];
    return texts.map((t, i) => extractWith(t, norm, options, { ...baseParts, entities: () => found[i]! }));
  },
  embed: (texts) => baseEmbeddings(texts),
};
