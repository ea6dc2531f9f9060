import type { Inference } from '../../../../application/ports';
import type { Api } from '../../api';
import { registerChatCompletionsRoute } from './chat-completions.routes';
import { registerCompletionsRoute } from './completions.routes';
import { registerMessagesRoute } from './messages.routes';
import { registerResponsesRoute } from './responses.routes';

/** The four compatible surfaces over the router's one chat core; the gateway only translates. */
export function registerCompatRoutes(api: Api, inference: Inference): void {
  registerChatCompletionsRoute(api, inference);
  registerCompletionsRoute(api, inference);
  registerResponsesRoute(api, inference);
  registerMessagesRoute(api, inference);
}
