import nlp from 'compromise';
import type { EncoderExample } from './train';
import { Rng } from '../nn';
import { wordnetGazetteer } from '../zeroshot/wordnet';
import { zeroShotSpans } from '../zeroshot/entities';
import type { TaggedSentence } from './brown';

/**
 * Pretraining data for the encoder base, built only from shipped assets:
 * names, places, organisations and nationalities from compromise's lexicon
 * and WordNet's instance hyponyms, placed in sentence templates. Each example
 * asks for a random subset of concepts under a random synonym of their name,
 * so the head learns to follow the label names it is given (mentions of
 * concepts not asked for stay unlabelled).
 */
interface Concept {
  key: string;
  names: string[];
  values: string[];
}

const TEMPLATES = [
  '{person} was born in {city} , {country} , on {date} .',
  '{person} joined {organization} in {year} after leaving {organization} .',
  'In {year} , {person} moved to {city} to work for {organization} .',
  'The {nationality} government signed the agreement in {city} on {date} .',
  '{organization} opened a new office in {city} , where {person} leads the team .',
  'According to {person} , {organization} paid {money} for the site near {city} .',
  '{city} is the largest city in {country} and home to {organization} .',
  'She met {person} and {person} at a conference in {country} .',
  'The {nationality} writer {person} won the award in {year} .',
  '{person} , a former member of {organization} , died in {city} in {year} .',
  'He played for {organization} before signing with {organization} in {date} .',
  'Troops from {country} crossed into {country} in {year} .',
  'The company , {organization} , reported revenue of {money} in {year} .',
  '{person} visited {city} and {city} during the {nationality} tour .',
  'Born in {country} , {person} studied in {city} .',
  'The museum in {city} was founded by {person} in {year} .',
  '{person} said on {date} that {organization} would leave {country} .',
  'Many {nationality} people live in {city} .',
  'It was released by {organization} on {date} in {country} .',
  'The match between {organization} and {organization} took place in {city} .',
  '{person} ( born {date} ) is a {nationality} politician .',
  'Our meeting with {person} from {organization} is on {date} .',
  'Please send {money} to {person} before {date} .',
  '{person} became mayor of {city} in {year} .',
  'The river flows from {country} through {city} .',
  'The station is operated by {organization} and serves {city} .',
  'The team finished the season with a win over {organization} .',
  'The weather in {city} was cold , and nobody from {organization} came .',
  'He is the son of {person} and the brother of {person} .',
  'The report was written by {person} of {organization} .',
];

const SYNONYMS: Record<string, string[]> = {
  person: ['person', 'name', 'people', 'individual', 'human'],
  city: ['city', 'town'],
  country: ['country', 'nation', 'state'],
  location: ['location', 'place', 'locality'],
  organization: ['organization', 'organisation', 'company', 'institution'],
  nationality: ['nationality', 'misc', 'demonym'],
  date: ['date', 'day'],
  money: ['money', 'amount', 'price'],
};

/**
 * The label names the base was pretrained to follow for named entities (people, places, organisations,
 * nationalities, under each of their synonyms): the zero-shot base answers these from the encoder.
 */
export const PRETRAINED_NAME_LABELS: ReadonlySet<string> = new Set(
  ['person', 'city', 'country', 'location', 'organization', 'nationality'].flatMap((k) => SYNONYMS[k]!),
);

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

function lexiconWords(tags: string[]): string[] {
  const model = (nlp as unknown as { model(): { one: { lexicon: Record<string, string | string[]> } } }).model();
  const out: string[] = [];
  for (const [word, t] of Object.entries(model.one.lexicon)) {
    const list = Array.isArray(t) ? t : [t];
    if (list.some((x) => tags.includes(x))) out.push(word.replace(/(^|[\s-])\p{Ll}/gu, (m) => m.toUpperCase()));
  }
  return out.sort();
}

function wordnetNames(label: string, max: number): string[] {
  const g = wordnetGazetteer(label);
  return [...g.proper.values()]
    .filter((e) => e.instance)
    .map((e) => e.phrase)
    .filter((p) => /^[\p{L} .'-]+$/u.test(p))
    .sort()
    .slice(0, max);
}

function concepts(): Record<string, Concept> {
  const first = lexiconWords(['FirstName', 'MaleName', 'FemaleName']);
  const last = lexiconWords(['LastName']);
  const people = [...wordnetNames('person', 4000)];
  const cities = [...new Set([...lexiconWords(['City']), ...wordnetNames('city', 1500)])].sort();
  const countries = [...new Set([...lexiconWords(['Country']), ...wordnetNames('country', 400)])].sort();
  const orgs = [
    ...new Set([...lexiconWords(['Organization', 'Company', 'SportsTeam']), ...wordnetNames('organization', 1500)]),
  ].sort();
  const nationalities = lexiconWords(['Demonym']);
  return {
    person: {
      key: 'person',
      names: SYNONYMS.person!,
      values: [...people, ...first.slice(0, 1500).map((f, i) => `${f} ${last[(i * 7) % last.length]}`)],
    },
    city: { key: 'city', names: SYNONYMS.city!, values: cities },
    country: { key: 'country', names: SYNONYMS.country!, values: countries },
    organization: { key: 'organization', names: SYNONYMS.organization!, values: orgs },
    nationality: { key: 'nationality', names: SYNONYMS.nationality!, values: nationalities },
  };
}

/** Seeded pretraining examples; the same count and seed give the same rows. */
export function pretrainingExamples(count: number, seed: number): EncoderExample[] {
  const rng = new Rng(seed);
  const c = concepts();
  const pick = <T>(xs: readonly T[]): T => xs[rng.int(xs.length)]!;
  const value = (slot: string): { text: string; concept: string | null } => {
    if (slot === 'date') return { text: `${1 + rng.int(28)} ${pick(MONTHS)} ${1900 + rng.int(120)}`, concept: 'date' };
    if (slot === 'year') return { text: String(1850 + rng.int(170)), concept: null };
    if (slot === 'money') return { text: `$${(1 + rng.int(999)).toString()} million`, concept: 'money' };
    return { text: pick(c[slot]!.values), concept: slot };
  };
  const out: EncoderExample[] = [];
  for (let i = 0; i < count; i++) {
    // Which concepts this example asks for, and the label name each goes by.
    const asked = new Map<string, string>();
    for (const k of ['person', 'city', 'country', 'organization', 'nationality', 'date', 'money'])
      if (rng.next() < 0.7) asked.set(k, pick(SYNONYMS[k]!));
    // "location" covers cities and countries when asked for instead of them.
    const asLocation = rng.next() < 0.5 ? pick(SYNONYMS.location!) : null;
    if (asLocation) {
      asked.delete('city');
      asked.delete('country');
    }
    let text = '';
    const entities: NonNullable<EncoderExample['entities']> = [];
    for (const part of pick(TEMPLATES).split(/(\{\w+\})/)) {
      const slot = /^\{(\w+)\}$/.exec(part)?.[1];
      if (!slot) {
        text += part;
        continue;
      }
      const v = value(slot);
      const start = text.length;
      text += v.text;
      const concept = v.concept;
      const label =
        concept && asLocation && (concept === 'city' || concept === 'country')
          ? asLocation
          : concept
            ? asked.get(concept)
            : undefined;
      if (label) entities.push({ start, end: text.length, label });
    }
    out.push({ text, entities, labels: [...new Set([...asked.values(), ...(asLocation ? [asLocation] : [])])] });
  }
  return out;
}

const NAMED = ['person', 'location', 'organization'] as const;
/** Titles Brown tags as proper nouns but entity annotations leave out ("Mr. Parichy" → "Parichy"). */
const TITLE =
  /^(Mr|Mrs|Ms|Miss|Mmes|Dr|Drs|Gov|Gen|Sen|Rep|Rev|Col|Capt|Lt|Sgt|Prof|St|Sir|Mt|Ft|Judge|President|King|Queen|Pope|Lord|Lady)\.?$/;

/** Maximal runs of proper nouns (`np…`) and title-case words (`…-tl`), as token index ranges [start, end). */
function nameRuns(s: TaggedSentence): [number, number][] {
  const inName = (k: number) => /^np/.test(s.tags[k]!) || (/-tl/.test(s.tags[k]!) && /^\p{Lu}/u.test(s.words[k]!));
  const runs: [number, number][] = [];
  for (let k = 0; k < s.words.length; k++) {
    if (!inName(k)) continue;
    let e = k;
    while (e < s.words.length && inName(e)) e++;
    let b = k;
    while (b < e - 1 && TITLE.test(s.words[b]!)) b++;
    if (!TITLE.test(s.words[b]!)) runs.push([b, e]);
    k = e - 1;
  }
  return runs;
}

/**
 * Distantly supervised pretraining rows from real English (the Brown corpus's
 * sentences): silver person/location/organization spans from the zero-shot
 * base's gazetteers and patterns (compromise's lexicon, WordNet), kept only
 * where the corpus's hand-assigned tags agree that the span is exactly a
 * proper-noun run. A sentence is used only when every proper-noun run got a
 * type, so no name is taught as "not an entity"; about one in ten sentences
 * without names is kept as well. Each row asks for a random subset of the
 * types under random synonyms, like the template rows. Seeded; the same
 * sentences, count and seed give the same rows.
 */
export function silverExamples(sentences: readonly TaggedSentence[], count: number, seed: number): EncoderExample[] {
  const rng = new Rng(seed);
  const order = sentences.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const pick = <T>(xs: readonly T[]): T => xs[rng.int(xs.length)]!;
  const out: EncoderExample[] = [];
  for (const i of order) {
    if (out.length >= count) break;
    const s = sentences[i]!;
    if (s.words.length < 4 || s.words.length > 60) continue;
    const starts: number[] = [];
    let text = '';
    for (const w of s.words) {
      if (text) text += ' ';
      starts.push(text.length);
      text += w;
    }
    const runs = nameRuns(s);
    if (!runs.length) {
      if (rng.next() < 0.1)
        out.push({ text, entities: [], labels: NAMED.filter(() => rng.next() < 0.7).map((k) => pick(SYNONYMS[k]!)) });
      continue;
    }
    const spans = zeroShotSpans(text, [...NAMED], 0.7);
    const typed: { start: number; end: number; kind: string }[] = [];
    for (const [b, e] of runs) {
      const start = starts[b]!;
      const end = starts[e - 1]! + s.words[e - 1]!.replace(/'s?$/, '').length;
      const hit = spans.find(
        (z) => z.start === start && z.end >= end && z.end <= starts[e - 1]! + s.words[e - 1]!.length,
      );
      if (!hit) break;
      typed.push({ start, end, kind: hit.label });
    }
    if (typed.length < runs.length) continue;
    const asked = new Map<string, string>();
    for (const k of NAMED) if (rng.next() < 0.7) asked.set(k, pick(SYNONYMS[k]!));
    if (!asked.size) asked.set('person', pick(SYNONYMS.person!));
    out.push({
      text,
      entities: typed
        .filter((t) => asked.has(t.kind))
        .map((t) => ({ start: t.start, end: t.end, label: asked.get(t.kind)! })),
      labels: [...asked.values()],
    });
  }
  return out;
}
