import { fromBinary } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import {
  DeploymentActivatedSchema,
  DeploymentEndedSchema,
  DeploymentStatus,
  InferenceTask,
  type InferenceRouterService,
} from '@whetstone/proto/inference/v1';
import { JobStatus } from '@whetstone/proto/training/v1';
import { eventually } from '@whetstone/testing';
import { RESTRICTED_JOB, json, resultsOf, rpcError, startHarness, team, type Harness } from './harness';

describe('inference-router with a model-server over gRPC', () => {
  let h: Harness;
  let client: Client<typeof InferenceRouterService>;
  let addJob: Harness['addJob'];
  let publishStatus: Harness['publishStatus'];
  let seen: Harness['seen'];

  beforeAll(async () => {
    h = await startHarness();
    ({ client, addJob, publishStatus, seen } = h);
  }, 60_000);

  afterAll(() => h?.close());

  /** The deployments.v1 events in the outbox, oldest first, decoded. */
  async function deploymentEvents() {
    const rows = await h.pool.pool.query<{ type: string; payload: Buffer }>(
      `SELECT type, payload FROM "${h.schema.name}".outbox_events WHERE topic = 'deployments.v1' ORDER BY id`,
    );
    return rows.rows.map((r) => {
      const type = r.type.split('.').pop()!;
      const schema = type === 'DeploymentEnded' ? DeploymentEndedSchema : DeploymentActivatedSchema;
      return {
        type,
        ...(fromBinary(schema, r.payload) as {
          trainingJobId: string;
          projectId: string;
          teamId: string;
          reason?: string;
        }),
      };
    });
  }

  it('runs the zero-shot base, checks spendability first, and has UsageRecorded and InferenceCompleted in the outbox when it answers', async () => {
    const res = await client.infer({
      caller: team,
      modelId: 'whetstone-extract-base',
      texts: ['Ada Lovelace lived in London.'],
      schemaJson: json({ entities: ['person', 'city'] }),
      task: InferenceTask.NER,
    });
    expect(resultsOf(res)[0]).toEqual({ entities: { person: ['Ada Lovelace'], city: ['London'] } });
    expect(res.usage?.costMicroCredits).toBe(1_001n);
    expect(h.spend.length).toBeGreaterThan(0);
    const rows = await h.pool.pool.query(`SELECT topic, key FROM "${h.schema.name}".outbox_events ORDER BY id`);
    expect(rows.rows).toEqual(
      expect.arrayContaining([
        { topic: 'billing.usage.v1', key: team.teamId },
        { topic: 'inferences.v1', key: res.inferenceId },
      ]),
    );
  });

  it('spreads base-model calls over both model-servers, and places a trained model on one of them', async () => {
    for (let i = 0; i < 4; i++)
      await client.infer({
        caller: team,
        modelId: 'whetstone-extract-base',
        texts: ['Ada Lovelace'],
        schemaJson: json({ entities: ['person'] }),
      });
    expect(h.servings.map((sv) => sv.state('whetstone-extract-base').status)).toEqual(['ready', 'ready']);
    const jobId = await addJob({ person: ['Quorra'] });
    await eventually(() =>
      client
        .infer({ caller: team, modelId: jobId, texts: ['Quorra'], schemaJson: json({ entities: ['person'] }) })
        .catch(() => null),
    );
    for (let i = 0; i < 4; i++)
      await client.infer({
        caller: team,
        modelId: jobId,
        texts: ['Quorra'],
        schemaJson: json({ entities: ['person'] }),
      });
    expect(h.servings.filter((sv) => sv.state(jobId).status === 'ready')).toHaveLength(1);
  });

  it('names what is wrong: empty schema, unknown model, training-only base, another team’s job, a restricted model (451), a job still running', async () => {
    expect(
      (
        await rpcError(
          client.infer({ caller: team, modelId: 'whetstone-extract-base', texts: ['x'], schemaJson: json({}) }),
        )
      ).reason,
    ).toBe('VALIDATION_FAILED');
    expect(
      (
        await rpcError(
          client.infer({ caller: team, modelId: 'nope', texts: ['x'], schemaJson: json({ entities: ['a'] }) }),
        )
      ).kind,
    ).toBe('NotFound');
    expect(
      (
        await rpcError(
          client.infer({
            caller: team,
            modelId: 'whetstone-decoder-base',
            texts: ['x'],
            schemaJson: json({ entities: ['a'] }),
          }),
        )
      ).kind,
    ).toBe('FailedPrecondition');
    const foreign = await addJob({ person: ['Ada'] }, JobStatus.COMPLETE, 'team-b');
    expect(
      (
        await rpcError(
          client.infer({ caller: team, modelId: foreign, texts: ['x'], schemaJson: json({ entities: ['a'] }) }),
        )
      ).kind,
    ).toBe('NotFound');
    await addJob({ person: ['Ada'] }, JobStatus.COMPLETE, team.teamId, RESTRICTED_JOB);
    const restricted = await rpcError(
      client.infer({ caller: team, modelId: RESTRICTED_JOB, texts: ['x'], schemaJson: json({ entities: ['a'] }) }),
    );
    expect(restricted).toMatchObject({ kind: 'PermissionDenied', reason: 'MODEL_RESTRICTED' });
    const running = await addJob({ person: ['Ada'] }, JobStatus.RUNNING);
    expect(
      (
        await rpcError(
          client.infer({ caller: team, modelId: running, texts: ['x'], schemaJson: json({ entities: ['a'] }) }),
        )
      ).kind,
    ).toBe('FailedPrecondition');
  });

  it('answers 425 MODEL_WARMING while a trained model loads, then serves its predictions', async () => {
    let open!: () => void;
    h.setGate(new Promise((r) => (open = r)));
    const jobId = await addJob({ person: ['Zorblax'] });
    const warming = await rpcError(
      client.infer({
        caller: team,
        modelId: jobId,
        texts: ['Zorblax waved'],
        schemaJson: json({ entities: ['person'] }),
      }),
    );
    expect(warming).toMatchObject({ kind: 'TooEarly', reason: 'MODEL_WARMING' });
    expect(warming.retryAfterSeconds).toBeGreaterThan(0);
    open();
    h.setGate(Promise.resolve());
    const res = await eventually(() =>
      client
        .infer({ caller: team, modelId: jobId, texts: ['Zorblax waved'], schemaJson: json({ entities: ['person'] }) })
        .catch(() => null),
    );
    // The trained model knows a name the base model does not.
    expect(resultsOf(res)[0]).toEqual({ entities: { person: ['Zorblax'] } });
  });

  it('deploys, replaces the active deployment with no failed call in between, and releases a deleted job', async () => {
    const LOADED_MACHINE_WAIT_MS = 30_000;
    const project = (await client.createProject({ caller: team, name: 'tickets' })).project!;
    expect((await rpcError(client.createProject({ caller: team, name: 'tickets' }))).kind).toBe('AlreadyExists');
    expect((await rpcError(client.infer({ caller: team, projectId: project.id, texts: ['x'] }))).kind).toBe(
      'FailedPrecondition',
    );

    const first = await addJob({ thing: ['alpha'] });
    const d1 = (await client.createDeployment({ caller: team, projectId: project.id, trainingJobId: first }))
      .deployment!;
    expect(d1.status).toBe(DeploymentStatus.DEPLOYING);
    await eventually(
      async () =>
        (await client.listDeployments({ caller: team, projectId: project.id })).deployments[0]?.status ===
        DeploymentStatus.ACTIVE,
    );
    const call = () => client.infer({ caller: team, projectId: project.id, texts: ['alpha and beta'] });
    expect(resultsOf(await call())[0]).toEqual({ entities: { thing: ['alpha'] } });

    // Redeploy under load: every call succeeds, and the answers switch to the new model.
    const second = await addJob({ thing: ['beta'] });
    let failures = 0;
    let calls = 0;
    let stop = false;
    const load = (async () => {
      // Keeps calling until the switch was seen and at least 30 calls were made.
      while (!stop || calls < 30) {
        calls++;
        await call().catch(() => failures++);
      }
    })();
    await client.createDeployment({ caller: team, projectId: project.id, trainingJobId: second });
    await eventually(
      async () => (resultsOf(await call())[0] as { entities: { thing: string[] } }).entities.thing[0] === 'beta',
      LOADED_MACHINE_WAIT_MS,
    );
    stop = true;
    await load;
    expect(failures).toBe(0);
    const history = (await client.listDeployments({ caller: team, projectId: project.id })).deployments;
    expect(history.map((d) => [d.trainingJobId, d.status])).toEqual([
      [second, DeploymentStatus.ACTIVE],
      [first, DeploymentStatus.REPLACED],
    ]);
    // Each activation, and the end of the deployment it replaced (its job may now serve nowhere).
    const events = await deploymentEvents();
    expect(events.map((e) => e.type)).toEqual(['DeploymentActivated', 'DeploymentEnded', 'DeploymentActivated']);
    expect(events[1]).toMatchObject({
      trainingJobId: first,
      projectId: project.id,
      teamId: team.teamId,
      reason: 'replaced',
    });

    // A deleted job (JobDeleted on the log) stops serving at once, and is no longer callable by id.
    await h.publishDeleted(second);
    // Waits end as soon as the state is reached; the bound is for a loaded machine (the event is relayed and consumed).
    await eventually(async () => (await rpcError(call())).kind === 'FailedPrecondition', LOADED_MACHINE_WAIT_MS);
    const released = (await client.listDeployments({ caller: team, projectId: project.id })).deployments[0];
    expect([released?.status, released?.reason]).toEqual([DeploymentStatus.RELEASED, 'the training job was deleted']);
    const byId = await rpcError(
      client.infer({ caller: team, modelId: second, texts: ['beta'], schemaJson: json({ entities: ['thing'] }) }),
    );
    expect(byId.kind).toBe('NotFound');
    // A replayed status event does not bring a deleted job back.
    await publishStatus(second, JobStatus.COMPLETE, { key: `jobs/${second}/bundle.json` });
    await publishStatus(first, JobStatus.DEPLOYED, { key: `jobs/${first}/bundle.json` });
    await seen(first, 'deployed');
    expect((await h.prisma.trainedModel.findUnique({ where: { jobId: second } }))?.deletedAt).not.toBeNull();
  }, 120_000);

  it('fails a deployment whose bundle cannot load, with the reason', async () => {
    const project = (await client.createProject({ caller: team, name: 'broken' })).project!;
    const jobId = await addJob('not json');
    await client.createDeployment({ caller: team, projectId: project.id, trainingJobId: jobId });
    const failed = await eventually(async () => {
      const d = (await client.listDeployments({ caller: team, projectId: project.id })).deployments[0];
      return d?.status === DeploymentStatus.FAILED ? d : null;
    });
    // The reason is public: a stable sentence, never the parser's raw error text.
    expect(failed.reason).toBe('could not load the model bundle');
  });

  it('when a project serving a job is deleted, then DeploymentEnded says its job no longer serves it', async () => {
    const project = (await client.createProject({ caller: team, name: 'ends' })).project!;
    const jobId = await addJob({ thing: ['gamma'] });
    await client.createDeployment({ caller: team, projectId: project.id, trainingJobId: jobId });
    await eventually(
      async () =>
        (await client.listDeployments({ caller: team, projectId: project.id })).deployments[0]?.status ===
        DeploymentStatus.ACTIVE,
    );
    await client.deleteProject({ caller: team, projectId: project.id });
    const ended = (await deploymentEvents()).filter((e) => e.type === 'DeploymentEnded' && e.projectId === project.id);
    expect(ended).toEqual([
      expect.objectContaining({ trainingJobId: jobId, teamId: team.teamId, reason: 'project_deleted' }),
    ]);
  });

  it('deletes a project so its endpoint stops at once, and hides it from other teams', async () => {
    const project = (await client.createProject({ caller: team, name: 'short-lived' })).project!;
    expect(
      (await rpcError(client.deleteProject({ caller: { ...team, teamId: 'team-b' }, projectId: project.id }))).kind,
    ).toBe('NotFound');
    await client.deleteProject({ caller: team, projectId: project.id });
    expect((await rpcError(client.infer({ caller: team, projectId: project.id, texts: ['x'] }))).kind).toBe('NotFound');
  });
});
