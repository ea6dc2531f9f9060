import { loadGlove, type Embeddings } from '../assets/load';
import { seededRandom } from '../classify/ngram-classifier';
import type { Example } from '../data';

/**
 * Offline synthetic data: templates filled from lexicons. Entity values come
 * from built-in lists (people, places, organisations, dates, amounts, emails)
 * when the type name means one of them, else from the type name's nearest
 * GloVe neighbours; every span's offsets are exact by construction. Texts for
 * classification labels are built from the label's words and their
 * neighbours. The same request and seed give the same rows.
 */
export interface GenerateRequest {
  entityTypes: string[];
  classifications: { task: string; labels: string[]; multi_label: boolean }[];
  domain: string;
  count: number;
  seed: number;
}

const FIRST = [
  'Ada',
  'Omar',
  'Mei',
  'Lucas',
  'Priya',
  'Jonas',
  'Sofia',
  'Kwame',
  'Elena',
  'Hiro',
  'Amara',
  'Diego',
  'Freya',
  'Tomas',
  'Leila',
  'Noah',
  'Yara',
  'Marek',
  'Ines',
  'Ravi',
  'Clara',
  'Felix',
  'Nadia',
  'Samuel',
];
const LAST = [
  'Lovelace',
  'Haddad',
  'Chen',
  'Moreau',
  'Sharma',
  'Berg',
  'Rossi',
  'Mensah',
  'Petrova',
  'Tanaka',
  'Okafor',
  'Alvarez',
  'Larsen',
  'Novak',
  'Karimi',
  'Walker',
  'Silva',
  'Kowalski',
  'Duarte',
  'Iyer',
  'Schmidt',
  'Dubois',
  'Ivanova',
  'Osei',
];
const PLACES = [
  'Lisbon',
  'Nairobi',
  'Toronto',
  'Osaka',
  'Berlin',
  'Lima',
  'Melbourne',
  'Oslo',
  'Cairo',
  'Seoul',
  'Austin',
  'Dublin',
  'Mumbai',
  'Prague',
  'Bogotá',
  'Helsinki',
  'Accra',
  'Vancouver',
  'Porto',
  'Kraków',
];
const ORG_HEAD = [
  'Northwind',
  'Bluefield',
  'Ironbridge',
  'Sunvale',
  'Redwood',
  'Brightpath',
  'Silverline',
  'Oakhurst',
  'Clearwater',
  'Stonegate',
  'Westbrook',
  'Granite',
];
const ORG_TAIL = ['Labs', 'Group', 'Systems', 'Bank', 'Logistics', 'Health', 'Partners', 'Energy', 'Foods', 'Media'];
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

type Pick = (r: () => number) => string;
const one = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const BUILTIN: { words: string[]; pick: Pick }[] = [
  {
    words: ['person', 'name', 'people', 'customer', 'patient', 'employee', 'author', 'speaker'],
    pick: (r) => `${one(r, FIRST)} ${one(r, LAST)}`,
  },
  { words: ['location', 'place', 'city', 'country', 'address', 'region', 'destination'], pick: (r) => one(r, PLACES) },
  {
    words: ['organization', 'organisation', 'company', 'org', 'employer', 'bank', 'vendor', 'brand'],
    pick: (r) => `${one(r, ORG_HEAD)} ${one(r, ORG_TAIL)}`,
  },
  {
    words: ['date', 'day', 'deadline', 'when'],
    pick: (r) => `${1 + Math.floor(r() * 28)} ${one(r, MONTHS)} ${2019 + Math.floor(r() * 8)}`,
  },
  {
    words: ['money', 'amount', 'price', 'cost', 'salary', 'fee', 'total'],
    pick: (r) => `$${(10 + Math.floor(r() * 9990)).toLocaleString('en-US')}`,
  },
  { words: ['email', 'mail'], pick: (r) => `${one(r, FIRST).toLowerCase()}.${one(r, LAST).toLowerCase()}@example.com` },
];

const STOP = new Set(
  'the of and a to in is was for on that with as by it at from his her be this an are or which not must would could should will can may might also just only even been have has had did does any some'.split(
    ' ',
  ),
);

/** Nearest vocabulary words to `word` (the GloVe asset lists words by frequency). */
function neighbours(glove: Embeddings, word: string, n: number): string[] {
  const target = glove.vector(word.toLowerCase());
  if (!target) return [];
  const vocab = glove.words ?? [];
  const scored: [string, number][] = [];
  for (const w of vocab.slice(0, 20_000)) {
    if (w === word.toLowerCase() || STOP.has(w) || !/^[a-z][a-z-]{2,}$/.test(w)) continue;
    const s = glove.similarity(word, w);
    if (s > 0.45) scored.push([w, s]);
  }
  return scored
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([w]) => w);
}

function lexiconFor(glove: Embeddings, type: string): Pick {
  const parts = type
    .toLowerCase()
    .split(/[\s_-]+/)
    .filter(Boolean);
  let best: { pick: Pick; score: number } | null = null;
  for (const b of BUILTIN) {
    for (const p of parts) {
      for (const w of b.words) {
        const s = p === w ? 1 : glove.similarity(p, w);
        if (s > (best?.score ?? 0.6)) best = { pick: b.pick, score: s };
      }
    }
  }
  if (best) return best.pick;
  const values = parts.flatMap((p) => neighbours(glove, p, 30));
  const pool = values.length ? values : parts.map((p) => `${p} item`);
  return (r) => one(r, pool);
}

const ENTITY_TEMPLATES = [
  [
    '{0} came up in the {d} review.',
    'We spent the morning discussing {0}.',
    'Nobody expected {0} to matter this much.',
    'Can you look into {0} before Friday?',
    'The {d} notes mention {0} twice.',
    'According to the log, {0} was updated.',
  ],
  [
    '{0} and {1} appear in the same {d} record.',
    'After the call about {0}, we checked {1}.',
    '{0} is linked to {1}, the {d} summary says.',
    'Please compare {0} with {1} in the {d} file.',
  ],
  ['{0} told us that {1} had already contacted {2}.', 'In the {d} meeting, {0}, {1} and {2} were all on the agenda.'],
];
const EMPTY_TEMPLATES = [
  'Nothing notable happened in the {d} meeting.',
  'The {d} update was short and routine.',
  'We will continue tomorrow.',
];
const CLASS_TEMPLATES = [
  'I have a question about {l}.',
  'This is clearly about {l}.',
  'Please help me with {l}, it is urgent.',
  'My message concerns {l} and the {d} team.',
  'Mostly {n} and {l} here.',
  'Another note on {l}: {n}, {n}.',
  'Regarding {l} — {n} again.',
];

/** Rows in the canonical JSONL format (entities with char offsets, or classifications). */
export function* generateExamples(req: GenerateRequest): Generator<Example> {
  const glove = loadGlove();
  const random = seededRandom(req.seed >>> 0);
  const domainWords = req.domain
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => w.length > 2 && !STOP.has(w));
  const domain = () => (domainWords.length ? one(random, domainWords) : 'team');
  const lexicons = new Map(req.entityTypes.map((t) => [t, lexiconFor(glove, t)]));
  const labelWords = new Map(req.classifications.flatMap((c) => c.labels).map((l) => [l, l.replace(/[_-]+/g, ' ')]));
  const labelNeighbours = new Map(
    [...labelWords].map(([l, words]) => [l, words.split(' ').flatMap((w) => neighbours(glove, w, 8))]),
  );

  for (let i = 0; i < req.count; i++) {
    if (req.entityTypes.length) {
      if (random() < 0.08) {
        yield { text: one(random, EMPTY_TEMPLATES).replace('{d}', domain()), entities: [] };
        continue;
      }
      const slots = Math.min(req.entityTypes.length + 1, 1 + Math.floor(random() * 3));
      const template = one(random, ENTITY_TEMPLATES[Math.min(slots, 3) - 1]!);
      let text = '';
      const entities: NonNullable<Example['entities']> = [];
      for (const piece of template.split(/(\{\d\}|\{d\})/)) {
        if (piece === '{d}') text += domain();
        else if (/^\{\d\}$/.test(piece)) {
          const type = one(random, req.entityTypes);
          const value = lexicons.get(type)!(random);
          entities.push({ start: text.length, end: text.length + value.length, label: type });
          text += value;
        } else text += piece;
      }
      const row: Example = { text, entities };
      if (req.classifications.length)
        row.classifications = req.classifications.map((c) => ({ task: c.task, labels: [one(random, c.labels)] }));
      yield row;
      continue;
    }
    const task = req.classifications[i % req.classifications.length]!;
    const labels =
      task.multi_label && random() < 0.3
        ? [...new Set([one(random, task.labels), one(random, task.labels)])]
        : [one(random, task.labels)];
    const texts = labels.map((l) =>
      one(random, CLASS_TEMPLATES)
        .replace('{l}', labelWords.get(l)!)
        .replace('{d}', domain())
        .replace(/\{n\}/g, () =>
          one(random, labelNeighbours.get(l)!.length ? labelNeighbours.get(l)! : [labelWords.get(l)!]),
        ),
    );
    yield {
      text: texts.join(' '),
      classifications: [{ task: task.task, labels, ...(task.multi_label ? { multi_label: true } : {}) }],
    };
  }
}
