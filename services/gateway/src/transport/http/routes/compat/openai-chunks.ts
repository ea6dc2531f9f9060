import type { ChatDone } from '../../../../application/ports';
import type { ChatStart, Sse } from './chat-run';
import { openAiUsage, totalUsage, xService } from './usage';

/**
 * The chunk stream of chat completions and completions for one or `n` choices: every chunk carries the first call's
 * id; usage and x_service are null except on the terminal chunk, which is the only choice's finish chunk, or with
 * `n` choices a last chunk with no choices after every choice has finished (OpenAI's include_usage chunk).
 */
export function openAiChunks(
  sse: Sse,
  starts: ChatStart[],
  head: { object: 'chat.completion.chunk' | 'text_completion'; idPrefix: string; model: string },
) {
  const [start] = starts;
  const id = `${head.idPrefix}${start!.first.value?.responseId ?? ''}`;
  const dones: ChatDone[] = [];
  const send = (choices: unknown[], done: ChatDone | null) =>
    sse.send({
      id,
      object: head.object,
      created: start!.created,
      model: head.model,
      choices,
      usage: done ? openAiUsage(done.usage) : null,
      x_service: done ? xService(done) : null,
    });
  return {
    /** A chunk of one choice; `done` on its finish chunk. */
    choice(choice: Record<string, unknown>, done?: ChatDone) {
      if (done) dones.push(done);
      send([choice], done && starts.length === 1 ? done : null);
    },
    /** After every choice's last piece: the usage chunk of `n` choices, then `[DONE]`. */
    end() {
      if (starts.length > 1) send([], { ...dones[0]!, usage: totalUsage(dones.map((d) => d.usage)) });
      sse.end('data: [DONE]\n\n');
    },
  };
}
