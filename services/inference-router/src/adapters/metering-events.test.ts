import { fromBinary } from '@bufbuild/protobuf';
import {
  InferenceCompletedSchema,
  InferenceStatus,
  InferenceSurface,
  UsageRecordedSchema,
} from '@whetstone/proto/inference/v1';
import type { InferenceRecord } from '../application/ports';
import { meteringRows, surfaceOf } from './metering-events';

const record = (over: Partial<InferenceRecord> = {}): InferenceRecord => ({
  inferenceId: '01a212a9-e7bb-7640-9d64-b584115fa026',
  caller: { teamId: 'team', keyId: 'key', userId: 'user' },
  model: 'job-1',
  baseModel: 'whetstone-decoder-base',
  trainingJobId: 'job-1',
  projectId: '',
  task: 'generate',
  inputs: ['user: hi'],
  messages: [{ role: 'user', content: 'hi' }],
  schema: undefined,
  outputs: [{ text: 'hello', finish_reason: 'stop' }],
  latencyMs: 3.5,
  inputTokens: 2,
  outputTokens: 5,
  costMicroCredits: 1234n,
  startedAt: new Date(1_000),
  completedAt: new Date(2_000),
  ...over,
});

describe('metering events', () => {
  it('when an inference is metered, then InferenceCompleted carries who, what served it, the credits and the messages', () => {
    const [usage, completed] = meteringRows(record());
    const u = fromBinary(UsageRecordedSchema, usage!.payload);
    const c = fromBinary(InferenceCompletedSchema, completed!.payload);
    expect(u.costMicroCredits).toBe(1234n);
    expect(c).toMatchObject({
      inferenceId: record().inferenceId,
      userId: 'user',
      baseModel: 'whetstone-decoder-base',
      trainingJobId: 'job-1',
      surface: InferenceSurface.NATIVE,
      status: InferenceStatus.SUCCEEDED,
      costMicroCredits: u.costMicroCredits,
      outputTokens: 5n,
    });
    expect(c.messages.map((m) => [m.role, m.content])).toEqual([['user', 'hi']]);
    expect(completed!.key).toBe(record().inferenceId);
  });

  it('when the task or the project says where a call came from, then the surface follows', () => {
    expect(surfaceOf({ projectId: 'p', task: 'generate' })).toBe(InferenceSurface.PROJECT);
    expect(surfaceOf({ projectId: '', task: 'ner' })).toBe(InferenceSurface.GLINER2);
    expect(surfaceOf({ projectId: '', task: 'schema' })).toBe(InferenceSurface.GLINER2);
    expect(surfaceOf({ projectId: '', task: 'systemone' })).toBe(InferenceSurface.SYSTEMONE);
    expect(surfaceOf({ projectId: '', task: 'extract' })).toBe(InferenceSurface.NATIVE);
  });
});
