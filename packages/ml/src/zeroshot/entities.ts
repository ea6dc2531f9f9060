import nlp from 'compromise';
import { loadGlove, loadWordNet, type Embeddings } from '../assets/load';
import { tokenize, type Token } from '../text/tokenize';
import { gazetteerSpans, labelSenses } from './wordnet';

/** How many of the most frequent GloVe words count as common (not a name) in the rare-run rule. */
const COMMON_WORDS = 40_000;

/** Options of GLiNER2's extraction calls. */
export interface ExtractOptions {
  /** Minimum confidence to return a span (default 0.5). */
  threshold?: number;
  include_confidence?: boolean;
  include_spans?: boolean;
}

/** An entity found without training, with its offsets and an honest confidence. */
export interface ZeroShotSpan {
  text: string;
  label: string;
  start: number;
  end: number;
  confidence: number;
}

/** GLiNER2's entity result: label → texts, or objects when confidence or spans are asked for. */
export type EntityResult = {
  entities: Record<string, (string | { text: string; confidence?: number; start?: number; end?: number })[]>;
};

/**
 * A pattern serves a label whose name is close to its aliases (GloVe), and, when WordNet knows the label, has a
 * noun sense in one of the pattern's lexicographer files: GloVe puts "country" near "year", "number" and
 * "money", "company" near "cost", and "event" near "date" (0.6 and more), none of which WordNet files under
 * time (28), communication (10), artifacts (6), possession (21), attributes (7) or relations (24).
 */
const PATTERNS: { name: string; aliases: string[]; regex: RegExp; lexfiles: readonly number[] }[] = [
  { name: 'email', aliases: ['email', 'mail', 'address'], regex: /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g, lexfiles: [10] },
  { name: 'url', aliases: ['url', 'website', 'link'], regex: /\bhttps?:\/\/[^\s]+/g, lexfiles: [10] },
  { name: 'phone', aliases: ['phone', 'telephone', 'number'], regex: /\+?\d[\d\s().-]{7,}\d/g, lexfiles: [6, 10] },
  {
    name: 'money',
    aliases: ['money', 'price', 'amount', 'cost'],
    lexfiles: [21, 7],
    regex:
      /(?:[$€£]\s?\d(?:[\d,.]*\d)?(?:\s?(?:million|billion))?|\b\d(?:[\d,.]*\d)?\s?(?:dollars|euros|pounds|USD|EUR|GBP)\b)/g,
  },
  {
    name: 'percent',
    aliases: ['percent', 'percentage', 'rate'],
    regex: /\b\d+(?:\.\d+)?\s?(?:%|percent)\b/g,
    lexfiles: [24],
  },
  {
    name: 'date',
    aliases: ['date', 'day', 'year'],
    lexfiles: [28],
    regex:
      /\b(?:\d{1,2}\s(?:January|February|March|April|May|June|July|August|September|October|November|December)(?:\s\d{4})?|(?:January|February|March|April|May|June|July|August|September|October|November|December)\s\d{1,2}(?:\s?,\s?\d{4})?|\d{4}-\d{2}-\d{2}|\b(?:1[5-9]|20)\d{2}\b|\b(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b)/g,
  },
];

const KINDS = {
  person: ['person', 'people', 'name'],
  place: ['location', 'place', 'city', 'country'],
  organization: ['organization', 'company', 'team', 'group'],
} as const;
const CONNECTORS = new Set(['of', 'de', 'the', 'and', 'von', 'van', 'la', 'du', '&']);
/**
 * A remaining capitalised run takes a label only when one of its words is at least this similar to the label
 * (GloVe cosine). Below it the run matched nothing the label means ("Paris" for `author` at 0.31). Chosen on
 * wikigold dev among 0, 0.25, 0.3, 0.35 and 0.4 (F1 0.620, 0.620, 0.620, 0.621, 0.619).
 */
const RUN_MIN_SIMILARITY = 0.35;
/** WordNet's lexicographer files of each kind's nouns (noun.person; noun.location and noun.object, which holds rivers and mountains; noun.group). */
const KIND_LEXFILES: Record<keyof typeof KINDS, readonly number[]> = {
  person: [18],
  place: [15, 17],
  organization: [14],
};
const NAME_LEXFILES = new Set(Object.values(KIND_LEXFILES).flat());

/**
 * Whether names of a kind can be entities of this label. GloVe puts "date", "time" and "event" near "people"
 * and "place" (they occur together), so when WordNet knows the label, its first sense must be of the kind's
 * sort ("player" and "author" are persons, "band" and "university" groups, "city" a location, "event" and
 * "product" none of them), or, when the first sense is no kind of name, another main sense ("hospital" is first
 * a building, then an institution). Only a label WordNet does not know ("per", "org_name") is judged by the
 * similarity alone.
 */
function labelCanBe(label: string, kind: keyof typeof KINDS): boolean {
  const words = label.toLowerCase().split(/[\s_-]+/);
  if (words.some((w) => (KINDS[kind] as readonly string[]).includes(w))) return true;
  const senses = labelSenses(label);
  if (!senses.length) return true;
  const fits = (s: number) => senseOfKind(s, kind);
  return fits(senses[0]!) || (!NAME_LEXFILES.has(loadWordNet().lexfile(senses[0]!)) && senses.some(fits));
}

/** Whether WordNet files a noun sense under the kind's lexicographer files. */
const senseOfKind = (sense: number, kind: keyof typeof KINDS) =>
  KIND_LEXFILES[kind].includes(loadWordNet().lexfile(sense));

/** Whether WordNet lets a pattern serve a label (see PATTERNS): always for a label it does not know or an alias. */
function patternCanServe(pattern: (typeof PATTERNS)[number], label: string): boolean {
  const lemma = label
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  if (pattern.aliases.includes(lemma)) return true;
  const wn = loadWordNet();
  const senses = wn.senses(lemma);
  return !senses.length || senses.some((s) => pattern.lexfiles.includes(wn.lexfile(s)));
}

/**
 * A label whose first WordNet sense is of a kind's sort takes that kind's names at least at this affinity (the
 * floor names need, 0.45). GloVe alone leaves many such labels under it ("politician" 0.45 from "person",
 * "musician" 0.36, "scientist" 0.37): they co-occur with "person" less than "date" does.
 */
const WORDNET_KIND_AFFINITY = 0.5;

/** Whether WordNet files the label's first sense under the kind ("politician" under noun.person). */
function wordNetKind(label: string, kind: keyof typeof KINDS): boolean {
  const first = labelSenses(label)[0];
  return first !== undefined && senseOfKind(first, kind);
}

/** The label most similar to the kind's words among those that can name it (pattern labels excluded), with its affinity. */
function labelForKind(
  glove: Embeddings,
  labels: readonly string[],
  kind: keyof typeof KINDS,
  patternLabels: ReadonlySet<string>,
): readonly [string, number] | undefined {
  return labels
    .filter((l) => !patternLabels.has(l) && labelCanBe(l, kind))
    .map((l) => {
      const a = affinity(glove, l, KINDS[kind]);
      return [l, a < WORDNET_KIND_AFFINITY && wordNetKind(l, kind) ? WORDNET_KIND_AFFINITY : a] as const;
    })
    .sort((a, b) => b[1] - a[1])[0];
}

/** How strongly a label name means a kind (max similarity over the kind's words and the label's words). */
function affinity(glove: Embeddings, label: string, words: readonly string[]): number {
  const parts = label
    .toLowerCase()
    .split(/[\s_-]+/)
    .filter(Boolean);
  let best = 0;
  for (const p of parts) for (const w of words) best = Math.max(best, p === w ? 1 : glove.similarity(p, w));
  return best;
}

/**
 * Zero-shot entity extraction for label names given at request time: a
 * pattern library chosen by label similarity, compromise's people, places and
 * organisations mapped to labels by GloVe similarity, a WordNet gazetteer of
 * the label's hyponyms and instances (./wordnet.ts), and capitalised spans
 * scored against the label by GloVe. Confidences are similarity-based, not
 * calibrated probabilities; it misses products and new terms.
 */
export function zeroShotSpans(text: string, labels: string[], threshold = 0.5): ZeroShotSpan[] {
  const glove = loadGlove();
  let found: ZeroShotSpan[] = [];
  const add = (s: ZeroShotSpan) => {
    if (s.confidence < threshold) return;
    // A span replaces the spans it overlaps only when it is more confident than all of them.
    const clashes = found.filter((f) => s.start < f.end && s.end > f.start);
    if (clashes.some((f) => f.confidence >= s.confidence)) return;
    found = found.filter((f) => !clashes.includes(f));
    found.push(s);
  };

  const patternLabels = new Set<string>();
  for (const label of labels) {
    for (const p of PATTERNS) {
      const fit = affinity(glove, label, p.aliases);
      if (fit < 0.6 || !patternCanServe(p, label)) continue;
      patternLabels.add(label);
      for (const m of text.matchAll(p.regex))
        add({ text: m[0], label, start: m.index, end: m.index + m[0].length, confidence: Math.min(1, 0.5 + fit / 2) });
    }
  }

  const doc = nlp(text);
  type Matches = { json(o: { offset: boolean }): { text: string; offset?: { start: number; length: number } }[] };
  const kinds: [keyof typeof KINDS, Matches][] = [
    ['person', doc.people() as unknown as Matches],
    ['place', doc.places() as unknown as Matches],
    ['organization', doc.organizations() as unknown as Matches],
  ];
  // WordNet's names and nouns under each label (added below, after compromise's).
  const tokens = tokenize(text);
  const listed = new Map(
    labels.filter((l) => !patternLabels.has(l)).map((l) => [l, gazetteerSpans(text, l, tokens)] as const),
  );
  const listedUnder = (label: string, start: number, end: number) =>
    listed.get(label)?.some((g) => g.start === start && g.end === end && g.confidence >= threshold) ?? false;
  // compromise's names, by kind: they go to a label that can be that kind, and never to one that cannot. A name
  // WordNet lists under another label of the kind ("France" under `country` when `city` is nearer to places) is
  // left to that label.
  const names: { start: number; end: number; kind: keyof typeof KINDS }[] = [];
  for (const [kind, matches] of kinds) {
    const scored = labelForKind(glove, labels, kind, patternLabels);
    const others = labels.filter((l) => l !== scored?.[0] && listed.has(l) && labelCanBe(l, kind));
    for (const m of matches.json({ offset: true })) {
      if (!m.offset) continue;
      let start = m.offset.start;
      let end = start + m.offset.length;
      // compromise includes trailing punctuation and spaces in its offsets.
      while (end > start && /[\s.,;:!?]/.test(text[end - 1]!)) end--;
      while (start < end && /\s/.test(text[start]!)) start++;
      if (end > start) names.push({ start, end, kind });
      const elsewhere = !listedUnder(scored?.[0] ?? '', start, end) && others.some((l) => listedUnder(l, start, end));
      if (end > start && scored && scored[1] >= 0.45 && !elsewhere)
        add({
          text: text.slice(start, end),
          label: scored[0],
          start,
          end,
          confidence: Math.min(1, 0.35 + scored[1] * 0.6),
        });
    }
  }

  // WordNet: names and (for labels that are not named-entity types) common nouns under the label's senses.
  for (const [label, spans] of listed) for (const s of spans) add({ ...s, label });

  // Remaining capitalised runs: scored by similarity between their words and each label.
  const runs: Token[][] = [];
  let run: Token[] = [];
  const MONTHS_DAYS =
    /^(January|February|March|April|May|June|July|August|September|October|November|December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)$/;
  tokens.forEach((t, i) => {
    // A sentence's first word is capitalised anyway: it counts only when the next word is capitalised too.
    const sentenceStart = i === 0 || /^[.!?]$/.test(tokens[i - 1]!.text);
    const upper = /^\p{Lu}/u.test(t.text) && !MONTHS_DAYS.test(t.text);
    const cap = upper && (!sentenceStart || /^\p{Lu}/u.test(tokens[i + 1]?.text ?? ''));
    const bridge = run.length > 0 && CONNECTORS.has(t.text) && /^\p{Lu}/u.test(tokens[i + 1]?.text ?? '');
    if (cap || bridge) run.push(t);
    else {
      if (run.length) runs.push(run);
      run = [];
    }
  });
  if (run.length) runs.push(run);
  for (const r of runs) {
    const start = r[0]!.start;
    const end = r[r.length - 1]!.end;
    // Runs that hold a name compromise found are its, above: "Germany and Berlin" is two places, not one run.
    if (names.some((n) => n.start < end && start < n.end)) continue;
    let best: [string, number] = ['', 0];
    for (const label of labels) {
      if (patternLabels.has(label)) continue;
      const sim = Math.max(...r.map((t) => affinity(glove, label, [t.text.toLowerCase()])));
      if (sim > best[1]) best = [label, sim];
    }
    // Rare words (outside the 40k most frequent), in a capitalised run of two or three, are most often a name.
    const unknown = r.length >= 2 && r.length <= 3 && r.every((t) => glove.rank(t.text) >= COMMON_WORDS);
    const personLabel = labelForKind(glove, labels, 'person', patternLabels);
    if (unknown && personLabel && personLabel[1] >= 0.45 && best[1] < 0.45)
      best = [personLabel[0], 0.25 + personLabel[1] * 0.3];
    if (best[0] && best[1] >= RUN_MIN_SIMILARITY)
      add({ text: text.slice(start, end), label: best[0], start, end, confidence: Math.min(1, 0.3 + best[1]) });
  }
  return found.sort((a, b) => a.start - b.start);
}

/** GLiNER2's `extract_entities` result shape for the zero-shot base. */
export function zeroShotExtract(
  text: string,
  schema: { entities: string[] },
  options: ExtractOptions = {},
): EntityResult {
  const spans = zeroShotSpans(text, schema.entities, options.threshold ?? 0.5);
  const entities: EntityResult['entities'] = Object.fromEntries(schema.entities.map((l) => [l, []]));
  for (const s of spans) {
    const item =
      options.include_confidence || options.include_spans
        ? {
            text: s.text,
            ...(options.include_confidence ? { confidence: Number(s.confidence.toFixed(4)) } : {}),
            ...(options.include_spans ? { start: s.start, end: s.end } : {}),
          }
        : s.text;
    entities[s.label]!.push(item);
  }
  return { entities };
}
