/** Work a stopped or crashed process left unfinished, picked up again. */
import type { DatasetContext } from './context';
import { startProcessing } from './process-version';
import { runGeneration } from './run-generation';

/** Re-runs versions left converting or validating whose claim expired; returns how many. */
export async function resumeAbandoned(ctx: DatasetContext): Promise<number> {
  const abandoned = await ctx.store.abandoned();
  for (const v of abandoned) startProcessing(ctx, v.id);
  return abandoned.length;
}

/** At start: generation jobs still queued or running run again, into a new version; returns how many. */
export async function resumeGenerations(ctx: DatasetContext): Promise<number> {
  const jobs = await ctx.store.unfinishedGenerations();
  for (const job of jobs) void runGeneration(ctx, job);
  return jobs.length;
}
