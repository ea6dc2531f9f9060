/**
 * Pretrains the encoder base of whetstone-extract-base and writes
 * packages/ml/assets/encoder-base.i8 (row-wise int8, about 1.5 MB).
 * Data: template sentences filled with names, places, organisations and
 * nationalities from compromise's lexicon and WordNet's instance hyponyms
 * (src/encoder/pretrain.ts), each asking for a random subset of concepts
 * under random synonyms of their names. Deterministic for the same packages
 * and settings; reports held-out F1 on fresh generated sentences.
 *
 *   pnpm --filter @whetstone/ml build:encoder               # a few minutes on 2 cores
 *   ENCODER_EXAMPLES=300 pnpm --filter @whetstone/ml build:encoder   # smoke run
 */
import { writeFileSync } from 'node:fs';
import { loadGlove } from '../src/assets/load';
import { spanPRF } from '../src/eval/metrics';
import { decodeEncoderBase, encodeEncoderBase, ENCODER_BASE_FILE } from '../src/encoder/base';
import { ENCODER_CONFIG, initWeights } from '../src/encoder/model';
import { pretrainingExamples } from '../src/encoder/pretrain';
import { EncoderTrainer, EntityEncoder } from '../src/encoder/train';

const EXAMPLES = Number(process.env.ENCODER_EXAMPLES ?? 6000);
const EPOCHS = Number(process.env.ENCODER_EPOCHS ?? 2);
const SEED = 4242;

function main(): void {
  const glove = loadGlove();
  const started = Date.now();
  const train = pretrainingExamples(EXAMPLES, SEED);
  const heldout = pretrainingExamples(300, SEED + 1);
  const trainer = new EncoderTrainer(train, ENCODER_CONFIG, glove, initWeights(ENCODER_CONFIG, glove, SEED), {
    mode: 'full',
    labels: [],
    epochs: EPOCHS,
    learningRate: 2e-3,
    batchSize: 32,
    seed: SEED,
  });
  for (let e = 1; e <= EPOCHS; e++) {
    const loss = trainer.runEpoch({
      onExample: (done, l) =>
        process.stderr.write(`\repoch ${e}/${EPOCHS} ${done}/${trainer.size} loss ${l.toFixed(4)}   `),
    });
    process.stderr.write(`\nepoch ${e}: loss ${loss.toFixed(4)} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  }
  const weights = Object.fromEntries(Object.entries(trainer.result().weights).filter(([k]) => !k.startsWith('label.')));
  const bytes = encodeEncoderBase(
    {
      config: ENCODER_CONFIG,
      training: { script: 'scripts/build-encoder.ts', examples: EXAMPLES, epochs: EPOCHS, seed: SEED },
    },
    weights,
  );
  // Measure the quantised weights: what ships is what is reported.
  const shipped = new EntityEncoder(ENCODER_CONFIG, glove, decodeEncoderBase(bytes).weights, null, []);
  const r = spanPRF(
    heldout.map((x) => x.entities ?? []),
    heldout.map((x) => shipped.extract(x.text ?? '', x.labels ?? [])),
  );
  writeFileSync(ENCODER_BASE_FILE, bytes);
  process.stderr.write(
    `held-out generated sentences: F1 ${r.f1.toFixed(3)}; wrote ${ENCODER_BASE_FILE.split('/').slice(-2).join('/')} (${(bytes.length / 1e6).toFixed(2)} MB) in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
}

main();
