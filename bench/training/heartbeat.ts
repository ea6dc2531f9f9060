/**
 * Trainer heartbeat benchmark (issue 21): how long the trainer's main thread
 * (the one that heartbeats its lease) is blocked while a job trains, with the
 * engine on that thread (as before issue 21) and on its own thread (now),
 * beside busy loops that keep the machine's cores saturated.
 *
 *   pnpm --filter @whetstone/bench bench:heartbeat [--hogs 2] [--rows 600] [--epochs 2]
 *
 * Prints, per engine: the longest stall of the main thread, its p99, and how
 * many 5 s leases (the e2e tests' setting) a stall that long would let expire.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { datasetFile } from '@whetstone/testing';
import { mlEngine } from '@whetstone/trainer/src/adapters/ml-engine';
import { ThreadedEngine } from '@whetstone/trainer/src/adapters/threaded-engine';
import type { TrainingEngine } from '@whetstone/trainer/src/application/ports';

const { values } = parseArgs({
  options: {
    hogs: { type: 'string', default: '2' },
    rows: { type: 'string', default: '600' },
    epochs: { type: 'string', default: '2' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(
    'usage: bench:heartbeat [--hogs N busy loops, default 2] [--rows training rows, default 600] [--epochs 2]',
  );
  process.exit(0);
}

const LEASE_MS = 5_000;
const lines = (file: string) =>
  readFileSync(datasetFile(file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function measure(name: string, engine: TrainingEngine) {
  const train = lines('wikigold/train.jsonl').slice(0, Number(values.rows));
  const heldout = lines('wikigold/dev.jsonl');
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = Date.now();
  const result = await engine.train(
    {
      baseModel: 'whetstone-extract-base',
      trainingType: 'full',
      train,
      heldout,
      hyperparameters: { nrEpochs: Number(values.epochs), learningRate: 0.002, seed: 13 },
    },
    {
      signal: new AbortController().signal,
      onLog: () => undefined,
      onProgress: () => undefined,
      onCheckpoint: async () => undefined,
    },
  );
  delay.disable();
  const maxMs = delay.max / 1e6;
  console.log(
    `${name.padEnd(22)} longest main-thread stall ${maxMs.toFixed(0).padStart(6)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(0).padStart(5)} ms, ` +
      `${Math.floor(maxMs / LEASE_MS)} lease(s) of ${LEASE_MS / 1000} s lost in it; run ${((Date.now() - started) / 1000).toFixed(1)} s, f1 ${String(result.metrics.f1)}`,
  );
}

async function main() {
  const hogs = Array.from({ length: Number(values.hogs) }, () =>
    spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
  );
  try {
    console.log(`training ${values.rows} wikigold rows for ${values.epochs} epochs beside ${values.hogs} busy loop(s)`);
    await measure('engine on main thread', mlEngine);
    const threaded = new ThreadedEngine();
    await measure('engine on its thread', threaded);
    await threaded.close();
  } finally {
    for (const hog of hogs) hog.kill('SIGKILL');
  }
}

void main();
