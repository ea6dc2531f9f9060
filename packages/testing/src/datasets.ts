import { existsSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SHIPPED = path.join(ROOT, 'datasets');

/** A file of the datasets shipped with the repository (datasets/README.md), e.g. `wikigold/train.jsonl`. */
export function datasetFile(relative: string): string {
  return path.join(SHIPPED, relative);
}

/** A test-only file derived from them or written for the tests (test/fixtures/datasets/README.md). */
export function fixtureDataset(relative: string): string {
  return path.join(ROOT, 'test', 'fixtures', 'datasets', relative);
}

/**
 * The folder benchmarks read the datasets from: the shipped `datasets/`, or `WHETSTONE_DATASETS` when set
 * (another folder in the same layout).
 */
export function datasetsDir(): string {
  const override = process.env.WHETSTONE_DATASETS;
  if (!override) return SHIPPED;
  if (!existsSync(override)) throw new Error(`WHETSTONE_DATASETS=${override}: no such folder`);
  return override;
}
