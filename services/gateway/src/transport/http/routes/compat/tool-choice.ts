import type { ChatInput, ChatTool, ChatToolChoice } from '../../../../application/ports';
import { invalidBody } from '../../validate';

/**
 * A surface's tool choice as the chat core's (`none` is handled by the surfaces: it drops the tools). Asking for a
 * tool call needs tools, and a named tool must be one of them: both are 422 naming `tool_choice`. `auto` with no
 * parallel setting sets nothing, so the provider's defaults hold.
 */
export function toolChoiceField(
  choice: { mode: ChatToolChoice['mode']; name?: string | undefined },
  parallelToolCalls: boolean | null | undefined,
  tools: ChatTool[],
): Pick<ChatInput, 'toolChoice'> {
  if (choice.mode !== 'auto' && !tools.length)
    throw invalidBody('tool_choice', 'asks for a tool call, so the request must give tools');
  if (choice.mode === 'tool' && !tools.some((t) => t.name === choice.name))
    throw invalidBody('tool_choice', `names '${choice.name ?? ''}', which is not one of the request's tools`);
  if (choice.mode === 'auto' && parallelToolCalls == null) return {};
  return {
    toolChoice: {
      mode: choice.mode,
      ...(choice.mode === 'tool' ? { name: choice.name! } : {}),
      ...(parallelToolCalls == null ? {} : { parallelToolCalls }),
    },
  };
}
