import { fromBinary } from '@bufbuild/protobuf';
import {
  ChatRole,
  type ChatResponse,
  InferenceCompletedSchema,
  InferenceSurface,
  UsageRecordedSchema,
} from '@whetstone/proto/inference/v1';
import type { Harness } from './harness';

/** A Chat request's defaults, as the gateway sends them for /v1/chat/completions. */
export const chatRequest = (over: Record<string, unknown> = {}) => ({
  system: [],
  messages: [{ role: ChatRole.USER, content: [{ text: 'hello there' }] }],
  sampling: { temperature: 0, topP: 0, maxTokens: 0, stop: [], seed: 0n },
  surface: InferenceSurface.CHAT_COMPLETIONS,
  store: true,
  ...over,
});

/** Every piece of a streamed reply, the text joined, and the last piece. */
export async function collect(stream: AsyncIterable<ChatResponse>) {
  const pieces: ChatResponse[] = [];
  for await (const piece of stream) pieces.push(piece);
  return { pieces, text: pieces.map((p) => p.text).join(''), last: pieces[pieces.length - 1]! };
}

/** What the router's outbox holds for one response id: its UsageRecorded and, if stored, its InferenceCompleted. */
export async function outboxOf(h: Harness, responseId: string) {
  const rows = await h.pool.pool.query<{ topic: string; key: string; payload: Buffer }>(
    `SELECT topic, key, payload FROM "${h.schema.name}".outbox_events ORDER BY id`,
  );
  const usage = rows.rows
    .filter((r) => r.topic === 'billing.usage.v1')
    .map((r) => fromBinary(UsageRecordedSchema, r.payload))
    .filter((u) => u.usageId === responseId);
  const completed = rows.rows
    .filter((r) => r.topic === 'inferences.v1' && r.key === responseId)
    .map((r) => fromBinary(InferenceCompletedSchema, r.payload));
  return { usage, completed };
}

/** The JSON bytes of a piece's tool-call deltas. */
export const toolDeltas = (p: ChatResponse) =>
  p.toolCallsJson.length
    ? (JSON.parse(Buffer.from(p.toolCallsJson).toString('utf8')) as Record<string, unknown>[])
    : [];
