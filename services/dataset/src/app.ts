import type { EventEnvelope } from '@whetstone/events';
import { DatasetService, FileService } from '@whetstone/proto/dataset/v1';
import type { ServiceRouter } from '@whetstone/rpc';
import { collectFeedback } from './application/collect-feedback';
import { createDatasetContext } from './application/context';
import { sweepExpiredFiles } from './application/files';
import type { DatasetDeps } from './application/ports';
import { resumeAbandoned, resumeGenerations } from './application/resume';
import { feedbackChanges } from './transport/events/feedback-submitted.consumer';
import { datasetHandler } from './transport/rpc/dataset.handler';
import { filesHandler } from './transport/rpc/files.handler';

/** The wired service: its RPC routes and its background work. No I/O happens here. */
export interface DatasetApp {
  registerRoutes(router: ServiceRouter): void;
  /** Re-runs versions whose processing claim expired (a crashed process); returns how many. */
  resumeAbandoned(): Promise<number>;
  /** Re-runs generation jobs a stopped process left queued or running; returns how many. */
  resumeGenerations(): Promise<number>;
  /** Deletes the Files API files that have expired, bytes and records; returns how many (0 without a FileStore). */
  sweepExpiredFiles(): Promise<number>;
  /** Stores a delivered batch of FeedbackSubmitted and InferenceDeleted and cuts the feedback dataset versions it calls for. */
  onFeedbackEvents(envelopes: EventEnvelope[]): Promise<void>;
  /** Resolves when no processing runs in this process (tests, shutdown). */
  idle(): Promise<void>;
}

export function buildApp(deps: DatasetDeps): DatasetApp {
  const ctx = createDatasetContext(deps);
  return {
    registerRoutes(router) {
      router.service(DatasetService, datasetHandler(ctx));
      const { files } = ctx;
      if (files) router.service(FileService, filesHandler({ ...ctx, files }));
    },
    resumeAbandoned: () => resumeAbandoned(ctx),
    resumeGenerations: () => resumeGenerations(ctx),
    sweepExpiredFiles: async () => (ctx.files ? sweepExpiredFiles({ ...ctx, files: ctx.files }) : 0),
    onFeedbackEvents: async (envelopes) => void (await collectFeedback(ctx, feedbackChanges(ctx.logger, envelopes))),
    idle: () => ctx.work.idle(),
  };
}
