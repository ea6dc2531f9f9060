import { readFileSync } from 'node:fs';
import { eventually, fixtureDataset } from '@whetstone/testing';
import { signUpWithKey, startSystem, type RunningSystem } from './system';
import { apiClient } from './training-helpers';

interface Record_ {
  id: string;
  inference_id: string;
  task: string;
  surface: string;
  model_id: string;
  training_job_id: string | null;
  project_id: string | null;
  text: string | null;
  messages: { role: string; content: string }[] | null;
  output: Record<string, unknown> | null;
  usage: { cost_credits: number; input_tokens: number };
  latency_ms: number;
  created_at: string;
}

/**
 * Issue 14's inference history, through `pnpm start`: every native surface
 * leaves exactly one record, readable the moment its response arrives; the
 * list filters; feedback; and the history reconciles with the credit ledger.
 */
describe('inference history, end to end through pnpm start', () => {
  let system: RunningSystem;
  let base: string;
  let key: string;
  const { post, get } = apiClient(
    () => base,
    () => key,
  );
  const json = async <T>(res: Response) => (await res.json()) as T;
  /** What each call returned: its id, and the surface and task its record must show. */
  const made: { id: string; surface: string; task: string; cost: number }[] = [];

  /** The record of a response's inference_id, read immediately (read your writes): never a retry. */
  const readBack = async (res: Response, surface: string, task: string) => {
    expect(res.status).toBe(200);
    const body = await json<{ inference_id: string; usage: { cost_credits: number } }>(res);
    const got = await get(`/inferences/${body.inference_id}`);
    expect(got.status).toBe(200);
    const record = await json<Record_>(got);
    expect(record).toMatchObject({ id: body.inference_id, surface, task });
    expect(record.usage.cost_credits).toBeCloseTo(body.usage.cost_credits, 6);
    made.push({ id: body.inference_id, surface, task, cost: body.usage.cost_credits });
    return record;
  };

  beforeAll(async () => {
    system = await startSystem();
    base = system.baseUrl;
    ({ key } = await signUpWithKey(base, 'history'));
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
  }, 30_000);

  it('records /inference, every /gliner-2 form and /v1/systemone once each, readable right after the response', async () => {
    const text = 'Ada Lovelace worked with Charles Babbage in London.';
    const native = await readBack(
      await post('/inference', { model_id: 'whetstone-extract-base', text, schema: { entities: ['person', 'city'] } }),
      'native',
      'ner',
    );
    expect(native).toMatchObject({ text, model_id: 'whetstone-extract-base', training_job_id: null });
    expect(native.output).toHaveProperty('entities');
    await readBack(
      await post('/gliner-2', {
        task: 'classify_text',
        text: 'Refund my order',
        schema: { intent: ['refund', 'hello'] },
      }),
      'gliner-2',
      'classification',
    );
    await readBack(await post('/gliner-2/extract-entities', { text, schema: ['person'] }), 'gliner-2', 'ner');
    await readBack(
      await post('/gliner-2/extract-relations', { text, schema: ['works with'] }),
      'gliner-2',
      'relations',
    );
    await readBack(
      await post('/gliner-2/extract-json', { text, schema: { meeting: ['person::list', 'place::str'] } }),
      'gliner-2',
      'structures',
    );
    await readBack(
      await post('/v1/systemone', { text: 'The parcel never arrived', options: ['billing', 'shipping'] }),
      'systemone',
      'decision',
    );
  }, 60_000);

  it('records decoder generation and project inference, with the training job that served them', async () => {
    const url = await json<{ upload_url: string }>(
      await post('/core/datasets/upload/url', {
        dataset_name: 'greetings',
        dataset_type: 'generation',
        format: 'jsonl',
        filename: 'chat.jsonl',
      }),
    );
    await fetch(url.upload_url, { method: 'PUT', body: readFileSync(fixtureDataset('chat/greetings.jsonl')) });
    await post('/core/datasets/upload/process', { dataset_name: 'greetings' });
    await eventually(
      async () => (await json<{ status: string }>(await get('/core/datasets/greetings/1'))).status === 'ready',
      60_000,
    );
    const job = await json<{ id: string }>(
      await post('/core/training-jobs', {
        base_model: 'whetstone-decoder-base',
        datasets: [{ name: 'greetings' }],
        training_type: 'lora',
        nr_epochs: 2,
        learning_rate: 0.01,
      }),
    );
    await eventually(
      async () => (await json<{ status: string }>(await get(`/core/training-jobs/${job.id}`))).status === 'complete',
      240_000,
      500,
    );
    const messages = [{ role: 'user', content: 'hi, I am Ada' }];
    // The job loads on first use (425 while it warms); the first 200 is the call whose record is read back.
    const generated = await eventually(async () => {
      const res = await post('/inference', { model_id: job.id, task: 'generate', messages, max_tokens: 8 });
      return res.status === 200 ? res : null;
    }, 60_000);
    const record = await readBack(generated, 'native', 'generate');
    expect(record).toMatchObject({ training_job_id: job.id, messages, text: null });

    const project = await json<{ id: string }>(await post('/projects', { name: 'greeter' }));
    await post(`/projects/${project.id}/deployments`, { training_job_id: job.id });
    await eventually(
      async () =>
        (await json<{ deployments: { status: string }[] }>(await get(`/projects/${project.id}/deployments`)))
          .deployments[0]?.status === 'active',
      60_000,
    );
    const viaProject = await readBack(
      await post(`/projects/${project.id}/inference`, { messages, max_tokens: 8 }),
      'project',
      'generate',
    );
    expect(viaProject).toMatchObject({ project_id: project.id, training_job_id: job.id });
  }, 420_000);

  it('lists newest first with filters and pages, and answers 422 for a min above its max and 400 for a non-number', async () => {
    const all = await json<{ object: string; data: Record_[]; total: number; has_more: boolean }>(
      await get('/inferences?limit=200'),
    );
    expect(all.object).toBe('list');
    expect(all.total).toBe(made.length);
    expect(new Set(all.data.map((r) => r.id))).toEqual(new Set(made.map((m) => m.id)));
    const times = all.data.map((r) => Date.parse(r.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const gliner = await json<{ data: Record_[]; total: number }>(await get('/inferences?task=ner&limit=1'));
    expect(gliner.total).toBe(made.filter((m) => m.task === 'ner').length);
    expect(gliner.data).toHaveLength(1);
    const bySurface = await json<{ data: Record_[]; total: number }>(await get('/inferences?surface=gliner-2'));
    expect(bySurface.total).toBe(made.filter((m) => m.surface === 'gliner-2').length);
    expect(bySurface.data.every((r) => r.surface === 'gliner-2')).toBe(true);
    expect((await get('/inferences?surface=carrier-pigeon')).status).toBe(400);
    const byModel = await json<{ data: Record_[] }>(await get('/inferences?model_id=whetstone-extract-base'));
    expect(byModel.data.every((r) => r.model_id === 'whetstone-extract-base')).toBe(true);
    const newest = all.data[0]!;
    const since = await json<{ data: Record_[] }>(await get(`/inferences?since=${newest.created_at}`));
    expect(since.data.map((r) => r.id)).toContain(newest.id);
    const until = await json<{ data: Record_[] }>(await get(`/inferences?until=${newest.created_at}`));
    expect(until.data.map((r) => r.id)).not.toContain(newest.id);
    const slow = await json<{ data: Record_[] }>(await get('/inferences?latency_min=0&latency_max=100000'));
    expect(slow.data).toHaveLength(made.length);

    const inverted = await get('/inferences?latency_min=10&latency_max=1&llmaj_score_min=0.9&llmaj_score_max=0.1');
    expect(inverted.status).toBe(422);
    const body = await json<{ detail: string; errors: { field: string }[] }>(inverted);
    expect(body.errors.map((e) => e.field).sort()).toEqual(['latency_max', 'llmaj_score_max']);
    expect((await get('/inferences?llmaj_score_max=1.5')).status).toBe(422);
    expect((await get('/inferences?limit=0')).status).toBe(422);
    const notNumber = await get('/inferences?latency_min=fast');
    expect(notNumber.status).toBe(400);
    expect((await json<{ detail: string }>(notNumber)).detail).toMatch(/latency_min/);
    expect((await get('/inferences?since=yesterday')).status).toBe(400);
  });

  it('takes feedback in the original output shape, 422 otherwise, and 404 before any and for other teams', async () => {
    const ner = made.find((m) => m.surface === 'native' && m.task === 'ner')!;
    expect((await get(`/inferences/${ner.id}/feedback`)).status).toBe(404);
    const send = (body: unknown, id = ner.id, k = key) =>
      fetch(`${base}/inferences/${id}/feedback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': k },
        body: JSON.stringify(body),
      });
    // Every 422 entry names its field with a stable code, the verdict/corrected_output combinations included.
    const problems = async (body: unknown) => {
      const res = await send(body);
      expect(res.status).toBe(422);
      return (await json<{ errors: { field: string; message: string; code: string }[] }>(res)).errors;
    };
    expect(await problems({ verdict: 'maybe' })).toEqual([
      { field: 'verdict', message: "must be 'correct' or 'incorrect'", code: 'invalid_value' },
    ]);
    expect(await problems({ verdict: 'incorrect' })).toEqual([
      { field: 'corrected_output', message: 'is required when verdict is incorrect', code: 'required' },
    ]);
    expect(await problems({ verdict: 'correct', corrected_output: { entities: {} } })).toEqual([
      { field: 'corrected_output', message: 'must be omitted or null when verdict is correct', code: 'not_allowed' },
    ]);
    expect(await problems({ verdict: 'correct', notes: 'x'.repeat(5001) })).toEqual([
      { field: 'notes', message: 'must be at most 5000 characters', code: 'too_big' },
    ]);
    const text = await send({ verdict: 'incorrect', corrected_output: 'Ada' });
    expect((await json<{ errors: { field: string; message: string }[] }>(text)).errors[0]).toMatchObject({
      field: 'corrected_output',
      message: 'must be an object or a list in the shape of the original output (null or left out when correct)',
    });
    const outside = await send({ verdict: 'incorrect', corrected_output: { entities: { person: ['Grace Hopper'] } } });
    expect(outside.status).toBe(422);
    expect((await json<{ errors: { field: string }[] }>(outside)).errors[0]!.field).toBe(
      'corrected_output.entities.person.0',
    );
    expect((await send({ verdict: 'incorrect', corrected_output: { entities: { planet: ['London'] } } })).status).toBe(
      422,
    );

    const ok = await send({
      verdict: 'incorrect',
      corrected_output: { entities: { person: ['Ada Lovelace', 'Charles Babbage'], city: [] } },
      notes: 'city was fine, people were not',
    });
    expect(ok.status).toBe(200);
    const given = await json<{ inference_id: string; human_verdict: string; human_feedback_at: string }>(ok);
    expect(given).toMatchObject({ inference_id: ner.id, human_verdict: 'incorrect' });
    const read = await json<typeof given>(await get(`/inferences/${ner.id}/feedback`));
    expect(read).toMatchObject({
      inference_id: ner.id,
      human_verdict: 'incorrect',
      human_feedback_at: given.human_feedback_at,
    });
    expect((await send({ verdict: 'correct', corrected_output: null })).status).toBe(200);

    const other = await signUpWithKey(base, 'stranger');
    expect((await get(`/inferences/${ner.id}`, other.key)).status).toBe(404);
    expect((await get(`/inferences/${ner.id}/feedback`, other.key)).status).toBe(404);
    expect((await send({ verdict: 'correct' }, ner.id, other.key)).status).toBe(404);
    expect((await json<{ total: number }>(await get('/inferences', other.key))).total).toBe(0);
    expect((await get('/inferences/not-a-uuid')).status).toBe(404);
    // An id minted long ago is answered at once, not after the read-your-writes wait.
    const t0 = Date.now();
    expect((await get('/inferences/017f22e2-79b0-7cc3-98c4-dc0c0c07398f')).status).toBe(404);
    expect(Date.now() - t0).toBeLessThan(4_000);
  });

  it('reconciles: the credits over the team history equal its ledger debits, one per inference id', async () => {
    const inference = (e: { kind: string; usage_id: string | null }) =>
      e.kind === 'usage' && !e.usage_id?.startsWith('training:');
    const usage = await eventually(async () => {
      const u = await json<{ recent_entries: { kind: string; usage_id: string | null; amount_credits: number }[] }>(
        await get('/billing/usage'),
      );
      return u.recent_entries.filter(inference).length >= made.length ? u : null;
    }, 30_000);
    // The decoder's training job is debited too (usage id training:<job>); it is not an inference.
    const debits = usage.recent_entries.filter(inference);
    expect(debits).toHaveLength(made.length);
    expect(new Set(debits.map((d) => d.usage_id)).size).toBe(debits.length);
    const page = await json<{ data: Record_[]; total: number }>(await get('/inferences?limit=200'));
    expect(page.total).toBe(made.length);
    const credits = new Map(page.data.map((r) => [r.id, r.usage.cost_credits]));
    for (const d of debits) expect(-d.amount_credits).toBeCloseTo(credits.get(d.usage_id!)!, 6);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect(sum(page.data.map((r) => r.usage.cost_credits))).toBeCloseTo(-sum(debits.map((d) => d.amount_credits)), 6);
    const keys = await json<{ keys: { request_count: number; usage_cost: number }[] }>(await get('/list-api-keys'));
    // The key counts every debit once: the inferences and the training job.
    expect(keys.keys[0]!.request_count).toBe(usage.recent_entries.filter((e) => e.kind === 'usage').length);
  });
});
