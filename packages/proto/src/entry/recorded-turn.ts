// A recorded conversation turn ⇄ RecordedMessage, whose tool calls travel as JSON bytes: one mapping for the
// router that records turns, and for history that stores, serves and republishes them.
import { create } from '@bufbuild/protobuf';
import { RecordedMessageSchema, type RecordedMessage } from '../gen/whetstone/inference/v1/events_pb';

/** A tool call an assistant turn made; `arguments` is a JSON string. */
export interface RecordedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One recorded turn: role, joined text, and an assistant's tool calls or the call a tool turn answers. */
export interface RecordedTurn {
  role: string;
  content: string;
  toolCalls?: RecordedToolCall[];
  toolCallId?: string;
}

export function recordedMessageOf(turn: RecordedTurn): RecordedMessage {
  return create(RecordedMessageSchema, {
    role: turn.role,
    content: turn.content,
    toolCallsJson: turn.toolCalls?.length
      ? new TextEncoder().encode(JSON.stringify(turn.toolCalls))
      : new Uint8Array(0),
    toolCallId: turn.toolCallId ?? '',
  });
}

export function recordedTurnOf(m: RecordedMessage): RecordedTurn {
  const calls = m.toolCallsJson.length ? (JSON.parse(new TextDecoder().decode(m.toolCallsJson)) as unknown) : [];
  const toolCalls = Array.isArray(calls)
    ? calls.map((c: Record<string, unknown>) => ({
        id: String(c.id ?? ''),
        name: String(c.name ?? ''),
        arguments: String(c.arguments ?? ''),
      }))
    : [];
  return {
    role: m.role,
    content: m.content,
    ...(toolCalls.length ? { toolCalls } : {}),
    ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}),
  };
}
