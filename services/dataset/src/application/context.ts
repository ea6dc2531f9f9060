import { randomUUID } from 'node:crypto';
import { BackgroundWork } from './background';
import type { DatasetDeps } from './ports';

/** The ports plus this process's identity and its background work; every use case takes it. */
export interface DatasetContext extends DatasetDeps {
  instance: string;
  work: BackgroundWork;
}

export function createDatasetContext(deps: DatasetDeps): DatasetContext {
  return {
    ...deps,
    instance: deps.instance ?? `dataset-${process.pid}-${randomUUID().slice(0, 8)}`,
    work: new BackgroundWork(),
  };
}
