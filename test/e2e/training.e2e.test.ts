import { readFileSync } from 'node:fs';
import { datasetFile, eventually } from '@whetstone/testing';
import { signUpWithKey, startSystem, type RunningSystem } from './system';
import { apiClient, fakeHub } from './training-helpers';

/**
 * Issue 5's and issue 6's trained-model journeys, tried as a new user would
 * through `pnpm start`: upload, train with streamed logs, checkpoints,
 * downloads, evaluation, serving the job, projects and redeploys, stop,
 * delete, and a trainer killed mid-job.
 */
describe('training and serving trained models, end to end through pnpm start', () => {
  let system: RunningSystem;
  let base: string;
  let key: string;
  const { post, get, del, job, until } = apiClient(
    () => base,
    () => key,
  );
  const createJob = async (body: Record<string, unknown>) => {
    const res = await post('/core/training-jobs', {
      base_model: 'whetstone-extract-base',
      datasets: [{ name: 'wikigold' }],
      training_type: 'full',
      nr_epochs: 2,
      ...body,
    });
    expect(res.status).toBe(200);
    const created = (await res.json()) as { id: string; status: string };
    expect(created.status).toBe('requested');
    return created.id;
  };
  const text = 'Zorblax Quint joined the Ravenholt Society in Brindlemoor last May.';
  const schema = { entities: ['person', 'organization', 'location', 'misc'] };

  const hub = fakeHub();
  const pushed = hub.pushed;

  beforeAll(async () => {
    const hubUrl = await hub.start();
    system = await startSystem({
      env: { TRAINER_LEASE_SECONDS: '5', HUB_BASE_URL: hubUrl, HUB_ALLOW_PRIVATE_NETWORKS: 'true' },
    });
    base = system.baseUrl;
    ({ key } = await signUpWithKey(base, 'training'));
    const url = (await (
      await post('/core/datasets/upload/url', {
        dataset_name: 'wikigold',
        dataset_type: 'extraction',
        format: 'jsonl',
        filename: 'train.jsonl',
      })
    ).json()) as { upload_url: string };
    expect(
      (await fetch(url.upload_url, { method: 'PUT', body: readFileSync(datasetFile('wikigold/train.jsonl')) })).status,
    ).toBe(200);
    expect((await post('/core/datasets/upload/process', { dataset_name: 'wikigold' })).status).toBe(202);
    await eventually(
      async () => ((await (await get('/core/datasets/wikigold/1')).json()) as { status: string }).status === 'ready',
      30_000,
    );
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
    await hub.close();
  }, 30_000);

  let first: string;

  it('validates jobs: 422 without base_model, 422 for a decoder with full, 404 for an unknown dataset', async () => {
    const missing = await post('/core/training-jobs', { datasets: [{ name: 'wikigold' }] });
    expect(missing.status).toBe(422);
    expect(((await missing.json()) as { errors: { field: string }[] }).errors[0]!.field).toBe('base_model');
    const decoderFull = await post('/core/training-jobs', {
      base_model: 'whetstone-decoder-base',
      datasets: [{ name: 'wikigold' }],
      training_type: 'full',
    });
    expect(decoderFull.status).toBe(422);
    expect(
      (await post('/core/training-jobs', { base_model: 'whetstone-extract-base', datasets: [{ name: 'nope' }] }))
        .status,
    ).toBe(404);
    expect(
      (
        await post('/core/training-jobs', {
          base_model: 'whetstone-extract-base',
          datasets: [{ name: 'wikigold' }],
          nr_epochs: 500,
        })
      ).status,
    ).toBe(422);
  });

  it('trains: logs stream as server-sent events with progress, and the job completes with f1, precision and recall', async () => {
    first = await createJob({});
    const stream = await get(`/core/training-jobs/${first}/logs`);
    expect(stream.headers.get('content-type')).toMatch(/text\/event-stream/);
    const body = await stream.text();
    expect(body).toMatch(/event: log/);
    expect(body).toMatch(/step \d+\/\d+ epoch \d+ loss [\d.]+ \d+ rows\/s ETA \d+s/);
    expect(body).toMatch(/event: end\ndata: \{"job_id":"[^"]+","status":"complete"\}/);
    const done = await job(first);
    expect(done.status).toBe('complete');
    expect(done.metrics!.f1).toBeGreaterThan(0.5);
    expect(Object.keys(done.metrics!.per_label)).toEqual(
      expect.arrayContaining(['person', 'location', 'organization', 'misc']),
    );

    const snapshot = (await (await get(`/v1/training-jobs/${first}/logs`)).json()) as {
      job_id: string;
      logs: { level: string; message: string; source: string }[];
      total_logs: number;
    };
    expect(snapshot.total_logs).toBe(snapshot.logs.length);
    expect(snapshot.logs.some((l) => l.source.startsWith('trainer/'))).toBe(true);

    const listed = (await (await get('/v1/training-jobs?status=complete&limit=5')).json()) as {
      jobs: { id: string }[];
    };
    expect(listed.jobs.map((j) => j.id)).toContain(first);
    expect((await get('/v1/training-jobs?limit=0')).status).toBe(400);
    const trained = (await (await get('/core/trained-models')).json()) as { models: { model_id: string }[] };
    expect(trained.models.map((m) => m.model_id)).toContain(first);
  }, 240_000);

  it('lists both checkpoint kinds and downloads the model and a checkpoint through presigned URLs', async () => {
    const res = (await (await get(`/v1/training/jobs/${first}/checkpoints`)).json()) as {
      success: boolean;
      run_id: string;
      count: number;
      checkpoints: { checkpoint_id: string; checkpoint_type: string; tinker_path: string; size_bytes: number }[];
    };
    expect(res).toMatchObject({ success: true, run_id: first, count: 4 });
    expect(new Set(res.checkpoints.map((c) => c.checkpoint_type))).toEqual(new Set(['training', 'sampler']));
    expect(res.checkpoints[0]!.tinker_path).toBe(`whetstone://${first}/${res.checkpoints[0]!.checkpoint_id}`);

    const download = (await (await get(`/v1/training-jobs/${first}/download`)).json()) as {
      success: boolean;
      download_url: string;
      expires_in_seconds: number;
      file_name: string;
    };
    expect(download).toMatchObject({ success: true, expires_in_seconds: 3600 });
    const bytes = await fetch(download.download_url);
    expect(bytes.status).toBe(200);
    expect((await bytes.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    expect(system.logs()).not.toContain(new URL(download.download_url).searchParams.get('sig')!);

    const training = res.checkpoints.find((c) => c.checkpoint_type === 'training')! as {
      checkpoint_id: string;
      checkpoint_uuid?: string;
    };
    const [kind, name] = training.checkpoint_id.split('/');
    const one = (await (await get(`/v1/training/jobs/${first}/checkpoints/${kind}/${name}/download`)).json()) as {
      download_url: string;
    };
    expect((await fetch(one.download_url)).status).toBe(200);

    // A checkpoint UUID as base_model: training continues from that state.
    const continued = await createJob({ base_model: training.checkpoint_uuid, nr_epochs: 1 });
    const done = await until(continued, ['complete', 'failed']);
    expect(done.status).toBe('complete');
    const logs = (await (await get(`/v1/training-jobs/${continued}/logs`)).json()) as { logs: { message: string }[] };
    expect(logs.logs.some((l) => /continuing from/.test(l.message))).toBe(true);
    expect(logs.logs.some((l) => /resuming from/.test(l.message))).toBe(true);
  }, 200_000);

  it('pushes the model to the hub with the token as a bearer header, and never logs the token', async () => {
    const token = 'hf_e2e_secret_token_0123456789';
    const res = await post(`/v1/training-jobs/${first}/push-to-hub`, {
      repo_id: 'acme/wikigold-ner',
      hub_token: token,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      success: true,
      repo_id: 'acme/wikigold-ner',
      commit: 'c0ffee',
      files: ['model.whetstone-bundle', 'whetstone_manifest.json', 'README.md'],
    });
    expect(pushed.map((p) => p.path)).toEqual(['/api/repos/create', '/api/models/acme/wikigold-ner/commit/main']);
    expect(pushed.every((p) => p.auth === `Bearer ${token}`)).toBe(true);
    expect(system.logs()).not.toContain(token);
    expect(
      (await post(`/v1/training-jobs/${first}/push-to-hub`, { repo_id: 'not a repo', hub_token: token })).status,
    ).toBe(422);
    // A token that is too short says so; one left out is required.
    const short = await post(`/v1/training-jobs/${first}/push-to-hub`, { repo_id: 'acme/x', hub_token: 'hf_1234' });
    expect(short.status).toBe(422);
    expect(((await short.json()) as { errors: unknown[] }).errors).toEqual([
      { field: 'hub_token', message: 'must be at least 8 characters', code: 'too_small' },
    ]);
    const missing = await post(`/v1/training-jobs/${first}/push-to-hub`, { repo_id: 'acme/x' });
    expect(((await missing.json()) as { errors: unknown[] }).errors).toEqual([
      { field: 'hub_token', message: 'is required', code: 'invalid_type' },
    ]);
  });

  it('evaluates the job on the held-out split', async () => {
    const started = await post('/core/evaluations', { training_job_id: first, dataset_name: 'wikigold' });
    expect(started.status).toBe(202);
    const { evaluation_id } = (await started.json()) as { evaluation_id: string };
    const evaluation = await eventually(async () => {
      const e = (await (await get(`/core/evaluations/${evaluation_id}`)).json()) as {
        status: string;
        f1: number;
        precision: number;
        recall: number;
      };
      return e.status === 'complete' ? e : null;
    }, 30_000);
    expect(evaluation.f1).toBeGreaterThan(0.5);
    expect((await get('/core/evaluations/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('serves the trained job: 425 while it warms, then predictions that differ from the base model', async () => {
    const warming = await post('/inference', { model_id: first, text, schema });
    expect(warming.status).toBe(425);
    expect(Number(warming.headers.get('retry-after'))).toBeGreaterThan(0);
    // With confidences: two epochs may leave this sentence's spans as the
    // base found them, but never the scores the trained encoder gives them.
    const scored = { text, schema, include_confidence: true };
    const trained = await eventually(async () => {
      const res = await post('/inference', { model_id: first, ...scored });
      return res.status === 200 ? ((await res.json()) as { result: unknown }).result : null;
    }, 20_000);
    const baseResult = (
      (await (await post('/inference', { model_id: 'whetstone-extract-base', ...scored })).json()) as {
        result: unknown;
      }
    ).result;
    expect(trained).not.toEqual(baseResult);

    const other = await signUpWithKey(base, 'other');
    expect((await post('/inference', { model_id: first, text, schema }, other.key)).status).toBe(404);
    expect((await get(`/core/training-jobs/${first}`, other.key)).status).toBe(404);
  }, 40_000);

  it('deploys to a project, marks the job deployed, and redeploys another job with no failed call', async () => {
    const project = (await (await post('/projects', { name: 'ner' })).json()) as { id: string };
    const deployment = (await (
      await post(`/projects/${project.id}/deployments`, { training_job_id: first })
    ).json()) as { status: string };
    expect(['deploying', 'active']).toContain(deployment.status);
    await eventually(
      async () =>
        ((await (await get(`/projects/${project.id}/deployments`)).json()) as { deployments: { status: string }[] })
          .deployments[0]?.status === 'active',
      20_000,
    );
    const call = () =>
      post(`/projects/${project.id}/inference`, { text: 'Ada Lovelace met Charles Babbage in London.' });
    expect((await call()).status).toBe(200);
    await until(first, ['deployed'], 10_000);
    const byJob = (await (await get(`/v1/training-jobs/${first}/deployments`)).json()) as {
      count: number;
      deployments: { project_id: string; status: string }[];
    };
    expect(byJob.deployments).toEqual([expect.objectContaining({ project_id: project.id, status: 'active' })]);
    // The same job serves a second project too.
    const spare = (await (await post('/projects', { name: 'ner-spare' })).json()) as { id: string };
    expect((await post(`/projects/${spare.id}/deployments`, { training_job_id: first })).status).toBe(201);
    await eventually(
      async () =>
        ((await (await get(`/projects/${spare.id}/deployments`)).json()) as { deployments: { status: string }[] })
          .deployments[0]?.status === 'active',
      20_000,
    );

    const second = await createJob({ training_type: 'lora', nr_epochs: 2 });
    await until(second, ['complete']);
    let failures = 0;
    let calls = 0;
    let switched = false;
    const load = (async () => {
      while (!switched || calls < 20) {
        calls++;
        const res = await call();
        if (res.status !== 200) failures++;
        else if (((await res.json()) as { model: string }).model === second) switched = true;
      }
    })();
    expect((await post(`/projects/${project.id}/deployments`, { training_job_id: second })).status).toBe(201);
    await load;
    expect(failures).toBe(0);
    const history = (
      (await (await get(`/projects/${project.id}/deployments`)).json()) as {
        deployments: { training_job_id: string; status: string }[];
      }
    ).deployments;
    expect(history.map((d) => [d.training_job_id, d.status])).toEqual([
      [second, 'active'],
      [first, 'replaced'],
    ]);

    // Replaced in one project, the first job is still deployed while the spare project serves it; once that project
    // is deleted it is deployed nowhere and complete again, in the job's read, the lists and their status filter.
    await until(second, ['deployed'], 10_000);
    const ids = async (status: string) =>
      ((await (await get(`/core/training-jobs?status=${status}`)).json()) as { jobs: { id: string }[] }).jobs.map(
        (j) => j.id,
      );
    expect((await job(first)).status).toBe('deployed');
    expect(await ids('deployed')).toEqual(expect.arrayContaining([first, second]));
    expect((await del(`/projects/${spare.id}`)).status).toBe(204);
    const again = await until(first, ['complete'], 10_000);
    expect(again.metrics).toMatchObject({ f1: expect.any(Number) });
    expect(await ids('deployed')).toEqual([second]);
    expect(await ids('complete')).toContain(first);
    const listed = (await (await get('/v1/training-jobs')).json()) as { jobs: { id: string; status: string }[] };
    expect(listed.jobs.find((j) => j.id === first)?.status).toBe('complete');
    const byFirst = (await (await get(`/v1/training-jobs/${first}/deployments`)).json()) as {
      deployments: { project_id: string; status: string }[];
    };
    expect(byFirst.deployments).toEqual([expect.objectContaining({ project_id: project.id, status: 'replaced' })]);

    // Deleting the deployed job releases it: the project endpoint stops serving it.
    const deleted = await del(`/core/training-jobs/${second}`);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({ success: true });
    expect((await get(`/core/training-jobs/${second}`)).status).toBe(404);
    expect((await get(`/v1/training-jobs/${second}/download`)).status).toBe(404);
    await eventually(async () => (await call()).status === 409, 10_000);
  }, 240_000);

  it('stops a running job, and a job whose trainer is killed mid-run still completes', async () => {
    const long = await createJob({ nr_epochs: 40 });
    await until(long, ['running']);
    const stopped = await post(`/core/training-jobs/${long}/stop`, {});
    expect(stopped.status).toBe(200);
    expect((await job(long)).status).toBe('cancelled');
    expect((await post(`/core/training-jobs/${long}/stop`, {})).status).toBe(409);

    const survivor = await createJob({ nr_epochs: 4 });
    await eventually(
      async () =>
        ((await (await get(`/core/training-jobs/${survivor}/checkpoints`)).json()) as { count: number }).count >= 2,
      240_000,
      100,
    );
    const [pid] = system.pids('trainer');
    expect(pid).toBeGreaterThan(0);
    process.kill(pid!, 'SIGKILL');
    const done = await until(survivor, ['complete', 'failed'], 300_000);
    expect(done.status).toBe('complete');
    const logs = (await (await get(`/v1/training-jobs/${survivor}/logs`)).json()) as { logs: { message: string }[] };
    expect(logs.logs.some((l) => /lease expired/.test(l.message))).toBe(true);
    expect(logs.logs.some((l) => /resuming from/.test(l.message))).toBe(true);
  }, 600_000);
});
