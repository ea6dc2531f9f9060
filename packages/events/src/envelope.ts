import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  isSpanContextValid,
  propagation,
  trace,
  type Link,
} from '@opentelemetry/api';
import { fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { ensureTraceContextPropagation } from '@whetstone/telemetry';

ensureTraceContextPropagation();

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

const tracer = trace.getTracer('@whetstone/events');

/**
 * Run a consumer's handling of `events` (one event, or a batch of one topic) in a CONSUMER span that continues
 * the producer's trace from the envelopes' `traceparent`, so the consumer's spans and log lines join the trace
 * of the call that wrote the event. A batch that spans several traces gets a span of its own, linked to each.
 * Without a tracing SDK the span is a no-op that still carries the producer's trace context (for log lines).
 */
export async function inConsumerSpan<T>(
  consumer: { system: string; group: string },
  events: EventEnvelope[],
  work: () => Promise<T>,
): Promise<T> {
  const parents = events
    .map((e) => propagation.extract(ROOT_CONTEXT, e.headers))
    .filter((ctx) => {
      const span = trace.getSpanContext(ctx);
      return span !== undefined && isSpanContextValid(span);
    });
  const traces = new Set(parents.map((ctx) => trace.getSpanContext(ctx)!.traceId));
  const parent = traces.size === 1 ? parents[0]! : ROOT_CONTEXT;
  const links: Link[] = traces.size > 1 ? parents.map((ctx) => ({ context: trace.getSpanContext(ctx)! })) : [];
  const topic = events[0]?.topic ?? '';
  const span = tracer.startSpan(
    `process ${topic}`,
    {
      kind: SpanKind.CONSUMER,
      links,
      attributes: {
        'messaging.system': consumer.system,
        'messaging.operation.type': 'process',
        'messaging.destination.name': topic,
        'messaging.consumer.group.name': consumer.group,
        'messaging.batch.message_count': events.length,
      },
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), work);
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
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
