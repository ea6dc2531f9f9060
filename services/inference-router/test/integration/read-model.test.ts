import { randomUUID } from 'node:crypto';
import type { Client } from '@connectrpc/connect';
import type { InferenceRouterService } from '@whetstone/proto/inference/v1';
import { JobStatus } from '@whetstone/proto/training/v1';
import { eventually } from '@whetstone/testing';
import { json, resultsOf, rpcError, startHarness, team, type Harness } from './harness';

/** The router's read model of training jobs, fed only by the orchestrator's events on the real event log. */
describe('inference-router trained-model read model', () => {
  let h: Harness;
  let client: Client<typeof InferenceRouterService>;

  beforeAll(async () => {
    h = await startHarness();
    client = h.client;
  }, 60_000);

  afterAll(() => h?.close());

  it('when job events arrive out of order, then the read model keeps the newest state and lists the job once', async () => {
    const jobId = randomUUID();
    const key = `jobs/${jobId}/bundle.json`;
    await h.store.put('artifacts', key, Buffer.from(JSON.stringify({ person: ['Wintermute'] })));
    const t0 = Date.now();
    await h.publishStatus(jobId, JobStatus.RUNNING, { at: new Date(t0) });
    await h.seen(jobId, 'running');
    const notYet = await rpcError(
      client.infer({ caller: team, modelId: jobId, texts: ['x'], schemaJson: json({ entities: ['person'] }) }),
    );
    expect(notYet.message).toContain('is running');
    await h.publishStatus(jobId, JobStatus.COMPLETE, { key, at: new Date(t0 + 2_000) });
    // A late, older event (redelivered RUNNING) is ignored.
    await h.publishStatus(jobId, JobStatus.RUNNING, { at: new Date(t0 + 1_000) });
    await h.publishStatus(jobId, JobStatus.REQUESTED, { at: new Date(t0 + 500) });
    await h.seen(jobId, 'complete');
    await eventually(async () => {
      const res = await client
        .infer({
          caller: team,
          modelId: jobId,
          texts: ['Wintermute spoke'],
          schemaJson: json({ entities: ['person'] }),
        })
        .catch(() => null);
      return res && resultsOf(res)[0]
        ? JSON.stringify(resultsOf(res)[0]) === '{"entities":{"person":["Wintermute"]}}'
        : false;
    });
    expect((await h.prisma.trainedModel.findUnique({ where: { jobId } }))?.statusLabel).toBe('complete');
    const listed = (await client.listModels({ caller: team })).models.filter((m) => m.id === jobId);
    expect(listed).toHaveLength(1);
    expect(listed[0]?.ownedBy).toBe('whetstone');
    expect((await client.listModels({ caller: { ...team, teamId: 'team-b' } })).models.map((m) => m.id)).not.toContain(
      jobId,
    );
  });

  it('when the caller has no team, then every call is refused before any work', async () => {
    const err = await rpcError(client.listModels({}));
    expect([err.kind, err.reason]).toEqual(['InvalidArgument', 'VALIDATION_FAILED']);
  });
});
