import type { UseCaseDeps } from './application/deps';
import { WorkLoop } from './application/work-loop';

export type AppDeps = UseCaseDeps;

/** The wired trainer: its work loop. No I/O happens until run() is called. */
export interface TrainerApp {
  run(): Promise<void>;
  stop(): void;
}

export function buildApp(deps: AppDeps): TrainerApp {
  const loop = new WorkLoop(deps);
  return { run: () => loop.run(), stop: () => loop.stop() };
}
