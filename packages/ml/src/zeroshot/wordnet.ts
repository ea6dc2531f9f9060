import { loadWordNet, type WordNetNouns } from '../assets/load';
import { tokenize, type Token } from '../text/tokenize';

/** One gazetteer phrase: how it was reached from the label's senses. */
export interface GazetteerEntry {
  /** The lemma as WordNet writes it, `_` turned into spaces. */
  phrase: string;
  /** Capitalised in WordNet (a name): matched case-sensitively. */
  proper: boolean;
  /** Reached through an instance link (`@i`): a named city, person, river … */
  instance: boolean;
  /** Hyponym links between the label's sense and the phrase's synset (1 = direct). */
  depth: number;
  /** Position of that synset among the phrase's own noun senses (0 = its most frequent meaning). */
  rank: number;
}

/** A label's WordNet gazetteer: phrases keyed by their tokens joined with a space. */
export interface Gazetteer {
  /** The synsets the closure started from (empty when WordNet does not know the label). */
  senses: number[];
  /** Much of the closure is names (people, places, organisations): common nouns are then not entities of the label. */
  namedEntityType: boolean;
  /** Many names are linked as instances (cities, people): capitalised non-instances are then kinds ("American", "Democrat"), not names. */
  instanceType: boolean;
  /** Names, keyed case-sensitively. */
  proper: Map<string, GazetteerEntry>;
  /** Names keyed in lower case, for capitalised text written in another case ("Fortran" for FORTRAN, "PARIS"). */
  properFolded: Map<string, GazetteerEntry>;
  /** Common nouns, keyed in lower case. */
  common: Map<string, GazetteerEntry>;
  /** Longest phrase, in tokens. */
  maxTokens: number;
}

/** Closures larger than this are cut (breadth-first, so the nearest hyponyms are kept). */
const MAX_SYNSETS = 20_000;
/** Phrases longer than this are not matched (they are rare and cost a lookup at every token). */
const MAX_TOKENS = 6;
/** A label whose closure has at least this share of capitalised synsets names a kind of named entity. */
const NAMED_SHARE = 0.3;
/** … and at least this share of instances, a kind whose names WordNet lists as instances. */
const INSTANCE_SHARE = 0.1;
/** Lexicographer files of concrete things (animal, artifact, food, group, location, object, person, plant, substance). */
const CONCRETE = new Set([5, 6, 13, 14, 15, 17, 18, 20, 27]);
const GAZETTEER_CACHE = 64;
/** Words inside names ("University of Texas", "Klein & Gibson"). */
const NAME_CONNECTORS = new Set(['of', 'de', 'del', 'la', 'von', 'van', '&']);

const isProper = (lemma: string) => /^\p{Lu}/u.test(lemma);
const phraseKey = (tokens: readonly Token[]) => tokens.map((t) => t.text).join(' ');

/** WordNet's noun detachment rules (morphy, plus -ves), for plurals in text and in label names. */
function singulars(word: string): string[] {
  const out: string[] = [];
  for (const [suffix, replacement] of [
    ['ies', 'y'],
    ['ses', 's'],
    ['xes', 'x'],
    ['zes', 'z'],
    ['ches', 'ch'],
    ['shes', 'sh'],
    ['men', 'man'],
    ['ves', 'f'],
    ['ves', 'fe'],
    ['s', ''],
  ] as const) {
    if (word.length > suffix.length + 1 && word.endsWith(suffix)) out.push(word.slice(0, -suffix.length) + replacement);
  }
  return out;
}

/**
 * The label's main noun senses: the first sense, plus the second and third
 * when they are in the first one's lexicographer file or name concrete things
 * (so "country" keeps the nation and the territory, "person" drops the body
 * and the grammatical person). Tries the label as a multiword lemma, then its
 * singular, then its head (last) word.
 */
export function labelSenses(label: string, wn: WordNetNouns = loadWordNet()): number[] {
  const lemma = label.trim().toLowerCase().replace(/\s+/g, '_');
  const head = lemma.split(/[_-]/).pop() ?? lemma;
  for (const candidate of [lemma, ...singulars(lemma), head, ...singulars(head)]) {
    const senses = wn.senses(candidate);
    if (!senses.length) continue;
    const first = senses[0]!;
    return [
      first,
      ...senses.slice(1, 3).filter((s) => wn.lexfile(s) === wn.lexfile(first) || CONCRETE.has(wn.lexfile(s))),
    ];
  }
  return [];
}

/** Builds the gazetteer of a label: lemmas of the hyponym and instance-hyponym closure of its main senses. */
export function buildGazetteer(label: string): Gazetteer {
  const wn = loadWordNet();
  const senses = labelSenses(label, wn);
  const depth = new Map(senses.map((s) => [s, 0]));
  const instance = new Set<number>();
  const queue = [...senses];
  for (let q = 0; q < queue.length && depth.size < MAX_SYNSETS; q++) {
    const s = queue[q]!;
    const reach = (next: number, viaInstance: boolean) => {
      if (depth.has(next) || depth.size >= MAX_SYNSETS) return;
      depth.set(next, depth.get(s)! + 1);
      if (viaInstance) instance.add(next);
      queue.push(next);
    };
    for (const h of wn.hyponyms(s)) reach(h, false);
    for (const h of wn.instances(s)) reach(h, true);
  }

  let properSynsets = 0;
  for (const s of depth.keys()) if (isProper(wn.lemmas(s)[0]!)) properSynsets++;
  const share = (n: number) => (depth.size ? n / depth.size : 0);
  const namedEntityType = share(properSynsets) >= NAMED_SHARE;
  const gazetteer: Gazetteer = {
    senses,
    namedEntityType,
    instanceType: namedEntityType && share(instance.size) >= INSTANCE_SHARE,
    proper: new Map(),
    properFolded: new Map(),
    common: new Map(),
    maxTokens: 0,
  };
  for (const [s, d] of depth) {
    for (const lemma of wn.lemmas(s)) {
      const phrase = lemma.replace(/_/g, ' ');
      const tokens = tokenize(phrase);
      // One- and two-letter lemmas ("I" for iodine, "in" for inch, "US") are too ambiguous to match.
      if (tokens.length === 0 || tokens.length > MAX_TOKENS || (tokens.length === 1 && phrase.length < 3)) continue;
      const proper = isProper(lemma);
      const rank = wn.senses(lemma.toLowerCase()).findIndex((x) => depth.has(x));
      const entry: GazetteerEntry = {
        phrase,
        proper,
        instance: instance.has(s),
        depth: Math.max(1, d),
        rank: Math.max(0, rank),
      };
      const table = proper ? gazetteer.proper : gazetteer.common;
      const key = proper ? phraseKey(tokens) : phraseKey(tokens).toLowerCase();
      const keep = (m: Map<string, GazetteerEntry>, k: string) => {
        const known = m.get(k);
        if (!known || entry.depth < known.depth) m.set(k, entry);
      };
      keep(table, key);
      if (proper) keep(gazetteer.properFolded, key.toLowerCase());
      gazetteer.maxTokens = Math.max(gazetteer.maxTokens, tokens.length);
    }
  }
  return gazetteer;
}

const cache = new Map<string, Gazetteer>();

/** The label's gazetteer, built on first use and kept in a small LRU cache (labels arrive per request). */
export function wordnetGazetteer(label: string): Gazetteer {
  const key = label.trim().toLowerCase();
  let g = cache.get(key);
  if (g) cache.delete(key);
  else g = buildGazetteer(key);
  cache.set(key, g);
  if (cache.size > GAZETTEER_CACHE) cache.delete(cache.keys().next().value!);
  return g;
}

/**
 * How much a gazetteer hit is worth. Names from an instance link are the
 * strongest evidence; a common noun counts only for labels that are not
 * named-entity types (an "animal" is any dog, a "person" is a name, not "the
 * singer"), and for kinds whose names are instances a capitalised kind
 * ("American" under person) is not a name either. Deeper hyponyms and
 * secondary senses of the phrase count less.
 */
function confidence(g: Gazetteer, e: GazetteerEntry): number {
  let c: number;
  if (e.proper) c = e.instance ? 0.85 : g.instanceType ? 0.45 : 0.8;
  else c = g.namedEntityType ? 0.35 : 0.75;
  c -= Math.min(0.15, 0.02 * (e.depth - 1));
  c -= e.rank === 0 ? 0 : e.rank === 1 ? 0.1 : 0.25;
  return c;
}

/** A gazetteer hit in the text, with character offsets. */
export interface GazetteerSpan {
  text: string;
  start: number;
  end: number;
  confidence: number;
}

/**
 * Longest-first, token-aligned matches of the label's WordNet gazetteer.
 * Names match case-sensitively (or, for less, capitalised text in another
 * case), common nouns in any case and in the plural.
 * A name inside a longer capitalised run ("Paris" in "Paris Saint-Germain")
 * or a capitalised common noun mid-sentence ("Apple") is most likely part of
 * another name and loses confidence.
 */
export function gazetteerSpans(
  text: string,
  label: string,
  tokens: readonly Token[] = tokenize(text),
): GazetteerSpan[] {
  const g = wordnetGazetteer(label);
  if (!g.maxTokens) return [];
  const wn = loadWordNet();
  const capital = (i: number) => i >= 0 && i < tokens.length && /^\p{Lu}/u.test(tokens[i]!.text);
  const sentenceStart = (i: number) => i === 0 || /^[.!?:;"“]$/.test(tokens[i - 1]!.text);
  const spans: GazetteerSpan[] = [];
  for (let i = 0; i < tokens.length;) {
    let hit: [number, GazetteerEntry, boolean] | undefined;
    for (let n = Math.min(g.maxTokens, tokens.length - i); n >= 1 && !hit; n--) {
      const window = tokens.slice(i, i + n);
      const key = phraseKey(window);
      const lower = key.toLowerCase();
      const proper = g.proper.get(key);
      const folded = capital(i) ? g.properFolded.get(lower) : undefined;
      const common =
        g.common.get(lower) ??
        singulars(lower)
          .map((k) => g.common.get(k))
          .find(Boolean);
      const entry = proper ?? common ?? folded;
      if (entry) hit = [n, entry, !proper && !common];
    }
    if (!hit) {
      i++;
      continue;
    }
    const [n, entry, caseFolded] = hit;
    let c = confidence(g, entry) - (caseFolded ? 0.1 : 0);
    const first = i;
    const last = i + n - 1;
    const inLongerName =
      capital(last + 1) ||
      (capital(first - 1) && !sentenceStart(first - 1)) ||
      (NAME_CONNECTORS.has(tokens[first - 1]?.text ?? '') && capital(first - 2));
    if (entry.proper && inLongerName) c -= 0.35;
    // A name that is also a common noun ("Bull", "Mobile"), above all as a sentence's first word ("Reading the news").
    if (entry.proper && n === 1) {
      const lower = tokens[first]!.text.toLowerCase();
      if (wn.senses(lower).some((s) => wn.lemmas(s).includes(lower))) c -= sentenceStart(first) ? 0.3 : 0.15;
    }
    if (!entry.proper && capital(first) && !sentenceStart(first)) c -= 0.25;
    const start = tokens[first]!.start;
    const end = tokens[last]!.end;
    spans.push({ text: text.slice(start, end), start, end, confidence: Math.max(0, Math.min(1, c)) });
    i += n;
  }
  return spans;
}
