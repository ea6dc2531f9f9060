import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { JobStatus, JobStatusChangedSchema } from '@whetstone/proto/training/v1';
import { trainedModelOf } from './job-event.mapper';

const at = new Date('2026-03-01T10:00:00Z');
const event = (toStatus: JobStatus, artifactKey = '') =>
  create(JobStatusChangedSchema, {
    jobId: 'job-1',
    teamId: 'team-1',
    toStatus,
    artifactBucket: artifactKey ? 'artifacts' : '',
    artifactKey,
    rootBaseModel: 'whetstone-extract-base',
    modelName: 'tickets',
    occurredAt: timestampFromDate(at),
  });

describe('trainedModelOf', () => {
  it('when a job completes with a bundle, then it is servable from the time of the change', () => {
    expect(trainedModelOf(event(JobStatus.COMPLETE, 'jobs/1/bundle'), new Date())).toEqual({
      jobId: 'job-1',
      teamId: 'team-1',
      servable: true,
      statusLabel: 'complete',
      baseModel: 'whetstone-extract-base',
      modelName: 'tickets',
      bundle: { bucket: 'artifacts', key: 'jobs/1/bundle' },
      completedAt: at,
      updatedAt: at,
    });
  });

  it('when a job is deployed, then it stays servable', () => {
    expect(trainedModelOf(event(JobStatus.DEPLOYED, 'jobs/1/bundle'), new Date()).servable).toBe(true);
  });

  it('when a job is running, failed or cancelled (or complete without a bundle), then it is not servable and says why', () => {
    for (const [status, label] of [
      [JobStatus.RUNNING, 'running'],
      [JobStatus.FAILED, 'failed'],
      [JobStatus.CANCELLED, 'cancelled'],
      [JobStatus.COMPLETE, 'complete'],
    ] as const) {
      const m = trainedModelOf(event(status), new Date());
      expect([m.servable, m.bundle, m.statusLabel]).toEqual([false, null, label]);
    }
  });

  it('when the event carries no time, then the time it was received orders it', () => {
    const received = new Date('2026-03-02T00:00:00Z');
    const e = event(JobStatus.RUNNING);
    delete (e as { occurredAt?: unknown }).occurredAt;
    expect(trainedModelOf(e, received).updatedAt).toEqual(received);
  });
});
