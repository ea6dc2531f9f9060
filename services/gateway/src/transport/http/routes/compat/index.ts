import type { ConversationsPort, HistoryPort } from '../../../../application/history-ports';
import type { ChatBatches, Inference } from '../../../../application/ports';
import type { Api } from '../../api';
import { registerChatCompletionsRoute, registerStoredCompletionRoutes } from './chat-completions.routes';
import { registerCompletionsRoute } from './completions.routes';
import { registerEmbeddingsRoute } from './embeddings.routes';
import { registerMessagesRoute } from './messages.routes';
import { registerResponsesRoute, registerStoredResponseRoute } from './responses.routes';

/** The back ends the compatible surfaces use beside the router, each when configured. */
export interface CompatBackends {
  history?: HistoryPort | undefined;
  batches?: ChatBatches | undefined;
  conversations?: ConversationsPort | undefined;
}

/**
 * The four compatible surfaces over the router's one chat core; the gateway only translates. Stored Responses
 * calls are read back from history (retrieval and `previous_response_id`); background ones run as batches of one.
 */
export function registerCompatRoutes(api: Api, inference: Inference, backends: CompatBackends = {}): void {
  const { history, batches, conversations } = backends;
  registerChatCompletionsRoute(api, inference);
  registerCompletionsRoute(api, inference);
  registerResponsesRoute(api, inference, history, batches, conversations);
  if (history) registerStoredResponseRoute(api, history, batches);
  if (history) registerStoredCompletionRoutes(api, history);
  registerMessagesRoute(api, inference);
  registerEmbeddingsRoute(api, inference);
}
