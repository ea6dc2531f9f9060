import OpenAI from 'openai';
import type { FakeUpstream } from '@whetstone/testing';
import { ANTHROPIC_MODEL, OPENAI_MODEL, startWithUpstreams, upstreamEnv, type UpstreamSystem } from './compat-helpers';
import { signUpWithKey, type RunningSystem } from './system';

/** A third of the reference's rates (credits per million tokens), served by the fake OpenAI-compatible upstream. */
const CHEAP_MODEL = 'e2e-gpt-mini';

/** The compat providers (both at 100 / 400 credits per million), plus the cheap model. */
function routerEnv(openai: FakeUpstream, anthropic: FakeUpstream): Record<string, string> {
  const env = upstreamEnv(openai, anthropic);
  const providers = JSON.parse(env.CATALOG_UPSTREAMS!) as { models: unknown[] }[];
  providers[0]!.models.push({
    id: CHEAP_MODEL,
    min_cacheable_tokens: 4,
    price: { unit: '1m', input: 30, output: 120 },
  });
  return { ...env, CATALOG_UPSTREAMS: JSON.stringify(providers) };
}

/**
 * Router projects end to end: a project made a router through the public API,
 * then called as `model` through the openai client; `x_service` names the
 * routed model and the savings against the reference.
 */
describe('router projects through the public API and the openai client, end to end', () => {
  let running: UpstreamSystem;
  let system: RunningSystem;
  let fakeOpenAI: FakeUpstream;
  let key: string;
  let openai: OpenAI;
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${system.baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    running = await startWithUpstreams('router', routerEnv);
    ({ system, fakeOpenAI, key, openai } = running);
  }, 300_000);

  afterAll(async () => running?.stop(), 60_000);

  async function routerProject(name: string, rules?: { max_prompt_tokens: number }) {
    const created = await call('POST', '/projects', { name });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const put = await call('PUT', `/projects/${id}/router`, {
      candidates: [OPENAI_MODEL, CHEAP_MODEL],
      reference_model: ANTHROPIC_MODEL,
      ...(rules ? { rules } : {}),
    });
    expect(put.status).toBe(200);
    return { id, router: (await put.json()) as Record<string, unknown> };
  }

  it('when a project is made a router, then GET shows the candidates cheapest first, and DELETE turns routing off', async () => {
    const { id, router } = await routerProject('router-crud');
    const expected = {
      project_id: id,
      candidates: [OPENAI_MODEL, CHEAP_MODEL],
      reference_model: ANTHROPIC_MODEL,
      rules: { max_prompt_tokens: null },
      ranking: [
        { model: CHEAP_MODEL, input_per_million: 30, output_per_million: 120 },
        { model: OPENAI_MODEL, input_per_million: 100, output_per_million: 400 },
      ],
      reference: { model: ANTHROPIC_MODEL, input_per_million: 100, output_per_million: 400 },
    };
    expect(router).toMatchObject(expected);
    const got = await call('GET', `/projects/${id}/router`);
    expect([got.status, await got.json()]).toMatchObject([200, expected]);
    expect((await call('DELETE', `/projects/${id}/router`)).status).toBe(204);
    const doc = (await (await fetch(`${system.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(doc.paths['/projects/{project_id}/router'] ?? {}).sort()).toEqual(['delete', 'get', 'put']);
    const gone = await call('GET', `/projects/${id}/router`);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { detail: string }).detail).toMatch(/not a router/);
  });

  it('when the body is wrong or a model unknown, then 422 names the fields and 404 says which model', async () => {
    const { id } = await routerProject('router-errors');
    const bad = await call('PUT', `/projects/${id}/router`, {
      candidates: [],
      reference_model: '',
      rules: { max_prompt_tokens: -1 },
    });
    expect(bad.status).toBe(422);
    const body = (await bad.json()) as { detail: string; errors: { field?: string; loc?: unknown }[] };
    expect(JSON.stringify(body.errors)).toMatch(/candidates/);
    expect(JSON.stringify(body.errors)).toMatch(/reference_model/);
    expect(JSON.stringify(body.errors)).toMatch(/max_prompt_tokens/);
    const unknown = await call('PUT', `/projects/${id}/router`, {
      candidates: ['no-such-model'],
      reference_model: ANTHROPIC_MODEL,
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { detail: string }).detail).toMatch(/no-such-model/);
    const other = await signUpWithKey(system.baseUrl, 'router-other');
    const foreign = await fetch(`${system.baseUrl}/projects/${id}/router`, { headers: { 'x-api-key': other.key } });
    expect(foreign.status).toBe(404);
  });

  it('when a router project is called through the openai client, then x_service names the routed model and the savings, in JSON and in the stream', async () => {
    const { id } = await routerProject('router-chat');
    const messages = [{ role: 'user' as const, content: 'hello there' }];
    const json = await openai.chat.completions.create({ model: id, messages, store: true });
    expect(json.model).toBe(id);
    expect(json.choices[0]!.message.content).toBe('Echo: HELLO THERE');
    const xService = (json as unknown as { x_service: Record<string, unknown> }).x_service;
    expect(xService).toMatchObject({
      inference_id: expect.any(String),
      routed_model: CHEAP_MODEL,
      savings: { input_per_million: 70, output_per_million: 280 },
    });
    expect(fakeOpenAI.requests.at(-1)?.body).toMatchObject({ model: CHEAP_MODEL });

    const stream = await openai.chat.completions.create({ model: id, messages, store: true, stream: true });
    const chunks: Record<string, unknown>[] = [];
    for await (const chunk of stream) chunks.push(chunk as unknown as Record<string, unknown>);
    const terminal = chunks.find((c) => (c.choices as { finish_reason: string | null }[])[0]?.finish_reason);
    expect(terminal?.x_service).toMatchObject({
      routed_model: CHEAP_MODEL,
      savings: { input_per_million: 70, output_per_million: 280 },
    });
    expect(chunks.filter((c) => c !== terminal).every((c) => c.x_service === null)).toBe(true);

    const messagesRes = await call('POST', '/v1/messages', { model: id, max_tokens: 64, messages, store: true });
    expect(messagesRes.status).toBe(200);
    expect(((await messagesRes.json()) as { x_service: unknown }).x_service).toMatchObject({
      routed_model: CHEAP_MODEL,
      savings: { input_per_million: 70, output_per_million: 280 },
    });

    // A stored Response through the project reads back under the project's id, as it answered.
    const response = await openai.responses.create({ model: id, input: 'hello there', store: true });
    expect(await openai.responses.retrieve(response.id)).toMatchObject({ model: id, output_text: 'Echo: HELLO THERE' });
  });

  it('when a rule excludes the candidates, then the reference answers with routed_model and savings null', async () => {
    const { id } = await routerProject('router-rule', { max_prompt_tokens: 1 });
    const json = await openai.chat.completions.create({
      model: id,
      messages: [{ role: 'user', content: 'hello there' }],
      store: true,
    });
    expect(json.choices[0]!.message.content).toBe('Echo: HELLO THERE');
    expect((json as unknown as { x_service: unknown }).x_service).toMatchObject({
      routed_model: null,
      savings: null,
    });
  });
});
