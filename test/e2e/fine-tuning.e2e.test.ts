import { readFileSync } from 'node:fs';
import OpenAI, { toFile } from 'openai';
import { eventually, fixtureDataset } from '@whetstone/testing';
import { apiClient } from './training-helpers';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

/**
 * OpenAI's fine-tuning API through the `openai` client against the whole system (`pnpm start`'s processes): a
 * chat file uploaded with purpose `fine-tune` trains a LoRA decoder whose `fine_tuned_model` answers chat
 * completions; the job's events and checkpoints read back, a checkpoint continues into a new job, and the errors
 * a client can cause name the parameter (and the file's line) in OpenAI's envelope.
 */
describe('fine-tuning jobs (openai client), end to end', () => {
  let system: RunningSystem;
  let openai: OpenAI;
  let key = '';
  const api = apiClient(
    () => system.baseUrl,
    () => key,
  );
  const greetings = readFileSync(fixtureDataset('chat/greetings.jsonl'));
  const upload = async (content: string | Buffer, purpose: 'fine-tune' | 'batch' = 'fine-tune') =>
    openai.files.create({ file: await toFile(Buffer.from(content), 'chat.jsonl'), purpose });
  /** The error the client throws, as OpenAI's envelope gives it. */
  const failure = async (call: Promise<unknown>) => {
    const err = (await call.catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.APIError);
    return { status: err.status, param: err.param, message: err.message, type: err.type };
  };
  const datasetNames = async () =>
    ((await (await api.get('/core/datasets')).json()) as { datasets: { dataset_name: string }[] }).datasets.map(
      (d) => d.dataset_name,
    );

  let job: OpenAI.FineTuning.FineTuningJob;

  beforeAll(async () => {
    system = await startSystem();
    ({ key } = await signUpWithKey(system.baseUrl, 'fine-tuning'));
    openai = new OpenAI({ apiKey: key, baseURL: `${system.baseUrl}/v1`, maxRetries: 0 });
    const file = await upload(greetings);
    job = await openai.fineTuning.jobs.create({
      model: 'whetstone-decoder-base',
      training_file: file.id,
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2, learning_rate_multiplier: 10 } } },
      suffix: 'greeter',
      seed: 42,
      metadata: { owner: 'e2e' },
    });
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
  }, 60_000);

  it('when a chat file is fine-tuned on, then the job runs to succeeded and its model answers chat completions', async () => {
    expect(job).toMatchObject({
      object: 'fine_tuning.job',
      status: 'queued',
      model: 'whetstone-decoder-base',
      fine_tuned_model: null,
      seed: 42,
      user_provided_suffix: 'greeter',
      metadata: { owner: 'e2e' },
      validation_file: null,
      hyperparameters: { n_epochs: 2, batch_size: 'auto', learning_rate_multiplier: 10 },
      method: { type: 'supervised' },
      error: null,
    });
    expect(job.id).toMatch(/^ftjob-/);
    const done = await eventually(async () => {
      const now = await openai.fineTuning.jobs.retrieve(job.id);
      return ['succeeded', 'failed', 'cancelled'].includes(now.status) && now;
    }, 240_000);
    expect(done).toMatchObject({ status: 'succeeded', error: null });
    expect(done.finished_at).toBeGreaterThanOrEqual(done.created_at);
    expect(done.trained_tokens).toBeGreaterThan(0);
    expect(Number.isInteger(done.trained_tokens)).toBe(true);
    expect(typeof done.fine_tuned_model).toBe('string');

    const reply = await openai.chat.completions.create({
      model: done.fine_tuned_model!,
      messages: [{ role: 'user', content: 'hi, I am Ada' }],
      max_tokens: 12,
      temperature: 0,
    });
    expect(reply.choices[0]!.message.content).toEqual(expect.any(String));
    expect(reply.model).toBe(done.fine_tuned_model);
    // The same job through the core API: trained on the file, its held-out loss is below the base model's.
    const core = (await (await api.get(`/core/training-jobs/${done.fine_tuned_model}`)).json()) as {
      metrics: { loss: number; base_loss: number };
      fine_tuning: { suffix: string };
      datasets: { name: string; size: number }[];
    };
    expect(core.metrics.loss).toBeLessThan(core.metrics.base_loss);
    expect(core.fine_tuning).toMatchObject({ suffix: 'greeter', metadata: { owner: 'e2e' } });
    expect(core.datasets[0]).toMatchObject({ name: expect.stringMatching(/^fine-tune-/), size: 30 });

    // Its results file: the progress lines' steps and losses as OpenAI's CSV, kept with the job.
    expect(done.result_files).toHaveLength(1);
    const [resultsId] = done.result_files;
    expect(await openai.files.retrieve(resultsId!)).toMatchObject({
      id: resultsId,
      object: 'file',
      purpose: 'fine-tune-results',
      filename: 'step_metrics.csv',
    });
    const csv = (await (await openai.files.content(resultsId!)).text()).trim().split('\n');
    expect(csv[0]).toBe('step,train_loss,train_accuracy,valid_loss,valid_mean_token_accuracy');
    expect(csv.length).toBeGreaterThan(1);
    // The last step ends an epoch, so its row has every figure: train loss and token accuracy, held-out ones.
    const last = csv.at(-1)!.split(',').map(Number);
    expect(last[0]).toBeGreaterThan(0);
    expect(last.every(Number.isFinite)).toBe(true);
    expect(last[2]).toBeGreaterThan(0);
    expect(last[2]).toBeLessThanOrEqual(1);
    expect(await failure(openai.files.delete(resultsId!))).toMatchObject({ status: 409 });
  }, 300_000);

  it('when its events and checkpoints are listed, then they page newest first and a checkpoint continues training', async () => {
    const events = await openai.fineTuning.jobs.listEvents(job.id, { limit: 100 });
    expect(events.data.length).toBeGreaterThan(2);
    expect(events.data[0]).toMatchObject({ object: 'fine_tuning.job.event', type: 'message', data: {} });
    expect(events.data.at(-1)!.message).toMatch(/job requested/);
    // Progress lines are metrics events with their figures as numbers; the newest is the last step's.
    const metrics = events.data.filter((e) => e.type === 'metrics');
    expect(metrics.length).toBeGreaterThan(0);
    const last = metrics[0]!.data as Record<string, number>;
    expect(last.step).toBe(last.total_steps);
    expect(last.epoch).toBeGreaterThanOrEqual(1);
    expect(Number.isFinite(last.train_loss)).toBe(true);
    // A decoder's step has its token accuracy; an epoch's end the held-out figures (over every held-out row).
    expect(last).toMatchObject({
      train_mean_token_accuracy: expect.any(Number),
      valid_loss: expect.any(Number),
      valid_mean_token_accuracy: expect.any(Number),
    });
    expect(last.full_valid_loss).toBe(last.valid_loss);
    expect(last.full_valid_mean_token_accuracy).toBe(last.valid_mean_token_accuracy);
    // Two epochs: two lines with held-out figures.
    expect(metrics.filter((e) => 'valid_loss' in (e.data as object))).toHaveLength(2);
    expect(metrics[0]!.message).toContain(`step ${last.step}/${last.total_steps}`);
    const firstTwo = await openai.fineTuning.jobs.listEvents(job.id, { limit: 2 });
    const next = await openai.fineTuning.jobs.listEvents(job.id, { limit: 2, after: firstTwo.data[1]!.id });
    expect([...firstTwo.data, ...next.data].map((e) => e.id)).toEqual(events.data.slice(0, 4).map((e) => e.id));

    const checkpoints = await openai.fineTuning.jobs.checkpoints.list(job.id);
    expect(checkpoints.data.length).toBeGreaterThan(0);
    const [newest] = checkpoints.data;
    expect(newest).toMatchObject({ object: 'fine_tuning.job.checkpoint', fine_tuning_job_id: job.id });
    // An epoch's checkpoint carries the figures of its step's progress line.
    expect(newest!.metrics).toEqual({
      step: newest!.step_number,
      train_loss: last.train_loss,
      train_mean_token_accuracy: last.train_mean_token_accuracy,
      valid_loss: last.valid_loss,
      valid_mean_token_accuracy: last.valid_mean_token_accuracy,
      full_valid_loss: last.valid_loss,
      full_valid_mean_token_accuracy: last.valid_mean_token_accuracy,
    });
    const file = await upload(greetings);
    const continued = await openai.fineTuning.jobs.create({ model: newest!.id, training_file: file.id });
    expect(continued).toMatchObject({ status: 'queued', model: newest!.fine_tuned_model_checkpoint });
    const cancelled = await openai.fineTuning.jobs.cancel(continued.id);
    expect(cancelled.status).toBe('cancelled');
    expect(await failure(openai.fineTuning.jobs.cancel(continued.id))).toMatchObject({ status: 409 });
  }, 120_000);

  it('when jobs are listed, then only fine-tuning jobs are, newest first, with after paging', async () => {
    const [dataset] = (await datasetNames()).filter((n) => n.startsWith('fine-tune-'));
    const core = await api.post('/core/training-jobs', {
      base_model: 'whetstone-decoder-base',
      datasets: [{ name: dataset }],
      nr_epochs: 1,
    });
    const coreId = ((await core.json()) as { id: string }).id;
    const all = await openai.fineTuning.jobs.list({ limit: 100 });
    expect(all.data.map((j) => j.id)).not.toContain(`ftjob-${coreId}`);
    expect(all.data.length).toBe(2);
    expect(all.data.at(-1)!.id).toBe(job.id);
    const page = await openai.fineTuning.jobs.list({ limit: 1 });
    expect(page.has_more).toBe(true);
    const rest = await openai.fineTuning.jobs.list({ limit: 1, after: page.data[0]!.id });
    expect(rest.data.map((j) => j.id)).toEqual([job.id]);
    expect(await failure(openai.fineTuning.jobs.retrieve(`ftjob-${coreId}`))).toMatchObject({ status: 404 });
    await api.post(`/core/training-jobs/${coreId}/stop`, {});
  });

  it('when the request or its files are wrong, then the 4xx names the parameter and the line, and no dataset is left', async () => {
    const before = await datasetNames();
    const rows = greetings.toString().trim().split('\n');
    const badTraining = await upload(
      [rows[0], '{"messages": [{"role": "robot", "content": "x"}]}', ...rows.slice(2)].join('\n'),
    );
    expect(
      await failure(openai.fineTuning.jobs.create({ model: 'whetstone-decoder-base', training_file: badTraining.id })),
    ).toMatchObject({
      status: 422,
      param: 'training_file',
      message: expect.stringMatching(/line 2: messages\.0\.role/),
    });
    const good = await upload(greetings);
    const badValidation = await upload('not json\n');
    expect(
      await failure(
        openai.fineTuning.jobs.create({
          model: 'whetstone-decoder-base',
          training_file: good.id,
          validation_file: badValidation.id,
        }),
      ),
    ).toMatchObject({ status: 422, param: 'validation_file', message: expect.stringMatching(/line 1/) });
    const batchFile = await upload(greetings, 'batch');
    const cases: [Record<string, unknown>, number, string][] = [
      [{ training_file: batchFile.id }, 422, 'training_file'],
      [{ training_file: 'file-00000000-0000-4000-8000-000000000000' }, 422, 'training_file'],
      [{ training_file: good.id, model: 'whetstone-extract-base' }, 422, 'model'],
      [{ training_file: good.id, model: 'no-such-model' }, 422, 'model'],
      [{ training_file: good.id, method: { type: 'dpo' } }, 422, 'method.type'],
      [{ training_file: good.id, hyperparameters: { batch_size: 8 } }, 422, 'hyperparameters.batch_size'],
      [{ training_file: good.id, hyperparameters: { n_epochs: 99 } }, 422, 'hyperparameters.n_epochs'],
      [{ training_file: good.id, seed: -1 }, 422, 'seed'],
    ];
    for (const [body, status, param] of cases) {
      const request = { model: 'whetstone-decoder-base', ...body } as OpenAI.FineTuning.JobCreateParams;
      const got = await failure(openai.fineTuning.jobs.create(request));
      expect({ body, ...got }).toMatchObject({ body, status, param });
    }
    expect(await failure(openai.fineTuning.jobs.retrieve('ftjob-nope'))).toMatchObject({
      status: 404,
      type: 'not_found_error',
    });
    expect(await failure(openai.fineTuning.jobs.list({ after: 'ftjob-nope' }))).toMatchObject({ param: 'after' });
    expect(await datasetNames()).toEqual(before);
  }, 120_000);

  it('when a fine-tuned model is deleted, then its job is gone, and a built-in or unknown model cannot be', async () => {
    const model = (await openai.fineTuning.jobs.retrieve(job.id)).fine_tuned_model!;
    // /v1/models answers in the generic envelope (docs/api.md, Errors), which the client still raises by status.
    const builtIn = await failure(openai.models.delete('whetstone-decoder-base'));
    expect(builtIn).toMatchObject({ status: 403, message: expect.stringMatching(/built-in model/) });
    expect(await failure(openai.models.delete('no-such-model'))).toMatchObject({ status: 404 });
    // A job that has not finished is no model yet.
    const file = await upload(greetings);
    const queued = await openai.fineTuning.jobs.create({ model: 'whetstone-decoder-base', training_file: file.id });
    const queuedModel = queued.id.replace(/^ftjob-/, '');
    expect(await failure(openai.models.delete(queuedModel))).toMatchObject({ status: 404 });
    await openai.fineTuning.jobs.cancel(queued.id);

    expect(await openai.models.delete(model)).toEqual({ id: model, object: 'model', deleted: true });
    expect(await failure(openai.fineTuning.jobs.retrieve(job.id))).toMatchObject({ status: 404 });
    expect(await failure(openai.models.delete(model))).toMatchObject({ status: 404 });
  }, 120_000);
});
