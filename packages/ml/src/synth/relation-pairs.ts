/**
 * A synthetic relation-classification set with given spans (the relation head's test and bench:ml): filled
 * templates, one row per given ordered pair, training names disjoint from held-out names (held-out rows
 * measure what the head learnt from the words around the spans, not the names). Some sentences name a
 * person, a city and a company with no relation between them, and the same words link a pair one way and
 * not the other.
 */
import type { Example } from '../data';
import { Rng } from '../nn';

export type RelationNames = Record<'person' | 'organization' | 'city', string[]>;

export const TRAIN_NAMES: RelationNames = {
  person: ['Anna Berg', 'Tom Walsh', 'Maria Costa', 'John Reed', 'Lena Fischer', 'Omar Haddad', 'Sara Lind'],
  organization: ['Acme Corp', 'Globex', 'Initech', 'Umbrella Group', 'Hooli', 'Vandelay Industries'],
  city: ['Paris', 'Berlin', 'Madrid', 'Chicago', 'Toronto', 'Oslo'],
};
export const HELDOUT_NAMES: RelationNames = {
  person: ['Ivan Sokolov', 'Greta Holm', 'Luis Ortega', 'Mia Tanaka'],
  organization: ['Cyberdyne Systems', 'Soylent Corp', 'Tyrell Corporation'],
  city: ['Dublin', 'Prague', 'Boston', 'Milan'],
};
const TYPE: Record<string, keyof RelationNames> = { p: 'person', q: 'person', o: 'organization', c: 'city' };

/** Templates and the ordered pairs each gives, with their relation (the same words link a pair one way, not the other). */
const TEMPLATES: [string, [string, string, string][]][] = [
  [
    '{p} works for {o} .',
    [
      ['works_for', 'p', 'o'],
      ['no_relation', 'o', 'p'],
    ],
  ],
  [
    '{p} was born in {c} .',
    [
      ['born_in', 'p', 'c'],
      ['no_relation', 'c', 'p'],
    ],
  ],
  ['{o} is based in {c} .', [['based_in', 'o', 'c']]],
  [
    '{p} , who was born in {c} , works for {o} .',
    [
      ['born_in', 'p', 'c'],
      ['works_for', 'p', 'o'],
      ['no_relation', 'c', 'o'],
    ],
  ],
  [
    '{p} visited {c} and met people from {o} .',
    [
      ['no_relation', 'p', 'c'],
      ['no_relation', 'p', 'o'],
    ],
  ],
  ['{p} met {q} in {c} .', [['no_relation', 'p', 'q']]],
];

export const RELATIONS = ['based_in', 'born_in', 'works_for'];

/**
 * Fills a template's `{p}`, `{q}` (people, never the same one), `{o}` and `{c}` slots with names drawn by `rng`,
 * and returns the text with each slot's span (labelled person, organization or city).
 */
export function fillRelationTemplate(
  template: string,
  rng: Rng,
  names: RelationNames,
): { text: string; spans: Record<string, { start: number; end: number; label: string }> } {
  const people = rng.shuffle([...names.person]);
  const spans: Record<string, { start: number; end: number; label: string }> = {};
  let text = '';
  for (const part of template.split(/(\{[a-z]\})/)) {
    const slot = /^\{([a-z])\}$/.exec(part)?.[1];
    if (!slot) {
      text += part;
      continue;
    }
    const pool = names[TYPE[slot]!];
    const name = slot === 'p' ? people[0]! : slot === 'q' ? people[1]! : pool[rng.int(pool.length)]!;
    spans[slot] = { start: text.length, end: text.length + name.length, label: TYPE[slot]! };
    text += name;
  }
  return { text, spans };
}

/** One relation-classification row per given pair of `n` filled templates. */
export function relationPairRows(n: number, seed: number, names: RelationNames): Example[] {
  const rng = new Rng(seed);
  const out: Example[] = [];
  for (let i = 0; i < n; i++) {
    const [template, pairs] = TEMPLATES[i % TEMPLATES.length]!;
    const { text, spans } = fillRelationTemplate(template, rng, names);
    for (const [label, h, t] of pairs) out.push({ text, head: spans[h]!, tail: spans[t]!, label });
  }
  return out;
}
