import { readFileSync } from 'node:fs';
import { datasetFile, eventually } from '@whetstone/testing';
import { signUpWithKey, startSystem, type RunningSystem } from './system';
import { apiClient } from './training-helpers';

interface Version {
  dataset_name: string;
  version_number: number;
  status: string;
  type: string;
  report: {
    total_rows: number;
    valid_rows: number;
    issues: { field: string; fatal: boolean }[];
    failure_reason: string;
  };
}

/**
 * Issue 16, part 2, through `pnpm start`: feedback on a project's inferences (confirmations and a correction)
 * becomes a version of the team's `feedback-<project_id>` dataset, listed by GET /core/datasets.
 */
describe('feedback datasets, end to end through pnpm start', () => {
  let system: RunningSystem;
  let base: string;
  let key: string;
  const { post, get, until, uploadReady } = apiClient(
    () => base,
    () => key,
  );
  const json = async <T>(res: Response) => (await res.json()) as T;
  let projectId: string;

  beforeAll(async () => {
    system = await startSystem();
    base = system.baseUrl;
    ({ key } = await signUpWithKey(base, 'feedback'));
    await uploadReady(
      { name: 'wikigold', type: 'extraction', format: 'jsonl', filename: 'dev.jsonl' },
      readFileSync(datasetFile('wikigold/dev.jsonl')),
    );
    const job = await json<{ id: string }>(
      await post('/core/training-jobs', {
        base_model: 'whetstone-extract-base',
        datasets: [{ name: 'wikigold' }],
        training_type: 'full',
        nr_epochs: 1,
      }),
    );
    expect((await until(job.id, ['complete', 'failed'], 300_000)).status).toBe('complete');
    projectId = (await json<{ id: string }>(await post('/projects', { name: 'with-feedback' }))).id;
    expect((await post(`/projects/${projectId}/deployments`, { training_job_id: job.id })).status).toBe(201);
    await eventually(
      async () =>
        (await json<{ deployments: { status: string }[] }>(await get(`/projects/${projectId}/deployments`)))
          .deployments[0]?.status === 'active',
      120_000,
    );
  }, 600_000);

  afterAll(async () => {
    await system?.stop();
  }, 30_000);

  it('when ten verdicts are given on project inferences, then GET /core/datasets lists feedback-<project_id> with a ready version of their rows', async () => {
    const name = `feedback-${projectId}`;
    for (let i = 0; i < 10; i++) {
      const text = `Alan Turing met Grace Hopper in Boston on day ${i} .`;
      const res = await post(`/projects/${projectId}/inference`, { text });
      expect(res.status).toBe(200);
      const { inference_id } = await json<{ inference_id: string }>(res);
      const verdict =
        i === 0
          ? { verdict: 'incorrect', corrected_output: { entities: { person: ['Alan Turing', 'Grace Hopper'] } } }
          : { verdict: 'correct' };
      expect((await post(`/inferences/${inference_id}/feedback`, verdict)).status).toBe(200);
      // Nine changed verdicts are below the threshold: no version yet.
      if (i === 8) expect((await get(`/core/datasets/${name}`)).status).toBe(404);
    }

    const listed = await eventually(async () => {
      const { datasets } = await json<{ datasets: { dataset_name: string; status: string; version_number: string }[] }>(
        await get('/core/datasets'),
      );
      const found = datasets.find((d) => d.dataset_name === name);
      return found?.status === 'ready' || found?.status === 'failed' ? found : null;
    }, 60_000);
    expect(listed).toMatchObject({ dataset_name: name, status: 'ready', version_number: '1' }); // a string, as the spec says
    const version = await json<Version>(await get(`/core/datasets/${name}/1`));
    expect(version).toMatchObject({ type: 'extraction', status: 'ready' });
    expect(version.report).toMatchObject({ total_rows: 10, valid_rows: 10, failure_reason: null });
    expect(version.report.issues).toEqual([]);
  });
});
