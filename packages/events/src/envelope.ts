import { context, propagation } from '@opentelemetry/api';
import { fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';

/** One event on the wire, whatever the transport. */
export interface EventEnvelope {
  /** Globally unique; consumers de-duplicate on it. */
  id: string;
  /** e.g. `keys.v1`. */
  topic: string;
  /** Fully qualified protobuf type name of the payload, e.g. `whetstone.keybilling.v1.KeyRevoked`. */
  type: string;
  /** Aggregate id; ordering is per key. */
  key: string;
  /** Protobuf binary of the event message. */
  payload: Uint8Array;
  /** `traceparent` and friends. */
  headers: Record<string, string>;
  occurredAt: Date;
}

/** Headers carrying the active trace context, for the outbox row or the Kafka message. */
export function traceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** Encode a protobuf-es message as an envelope body (without id, which the outbox assigns). */
export function encodeEvent<Desc extends DescMessage>(
  topic: string,
  schema: Desc,
  message: MessageShape<Desc>,
  key: string,
) {
  return { topic, type: schema.typeName, key, payload: toBinary(schema, message), headers: traceHeaders() };
}

/** Decode an envelope whose type matches `schema`; null when it is another event type on the same topic. */
export function decodeEvent<Desc extends DescMessage>(
  envelope: EventEnvelope,
  schema: Desc,
): MessageShape<Desc> | null {
  if (envelope.type !== schema.typeName) return null;
  return fromBinary(schema, envelope.payload);
}
