import { readFileSync } from 'node:fs';
import { datasetFile, eventually, fixtureDataset } from '@whetstone/testing';
import { signUpWithKey, startSystem, type RunningSystem } from './system';
import { apiClient } from './training-helpers';

/**
 * The decoder's journey through `pnpm start`: LoRA fine-tuning on chat rows, held-out metrics (loss, perplexity and
 * the generation F1, precision and recall of its greedy replies), an evaluation of it, generation as JSON or a
 * server-sent stream, and serving behind a project.
 */
describe('fine-tuning, evaluating and serving the decoder, end to end through pnpm start', () => {
  let system: RunningSystem;
  let base: string;
  let key: string;
  const { post, get, until, uploadReady } = apiClient(
    () => base,
    () => key,
  );
  const createJob = async (body: Record<string, unknown>) => {
    const res = await post('/core/training-jobs', body);
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  };
  const schema = { entities: ['person', 'organization', 'location', 'misc'] };

  beforeAll(async () => {
    system = await startSystem();
    base = system.baseUrl;
    ({ key } = await signUpWithKey(base, 'decoder'));
    // An extraction dataset, which a decoder job is not evaluated on.
    await uploadReady(
      { name: 'wikigold', type: 'extraction', format: 'jsonl', filename: 'dev.jsonl' },
      readFileSync(datasetFile('wikigold/dev.jsonl')),
    );
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
  }, 30_000);

  it('fine-tunes the decoder with LoRA on chat rows and generates with it, as JSON or a server-sent stream', async () => {
    const url = (await (
      await post('/core/datasets/upload/url', {
        dataset_name: 'greetings',
        dataset_type: 'generation',
        format: 'jsonl',
        filename: 'chat.jsonl',
      })
    ).json()) as { upload_url: string };
    expect(
      (await fetch(url.upload_url, { method: 'PUT', body: readFileSync(fixtureDataset('chat/greetings.jsonl')) }))
        .status,
    ).toBe(200);
    await post('/core/datasets/upload/process', { dataset_name: 'greetings' });
    await eventually(
      async () => ((await (await get('/core/datasets/greetings/1')).json()) as { status: string }).status === 'ready',
      30_000,
    );
    const decoder = await createJob({
      base_model: 'whetstone-decoder-base',
      datasets: [{ name: 'greetings' }],
      training_type: 'lora',
      nr_epochs: 4,
      learning_rate: 0.01,
    });
    const done = await until(decoder, ['complete', 'failed'], 120_000);
    expect(done.status).toBe('complete');
    const metrics = done.metrics as unknown as Record<string, number>;
    expect(metrics.loss).toBeLessThan(metrics.base_loss!);
    // Beside loss and perplexity, the held-out F1, precision and recall of its greedy replies (SQuAD's token overlap).
    const scoreOf = (m: Record<string, unknown>) => [m.f1, m.precision, m.recall].map(Number);
    expect(metrics).toMatchObject({ perplexity: expect.any(Number), generation_max_tokens: 64 });
    expect(metrics.generation_examples).toBeGreaterThan(0);
    for (const x of scoreOf(metrics)) expect(x >= 0 && x <= 1).toBe(true);
    const decoderLogs = (await (await get(`/v1/training-jobs/${decoder}/logs`)).json()) as {
      logs: { message: string }[];
    };
    expect(decoderLogs.logs.some((l) => /held-out generation F1 \d\.\d{3}/.test(l.message))).toBe(true);
    // An evaluation of the decoder scores the same way (and a dataset that does not fit it is a 422 naming it).
    const started = await post('/core/evaluations', { training_job_id: decoder, dataset_name: 'greetings' });
    expect(started.status).toBe(202);
    const { evaluation_id } = (await started.json()) as { evaluation_id: string };
    const evaluation = await eventually(async () => {
      const e = (await (await get(`/core/evaluations/${evaluation_id}`)).json()) as Record<string, unknown>;
      return e.status === 'complete' || e.status === 'failed' ? e : null;
    }, 60_000);
    expect(evaluation).toMatchObject({ status: 'complete', loss: expect.any(Number), perplexity: expect.any(Number) });
    expect(scoreOf(evaluation)).toEqual(scoreOf(metrics));
    const unfit = await post('/core/evaluations', { training_job_id: decoder, dataset_name: 'wikigold' });
    expect(unfit.status).toBe(422);
    expect(((await unfit.json()) as { errors: { field: string }[] }).errors[0]?.field).toBe('dataset_name');

    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'hi, I am Ada', cache_control: { type: 'ephemeral' } }] },
    ];
    const json = await eventually(async () => {
      const res = await post('/inference', {
        model_id: decoder,
        task: 'generate',
        messages,
        temperature: 0,
        max_tokens: 24,
      });
      return res.status === 200
        ? ((await res.json()) as { result: { text: string }; finish_reason: string; usage: { output_tokens: number } })
        : null;
    }, 20_000);
    expect(json.result.text.length).toBeGreaterThan(0);
    expect(json.usage.output_tokens).toBeLessThanOrEqual(24);
    expect(['stop', 'length']).toContain(json.finish_reason);

    const stream = await post('/inference', {
      model_id: decoder,
      task: 'generate',
      messages,
      temperature: 0,
      max_tokens: 24,
      stream: true,
    });
    expect(stream.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = (await stream.text()).split('\n\n').filter(Boolean);
    expect(events[events.length - 1]).toBe('data: [DONE]');
    expect(events.some((e) => e.includes('"inference_id"'))).toBe(true);

    // Deployed behind a project, the decoder answers messages on the project endpoint.
    const project = (await (await post('/projects', { name: 'greeter' })).json()) as { id: string };
    await post(`/projects/${project.id}/deployments`, { training_job_id: decoder });
    await eventually(
      async () =>
        ((await (await get(`/projects/${project.id}/deployments`)).json()) as { deployments: { status: string }[] })
          .deployments[0]?.status === 'active',
      30_000,
    );
    const viaProject = await post(`/projects/${project.id}/inference`, {
      messages: [{ role: 'user', content: 'hi, I am Bob' }],
      temperature: 0,
      max_tokens: 16,
    });
    expect(viaProject.status).toBe(200);
    expect(((await viaProject.json()) as { result: { text: string } }).result.text.length).toBeGreaterThan(0);

    // The decoder base is training-only; an extraction call on a decoder job says what to do instead.
    expect((await post('/inference', { model_id: 'whetstone-decoder-base', task: 'generate', messages })).status).toBe(
      409,
    );
    expect((await post('/inference', { model_id: decoder, text: 'x', schema })).status).toBe(409);
    expect((await post('/inference', { model_id: decoder, task: 'generate' })).status).toBe(422);
  }, 180_000);
});
