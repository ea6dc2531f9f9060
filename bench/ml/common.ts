/** Shared by bench:ml's sections: the CLI's recipe, seeds, BENCH_LIMIT, per-seed formatting, one training run. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { datasetsDir } from '@whetstone/testing';
import { trainModel, type Metrics, type TrainResult } from '@whetstone/ml';
import { spanPRF, validateJsonl } from '@whetstone/ml/internals';

const DATA = datasetsDir();
/** The CLI's defaults (packages/ml/src/cli/main.ts): 6 epochs, AdamW peak rate 0.002, seed 13. */
export const DEFAULT_SEED = 13;
export const LEARNING_RATE = 0.002;
export const EPOCHS = Number(process.env.BENCH_EPOCHS ?? 6);
export const SEEDS = (process.env.BENCH_SEEDS ?? '13,14,15')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((s) => Number.isInteger(s));
if (!SEEDS.length) throw new Error('BENCH_SEEDS: no seed');
/** The seed whose figure is quoted: 13 when run, else the first listed. */
export const QUOTED_SEED = SEEDS.includes(DEFAULT_SEED) ? DEFAULT_SEED : SEEDS[0]!;
export const LIMIT = process.env.BENCH_LIMIT ? Number(process.env.BENCH_LIMIT) : 0;
export const LABELS = ['person', 'location', 'organization', 'misc'];
export const RECIPE = `${EPOCHS} epochs, learning rate ${LEARNING_RATE}, seeds ${SEEDS.join(', ')} (mean (min–max; seed ${QUOTED_SEED}))`;

/** BENCH_LIMIT: n rows spread evenly over the set (so a cut banking77 keeps many intents). */
export function limit<T>(xs: T[]): T[] {
  if (!LIMIT || xs.length <= LIMIT) return xs;
  const stride = xs.length / LIMIT;
  return Array.from({ length: LIMIT }, (_, i) => xs[Math.floor(i * stride)]!);
}

/** A dataset's rows (datasets/), all of them (`rows` applies BENCH_LIMIT). */
export const allRows = (file: string, kind: 'extraction' | 'classification') => {
  const report = validateJsonl(readFileSync(path.join(DATA, file), 'utf8'), kind);
  if (report.errors.length) throw new Error(`${file}: ${report.errors.length} invalid rows`);
  return report.examples;
};
export const rows = (file: string, kind: 'extraction' | 'classification') => limit(allRows(file, kind));

export const perLabel = (m: Metrics | ReturnType<typeof spanPRF>) =>
  Object.entries('per_label' in m ? m.per_label : m.perLabel)
    .map(([l, r]) => `${l} ${r.f1.toFixed(3)}`)
    .join(', ');

export function percentile(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

/** One figure per seed (in SEEDS order). */
export type PerSeed = number[];
export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** `mean (min–max; seed 13: x)`; NaN figures (nothing to score in a smoke run) print as n/a. */
export function fmt(xs: PerSeed, digits = 3): string {
  if (xs.some((x) => !Number.isFinite(x))) return 'n/a';
  const f = (x: number) => x.toFixed(digits);
  const quoted = xs[SEEDS.indexOf(QUOTED_SEED)]!;
  if (xs.length === 1) return `${f(quoted)} (1 seed: ${QUOTED_SEED})`;
  return `${f(mean(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))}; seed ${QUOTED_SEED}: ${f(quoted)})`;
}
/** Train seconds and examples/s: the mean over the seeds. */
export const fmtMean = (xs: PerSeed, digits = 1) =>
  xs.length > 1 ? `${mean(xs).toFixed(digits)} (mean)` : xs[0]!.toFixed(digits);

export function progress(row: string, seed: number, secs: number, extra = ''): void {
  process.stderr.write(`${row}, seed ${seed}: ${secs.toFixed(1)} s${extra ? `, ${extra}` : ''}\n`);
}

export interface Run {
  result: TrainResult;
  secs: number;
  /** Training throughput the pipeline reported last (rows per second, held-out scoring excluded). */
  examplesPerSecond: number;
  logs: string[];
  /** Wall time and ETA when the second epoch began (the first epoch's prediction of the total). */
  firstEpochEnd: { at: number; eta: number } | null;
  t0: number;
}

/** One trainModel run with the CLI's recipe (or the given epochs and rate) at `seed`; one progress line on stderr when done. */
export async function train(
  row: string,
  seed: number,
  req: Omit<Parameters<typeof trainModel>[0], 'baseModel' | 'hyperparameters'>,
  nrEpochs = EPOCHS,
  learningRate = LEARNING_RATE,
): Promise<Run> {
  const logs: string[] = [];
  const t0 = performance.now();
  let rate = 0;
  let firstEpochEnd: Run['firstEpochEnd'] = null;
  const result = await trainModel({
    ...req,
    baseModel: 'whetstone-extract-base',
    hyperparameters: { nrEpochs, learningRate, seed },
    onLog: (_l, m) => logs.push(m),
    onProgress: (p) => {
      if (p.examplesPerSecond) rate = p.examplesPerSecond;
      if (p.epoch === 2 && !firstEpochEnd) firstEpochEnd = { at: performance.now(), eta: p.etaSeconds };
    },
  });
  const secs = (performance.now() - t0) / 1000;
  const heldout = req.heldout?.length ? `, held-out ${result.metrics.f1.toFixed(3)}` : ', no held-out split';
  progress(row, seed, secs, `${rate} examples/s${heldout}`);
  return { result, secs, examplesPerSecond: rate, logs, firstEpochEnd, t0 };
}
