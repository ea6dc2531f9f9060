/**
 * Extraction latency of one bundle as the model-server runs it: loaded in a fresh process (no training heap to
 * collect), one text at a time on one thread. bench:ml's serving section runs this file as a child process;
 * `node --require tsx/cjs ml/serving.ts <bundle file>` prints the figures as JSON.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadModel } from '@whetstone/ml';
import { percentile } from './common';

export const SERVING_LABELS = ['person', 'location', 'organization', 'misc'];
export const SERVING_TEXT =
  'Frederick H. Collier was the first colonel of the 139th Pennsylvania regiment , formed at Camp Howe near Pittsburgh on September 1 , 1862 , and later sent to Washington by train';
const WARM_UP = 300;
const TIMED = 1000;

export interface ServingLatency {
  words: number;
  p50: number;
  p99: number;
}

function measure(bundle: Uint8Array): ServingLatency {
  const model = loadModel(bundle);
  for (let i = 0; i < WARM_UP; i++) model.extract(SERVING_TEXT, { entities: SERVING_LABELS });
  const lat: number[] = [];
  for (let i = 0; i < TIMED; i++) {
    const s = performance.now();
    model.extract(SERVING_TEXT, { entities: SERVING_LABELS });
    lat.push(performance.now() - s);
  }
  return { words: SERVING_TEXT.split(' ').length, p50: percentile(lat, 0.5), p99: percentile(lat, 0.99) };
}

/** Measures `bundle` in a child process (what a freshly started model-server sees). */
export function servingLatency(bundle: Uint8Array): ServingLatency {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-serving-'));
  try {
    const file = path.join(dir, 'model.bundle');
    writeFileSync(file, bundle);
    const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', __filename, file], {
      cwd: path.join(__dirname, '..'),
      encoding: 'utf8',
    });
    return JSON.parse(out) as ServingLatency;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file || file === '--help' || file === '-h') {
    console.error('Usage: node --require tsx/cjs ml/serving.ts <bundle file>  (prints p50/p99 ms as JSON)');
    process.exit(file ? 0 : 2);
  }
  process.stdout.write(JSON.stringify(measure(readFileSync(file))));
}
