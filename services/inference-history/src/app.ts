import type { EventEnvelope } from '@whetstone/events';
import { InferenceHistoryService } from '@whetstone/proto/history/v1';
import type { ServiceRouter } from '@whetstone/rpc';
import type { Logger } from '@whetstone/telemetry';
import type { HistoryDeps } from './application/deps';
import type { JudgeStore } from './application/ports';
import { handleInferenceEvents } from './transport/events/inference-completed.consumer';
import { historyHandler } from './transport/rpc/history.handler';

export interface AppDeps extends HistoryDeps {
  logger: Logger;
  /** Judge settings and queue (the worker itself is started by main.ts). */
  judgeStore: JudgeStore;
}

/** The wired service: its RPC routes and its event handler. No I/O happens here. */
export interface HistoryApp {
  registerRoutes(router: ServiceRouter): void;
  /** A delivered batch of the inferences topic; resolves with how many records were new. */
  onInferenceEvents(events: EventEnvelope[]): Promise<number>;
}

export function buildApp(deps: AppDeps): HistoryApp {
  return {
    registerRoutes(router) {
      router.service(InferenceHistoryService, historyHandler(deps));
    },
    onInferenceEvents: (events) => handleInferenceEvents(deps, deps.logger, events),
  };
}
