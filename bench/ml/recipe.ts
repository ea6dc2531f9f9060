/**
 * BENCH_RECIPE_ONLY=1: the CLI's training recipe against its neighbours, on wikigold **dev** only (the held-out
 * split each run reports; test is not scored, so nothing here is chosen on it). Full and LoRA at other peak
 * rates, and full at 10 epochs; each row at every BENCH_SEEDS seed. About 12 minutes on a quiet 2-core machine
 * (21 trainings at the default seeds). Not part of the full bench:ml run.
 */
import { EPOCHS, LEARNING_RATE, SEEDS, fmt, rows, train, type PerSeed } from './common';

const GRID: { mode: 'full' | 'lora'; learningRate: number; epochs: number }[] = [
  { mode: 'full', learningRate: LEARNING_RATE, epochs: EPOCHS },
  { mode: 'full', learningRate: 0.0015, epochs: EPOCHS },
  { mode: 'full', learningRate: 0.003, epochs: EPOCHS },
  { mode: 'full', learningRate: LEARNING_RATE, epochs: 10 },
  { mode: 'lora', learningRate: LEARNING_RATE, epochs: EPOCHS },
  { mode: 'lora', learningRate: 0.004, epochs: EPOCHS },
  { mode: 'lora', learningRate: 0.006, epochs: EPOCHS },
];

export async function recipeCheck(): Promise<void> {
  const train_ = rows('wikigold/train.jsonl', 'extraction');
  const dev = rows('wikigold/dev.jsonl', 'extraction');
  console.log(
    `\n## the training recipe on wikigold dev only (train ${train_.length} → dev ${dev.length}; test not scored)\n`,
  );
  console.log('| recipe | dev micro F1 |');
  console.log('|---|---|');
  for (const g of GRID) {
    const f1s: PerSeed = [];
    const name = `${g.mode}, AdamW ${g.learningRate}, ${g.epochs} epochs`;
    for (const seed of SEEDS) {
      const run = await train(
        `recipe ${name}`,
        seed,
        { trainingType: g.mode, train: train_, heldout: dev },
        g.epochs,
        g.learningRate,
      );
      f1s.push(run.result.metrics.f1);
    }
    const isDefault = g.learningRate === LEARNING_RATE && g.epochs === EPOCHS;
    console.log(`| ${isDefault ? `**${name} (the default)**` : name} | ${fmt(f1s)} |`);
  }
}
