import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { encodeEvent, Topics, type EventEnvelope } from '@whetstone/events';
import { uuidv7 } from '@whetstone/errors';
import {
  InferenceCompletedSchema,
  InferenceSurface,
  InferenceTask,
  type InferenceCompleted,
} from '@whetstone/proto/inference/v1';

let seq = 0;

/** An InferenceCompleted as the router writes it, with overridable fields. */
export function completed(overrides: Partial<Omit<InferenceCompleted, '$typeName'>> = {}): InferenceCompleted {
  const at = new Date();
  return create(InferenceCompletedSchema, {
    inferenceId: uuidv7(at.getTime()),
    teamId: '5b0f3c1e-0000-4000-8000-000000000001',
    keyId: '5b0f3c1e-0000-4000-8000-0000000000aa',
    userId: '5b0f3c1e-0000-4000-8000-0000000000bb',
    model: 'whetstone-extract-base',
    baseModel: 'whetstone-extract-base',
    task: InferenceTask.EXTRACT,
    surface: InferenceSurface.NATIVE,
    inputs: ['Ada Lovelace met Charles Babbage in London.'],
    schema: { entities: ['person', 'city'] },
    outputs: [{ entities: { person: ['Ada Lovelace', 'Charles Babbage'], city: ['London'] } }],
    latencyMs: 12.5,
    inputTokens: 9n,
    costMicroCredits: 1001n,
    startedAt: timestampFromDate(at),
    completedAt: timestampFromDate(at),
    ...overrides,
  });
}

/** The event as the transport delivers it. */
export function envelopeOf(event: InferenceCompleted): EventEnvelope {
  const row = encodeEvent(Topics.inferences, InferenceCompletedSchema, event, event.inferenceId);
  return { ...row, id: `inference/${++seq}`, occurredAt: new Date() };
}
