import type { EventEnvelope } from '@whetstone/events';
import { ConversationService, InferenceHistoryService } from '@whetstone/proto/history/v1';
import type { ServiceRouter } from '@whetstone/rpc';
import type { Logger } from '@whetstone/telemetry';
import type { HistoryDeps } from './application/deps';
import type { ConversationStore, JudgeStore } from './application/ports';
import { handleInferenceEvents } from './transport/events/inference-completed.consumer';
import { conversationsHandler } from './transport/rpc/conversations.handler';
import { historyHandler } from './transport/rpc/history.handler';

export interface AppDeps extends HistoryDeps {
  logger: Logger;
  /** Judge settings and queue (the worker itself is started by main.ts). */
  judgeStore: JudgeStore;
  /**
   * OpenAI's conversations, served by ConversationService. main.ts always gives them; a caller that only ingests
   * (bench/history) may leave them out, and the service is then not registered.
   */
  conversations?: ConversationStore | undefined;
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
      const { conversations, now } = deps;
      if (conversations) router.service(ConversationService, conversationsHandler({ conversations, now }));
    },
    onInferenceEvents: (events) => handleInferenceEvents(deps, deps.logger, events),
  };
}
