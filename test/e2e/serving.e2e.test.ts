import { eventually } from '@whetstone/testing';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

/**
 * Issue 6's base-model journey, tried as a new user would through `pnpm start`:
 * the catalog, zero-shot extraction, GLiNER2 routes, the decision route,
 * projects, model states, metering, and an exhausted balance getting 402.
 */
describe('serving, end to end through pnpm start', () => {
  let system: RunningSystem;
  let base: string;
  let key: string;
  const post = (path: string, body: unknown, k = key) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': k },
      body: JSON.stringify(body),
    });
  const get = (path: string, k = key) => fetch(`${base}${path}`, { headers: { 'x-api-key': k } });
  const balance = async (k = key) =>
    ((await (await get('/billing/usage', k)).json()) as { balance_credits: number }).balance_credits;

  beforeAll(async () => {
    // A tiny free allowance: three calls fit, the fourth is out of credits.
    system = await startSystem({
      env: { FREE_ALLOWANCE_CREDITS: '0.0035', RESTRICTED_MODELS: '*:whetstone-restricted-demo' },
    });
    base = system.baseUrl;
    ({ key } = await signUpWithKey(base, 'serving'));
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
  }, 30_000);

  it('lists base models with their flags, bounds and prices, and callable models in the OpenAI shape', async () => {
    const res = await get('/v1/base-models');
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: Record<string, unknown>[] };
    expect(data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: 'whetstone-extract-base',
          supports_inference: true,
          supports_on_demand_inference: true,
          training_types: ['lora', 'full'],
        }),
        expect.objectContaining({
          id: 'whetstone-decoder-base',
          supports_on_demand_inference: false,
          training_types: ['lora'],
        }),
      ]),
    );
    const models = (await (await get('/v1/models')).json()) as {
      object: string;
      data: { id: string; object: string }[];
    };
    expect(models.object).toBe('list');
    expect(models.data).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 'whetstone-extract-base', object: 'model' })]),
    );
  });

  it('extracts with the zero-shot base on label names given at request time, and meters the listed price', async () => {
    const before = await balance();
    const res = await post('/inference', {
      model_id: 'whetstone-extract-base',
      text: 'Ada Lovelace worked with Charles Babbage in London.',
      schema: { entities: ['person', 'city'] },
      include_confidence: true,
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      inference_id: string;
      model: string;
      latency_ms: number;
      usage: { cost_credits: number };
      result: { entities: Record<string, { text: string; confidence: number }[]> };
    };
    expect(body.model).toBe('whetstone-extract-base');
    expect(body.inference_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.result.entities.person!.map((e) => e.text)).toEqual(['Ada Lovelace', 'Charles Babbage']);
    expect(body.result.entities.city!.map((e) => e.text)).toEqual(['London']);
    // The listed price: 0.001 credits per call plus 0.0001 per started 1,000 tokens.
    expect(body.usage.cost_credits).toBeCloseTo(0.001001, 6);
    await eventually(async () => {
      expect(await balance()).toBeCloseTo(before - body.usage.cost_credits, 6);
      return true;
    });
  });

  it('answers GLiNER2 routes, batch forms and the decision route', async () => {
    const classify = await post('/gliner-2', {
      task: 'classify_text',
      text: 'Please refund my order, it arrived broken',
      schema: { intent: ['refund request', 'greeting'] },
    });
    expect(classify.status).toBe(200);
    expect(((await classify.json()) as { result: Record<string, unknown> }).result).toEqual({
      intent: 'refund request',
    });

    const tooMany = await post('/gliner-2/extract-entities', {
      inputs: Array.from({ length: 1001 }, () => 'x'),
      schema: ['person'],
    });
    expect(tooMany.status).toBe(422);
    expect(((await tooMany.json()) as { errors: { field: string }[] }).errors[0]!.field).toBe('inputs');

    const decision = await post('/v1/systemone', {
      text: 'The parcel never arrived and the tracking shows no delivery',
      options: ['billing', { id: 'shipping', description: 'delivery of parcels' }],
    });
    expect(decision.status).toBe(200);
    const chosen = (await decision.json()) as {
      choice: string;
      confidence: number;
      scores: { option: string; score: number }[];
    };
    expect(chosen.choice).toBe('shipping');
    expect(chosen.scores.map((s) => s.option).sort()).toEqual(['billing', 'shipping']);
  });

  it('says what is wrong with bad calls: 422 empty schema, 404 unknown model, 409 training-only model, 451 restricted', async () => {
    const empty = await post('/inference', { model_id: 'whetstone-extract-base', text: 'x', schema: {} });
    expect(empty.status).toBe(422);
    expect(((await empty.json()) as { errors: { field: string }[] }).errors[0]!.field).toBe('schema');

    const unknown = await post('/inference', {
      model_id: '5b0f3c1e-0000-4000-8000-000000000000',
      text: 'x',
      schema: { entities: ['person'] },
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { detail: string }).detail).toMatch(/not found/);

    const trainingOnly = await post('/inference', {
      model_id: 'whetstone-decoder-base',
      text: 'x',
      schema: { entities: ['person'] },
    });
    expect(trainingOnly.status).toBe(409);

    const missing = await post('/inference', { text: 'x', schema: { entities: ['person'] } });
    expect(missing.status).toBe(422);
  });

  it('manages projects: unique names, empty history, 409 before a deployment, and 404 at once after delete', async () => {
    const created = await post('/projects', { name: 'support-tickets' });
    expect(created.status).toBe(201);
    const project = (await created.json()) as { id: string; name: string };
    expect((await post('/projects', { name: 'support-tickets' })).status).toBe(409);
    const listed = (await (await get('/projects')).json()) as { projects: { id: string }[] };
    expect(listed.projects.map((p) => p.id)).toContain(project.id);
    const history = (await (await get(`/projects/${project.id}/deployments`)).json()) as { deployments: unknown[] };
    expect(history.deployments).toEqual([]);
    expect((await post(`/projects/${project.id}/inference`, { text: 'hello' })).status).toBe(409);
    const badDeploy = await post(`/projects/${project.id}/deployments`, {
      training_job_id: '5b0f3c1e-0000-4000-8000-000000000000',
    });
    expect(badDeploy.status).toBe(404);

    // Another team never sees it.
    const other = await signUpWithKey(base, 'other');
    expect((await post(`/projects/${project.id}/inference`, { text: 'hello' }, other.key)).status).toBe(404);

    const deleted = await fetch(`${base}/projects/${project.id}`, { method: 'DELETE', headers: { 'x-api-key': key } });
    expect(deleted.status).toBe(204);
    expect((await post(`/projects/${project.id}/inference`, { text: 'hello' })).status).toBe(404);
  });

  it('when the balance is exhausted, then paid calls get 402 out_of_credits', async () => {
    await eventually(async () => {
      const res = await post('/inference', {
        model_id: 'whetstone-extract-base',
        text: 'Grace Hopper',
        schema: { entities: ['person'] },
      });
      expect(res.status).toBe(402);
      const body = (await res.json()) as { code: string; message: string; resolution_url: string };
      expect(body.code).toBe('out_of_credits');
      expect(res.headers.get('x-should-retry')).toBe('false');
      return true;
    }, 20_000);
  });
});
