import type { ChatFinishReason } from '../domain/chat';
import { totalInput } from '../domain/chat';
import type { Caller, ChatTurn, GenerateOptions, InferenceReceipt } from '../domain/model';
import { chat } from './chat';
import type { RouterDeps } from './deps';

/** A decoder call as the gateway validated it: at least one message, sampling options with defaults applied. */
export interface GenerateInput {
  caller: Caller;
  modelId: string;
  projectId: string;
  messages: ChatTurn[];
  options: GenerateOptions;
}

export type GeneratePiece =
  { text: string } | { done: InferenceReceipt & { text: string; finishReason: ChatFinishReason } };

/**
 * GenerateText (/inference with task "generate"): a trained decoder's reply
 * (a job id, or a project whose active deployment is a decoder), served by
 * the chat core with no cache markers, always stored, and recorded under the
 * native or project surface it came through.
 */
export async function* generate(deps: RouterDeps, input: GenerateInput): AsyncGenerator<GeneratePiece> {
  const pieces = chat(deps, {
    caller: input.caller,
    responseId: deps.ids.uuid(),
    decoderOnly: { projectId: input.projectId },
    request: {
      model: input.modelId,
      system: [],
      messages: input.messages.map((m) => ({
        role: m.role,
        content: [{ text: m.content }],
        toolCalls: [],
        toolCallId: '',
      })),
      options: input.options,
      tools: [],
      schemaJson: new Uint8Array(),
      schema: undefined,
      store: true,
      includeReasoning: false,
    },
  });
  for await (const piece of pieces) {
    if ('delta' in piece) {
      if (piece.delta.text) yield { text: piece.delta.text };
      continue;
    }
    const d = piece.done;
    yield {
      done: {
        inferenceId: d.inferenceId,
        model: d.model,
        text: d.text,
        usage: {
          inputTokens: totalInput(d.usage),
          outputTokens: d.usage.outputTokens,
          costMicroCredits: d.usage.costMicroCredits,
        },
        latencyMs: d.latencyMs,
        finishReason: d.finishReason,
      },
    };
  }
}
