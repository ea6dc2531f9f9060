import { existsSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** A committed copy of the shared labelled data (test/fixtures/datasets), so tests run from any clone. */
export function fixtureDataset(relative: string): string {
  return path.join(ROOT, 'test', 'fixtures', 'datasets', relative);
}

/**
 * The full shared datasets for benchmarks: `WHETSTONE_DATASETS`, else the shared folder beside the
 * repository, else the committed fixtures (which hold wikigold and part of banking77).
 */
export function datasetsDir(): string {
  const candidates = [process.env.WHETSTONE_DATASETS, path.resolve(ROOT, '..', 'shared', 'datasets')].filter(
    (p): p is string => Boolean(p),
  );
  return candidates.find((p) => existsSync(p)) ?? path.join(ROOT, 'test', 'fixtures', 'datasets');
}
