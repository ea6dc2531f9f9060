import { readFileSync } from 'node:fs';
import {
  eventually,
  datasetFile,
  startFakeAnthropicUpstream,
  startFakeOpenAIUpstream,
  type FakeUpstream,
} from '@whetstone/testing';
import { ANTHROPIC_MODEL, OPENAI_MODEL, grantCredits, upstreamEnv } from './compat-helpers';
import { startVerdictUpstream } from './judge-upstream';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

const VERDICT_MODEL = 'e2e-judge-gpt';
const VERDICT = '{"score": 0.625, "rationale": "the person and the organisation are right; a location is missing"}';
import { apiClient } from './training-helpers';

interface JudgedRecord {
  id: string;
  project_id: string | null;
  model_id: string;
  llmaj_score: number | null;
  judge_status: string | null;
  judge_rationale: string | null;
  judge_kind: string | null;
  judge_model: string | null;
  judge_error: string | null;
  judged_at: string | null;
  usage: { cost_credits: number };
}

/**
 * Issue 16, part 1, through `pnpm start`: a project turns on the built-in judge with sample rate 1, its inferences
 * get scored by history's judge worker (which asks the router for the served model's confidences and the zero-shot
 * base's opinion, billed as ordinary inferences), and the score filter finds them.
 */
describe('judge scores, end to end through pnpm start', () => {
  let system: RunningSystem;
  let fakeOpenAI: FakeUpstream;
  let fakeAnthropic: FakeUpstream;
  let verdictUpstream: Awaited<ReturnType<typeof startVerdictUpstream>>;
  let base: string;
  let key: string;
  let teamId: string;
  let otherKey: string;
  const { post, get, until, uploadReady } = apiClient(
    () => base,
    () => key,
  );
  const put = (p: string, body: unknown, k = key) =>
    fetch(`${base}${p}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-api-key': k },
      body: JSON.stringify(body),
    });
  const json = async <T>(res: Response) => (await res.json()) as T;
  let projectId: string;
  let jobId: string;

  beforeAll(async () => {
    fakeOpenAI = await startFakeOpenAIUpstream();
    fakeAnthropic = await startFakeAnthropicUpstream();
    verdictUpstream = await startVerdictUpstream(VERDICT);
    const env = upstreamEnv(fakeOpenAI, fakeAnthropic);
    const upstreams = JSON.parse(env.CATALOG_UPSTREAMS!) as Record<string, unknown>[];
    upstreams.push({
      name: 'verdict',
      kind: 'openai-compatible',
      base_url: verdictUpstream.url,
      api_key_env: 'E2E_VERDICT_KEY',
      models: [{ id: VERDICT_MODEL, price: { unit: '1m', input: 100, output: 400 } }],
    });
    system = await startSystem({
      env: { ...env, CATALOG_UPSTREAMS: JSON.stringify(upstreams), E2E_VERDICT_KEY: verdictUpstream.apiKey },
    });
    base = system.baseUrl;
    ({ key, teamId } = await signUpWithKey(base, 'judge'));
    ({ key: otherKey } = await signUpWithKey(base, 'judge-other'));
    await uploadReady(
      { name: 'wikigold', type: 'extraction', format: 'jsonl', filename: 'dev.jsonl' },
      readFileSync(datasetFile('wikigold/dev.jsonl')),
    );
    const job = await json<{ id: string }>(
      await post('/core/training-jobs', {
        base_model: 'whetstone-extract-base',
        datasets: [{ name: 'wikigold' }],
        training_type: 'full',
        nr_epochs: 2,
      }),
    );
    jobId = job.id;
    expect((await until(jobId, ['complete', 'failed'], 300_000)).status).toBe('complete');
    projectId = (await json<{ id: string }>(await post('/projects', { name: 'judged' }))).id;
    expect((await post(`/projects/${projectId}/deployments`, { training_job_id: jobId })).status).toBe(201);
    await eventually(
      async () =>
        (await json<{ deployments: { status: string }[] }>(await get(`/projects/${projectId}/deployments`)))
          .deployments[0]?.status === 'active',
      120_000,
    );
  }, 600_000);

  afterAll(async () => {
    await system?.stop();
    await fakeOpenAI?.close();
    await fakeAnthropic?.close();
    await verdictUpstream?.close();
  }, 30_000);

  it('when judge settings are read before any, then judging is off; bad values are 422 and another team gets 404', async () => {
    const off = await get(`/projects/${projectId}/judge`);
    expect(off.status).toBe(200);
    expect(await off.json()).toMatchObject({ project_id: projectId, enabled: false, sample_rate: 0 });

    const bad = await put(`/projects/${projectId}/judge`, { enabled: 'yes', sample_rate: 1.5, kind: 'oracle' });
    expect(bad.status).toBe(422);
    const body = await json<{ detail: string; errors: { field: string }[] }>(bad);
    expect(typeof body.detail).toBe('string');
    expect(body.errors.map((e) => e.field).sort()).toEqual(['enabled', 'kind', 'sample_rate']);

    const llm = await put(`/projects/${projectId}/judge`, { enabled: true, sample_rate: 1, kind: 'llm' });
    expect(llm.status).toBe(422);
    expect((await json<{ errors: { field: string }[] }>(llm)).errors.map((e) => e.field)).toEqual(['judge_model']);

    const foreign = await put(`/projects/${projectId}/judge`, { enabled: true, sample_rate: 1 }, otherKey);
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toHaveProperty('detail');
    expect((await get(`/projects/${projectId}/judge`, otherKey)).status).toBe(404);
  });

  it('when the built-in judge is on at rate 1, then project inferences get a score, kind, model and rationale, and the score filter finds them', async () => {
    const set = await put(`/projects/${projectId}/judge`, { enabled: true, sample_rate: 1, kind: 'builtin' });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({
      project_id: projectId,
      enabled: true,
      sample_rate: 1,
      kind: 'builtin',
      judge_model: null,
    });
    expect(await json(await get(`/projects/${projectId}/judge`))).toMatchObject({ enabled: true, sample_rate: 1 });

    const texts = [
      'Frederick Collier was the first colonel of the regiment , formed at Camp Howe near Pittsburgh .',
      'The Atlantic City rail crash killed 50 people in New Jersey .',
      'Ada Lovelace worked with Charles Babbage in London .',
    ];
    const ids: string[] = [];
    for (const text of texts) {
      const res = await eventually(async () => {
        const r = await post(`/projects/${projectId}/inference`, { text });
        return r.status === 200 ? r : null;
      }, 60_000);
      ids.push((await json<{ inference_id: string }>(res)).inference_id);
    }

    const judged = await eventually(
      async () => {
        const records = await Promise.all(ids.map(async (id) => json<JudgedRecord>(await get(`/inferences/${id}`))));
        return records.every((r) => r.judge_status === 'scored' || r.judge_status === 'failed') ? records : null;
      },
      120_000,
      250,
    );
    for (const r of judged) {
      expect(r).toMatchObject({
        project_id: projectId,
        judge_status: 'scored',
        judge_kind: 'builtin',
        judge_model: 'whetstone-judge-builtin/1',
        judge_error: null,
      });
      expect(r.llmaj_score).toBeGreaterThanOrEqual(0);
      expect(r.llmaj_score).toBeLessThanOrEqual(1);
      expect(r.judge_rationale).toMatch(/^built-in judge \(not an LLM\)/);
      expect(Date.parse(r.judged_at!)).not.toBeNaN();
    }

    const lowest = Math.min(...judged.map((r) => r.llmaj_score!));
    const found = await json<{ data: JudgedRecord[] }>(
      await get(`/inferences?project_id=${projectId}&llmaj_score_min=${lowest}&limit=200`),
    );
    expect(new Set(found.data.map((r) => r.id))).toEqual(new Set(ids));
    const highest = Math.max(...judged.map((r) => r.llmaj_score!));
    if (highest < 1) {
      const none = await json<{ data: JudgedRecord[] }>(
        await get(`/inferences?project_id=${projectId}&llmaj_score_min=${Math.min(1, highest + 0.0001)}`),
      );
      expect(none.data).toEqual([]);
    }

    // The judge's own calls are ordinary inferences of the team, billed and recorded, outside the project: two per
    // judged record (the served job with confidences, and the zero-shot base).
    // Their records are written like any call's, so they may land after the score they led to: wait for all of them.
    const judgeCalls = await eventually(
      async () => {
        const all = await json<{ data: JudgedRecord[] }>(await get('/inferences?limit=200'));
        const calls = all.data.filter((r) => r.project_id === null);
        const of = (model: string) => calls.filter((r) => r.model_id === model).length;
        return of(jobId) >= ids.length && of('whetstone-extract-base') >= ids.length ? calls : null;
      },
      30_000,
      250,
    );
    expect(judgeCalls.filter((r) => r.model_id === jobId)).toHaveLength(ids.length);
    expect(judgeCalls.filter((r) => r.model_id === 'whetstone-extract-base')).toHaveLength(ids.length);
    for (const r of judgeCalls) {
      expect(r.usage.cost_credits).toBeGreaterThan(0);
      expect(r.judge_status).toBeNull();
    }
  }, 300_000);

  it('when the LLM judge is on and its model (the fake OpenAI upstream) does not answer the strict JSON, then it is asked 3 times with the rubric and the record fails with JUDGE_BAD_ANSWER', async () => {
    await grantCredits(base, teamId, 100);
    const set = await put(`/projects/${projectId}/judge`, {
      enabled: true,
      sample_rate: 1,
      kind: 'llm',
      judge_model: OPENAI_MODEL,
    });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ kind: 'llm', judge_model: OPENAI_MODEL });
    fakeOpenAI.reset();
    const text = 'Grace Hopper served in the United States Navy .';
    const res = await eventually(async () => {
      const r = await post(`/projects/${projectId}/inference`, { text });
      return r.status === 200 ? r : null;
    }, 60_000);
    const id = (await json<{ inference_id: string }>(res)).inference_id;
    const failed = await eventually(
      async () => {
        const r = await json<JudgedRecord>(await get(`/inferences/${id}`));
        return r.judge_status === 'scored' || r.judge_status === 'failed' ? r : null;
      },
      120_000,
      250,
    );
    // The fake echoes the user turn ("Echo: …"), which is not the JSON the rubric demands.
    expect(failed).toMatchObject({ judge_status: 'failed', llmaj_score: null });
    expect(failed.judge_error).toMatch(/^JUDGE_BAD_ANSWER: /);
    const asked = fakeOpenAI.requests.filter((r) => r.path.endsWith('/chat/completions'));
    expect(asked).toHaveLength(3);
    for (const r of asked) {
      expect(r.body.model).toBe(OPENAI_MODEL);
      const messages = r.body.messages as { role: string; content: unknown }[];
      expect(JSON.stringify(messages[0])).toContain('information-extraction');
      expect(JSON.stringify(messages[messages.length - 1])).toContain('Grace Hopper');
    }
  }, 300_000);

  it('when the LLM judge model answers the strict JSON, then the record carries its score and rationale, kind llm and the model, and the score filter finds it', async () => {
    await grantCredits(base, teamId, 100);
    const set = await put(`/projects/${projectId}/judge`, {
      enabled: true,
      sample_rate: 1,
      kind: 'llm',
      judge_model: VERDICT_MODEL,
    });
    expect(set.status).toBe(200);
    const res = await eventually(async () => {
      const r = await post(`/projects/${projectId}/inference`, { text: 'Alan Turing worked at Bletchley Park .' });
      return r.status === 200 ? r : null;
    }, 60_000);
    const id = (await json<{ inference_id: string }>(res)).inference_id;
    const scored = await eventually(
      async () => {
        const r = await json<JudgedRecord>(await get(`/inferences/${id}`));
        return r.judge_status === 'scored' || r.judge_status === 'failed' ? r : null;
      },
      120_000,
      250,
    );
    expect(scored).toMatchObject({
      judge_status: 'scored',
      llmaj_score: 0.625,
      judge_kind: 'llm',
      judge_model: VERDICT_MODEL,
      judge_rationale: 'the person and the organisation are right; a location is missing',
      judge_error: null,
    });
    const found = await json<{ data: JudgedRecord[] }>(
      await get(`/inferences?project_id=${projectId}&llmaj_score_min=0.6&llmaj_score_max=0.65`),
    );
    expect(found.data.map((r) => r.id)).toContain(id);
    const asked = verdictUpstream.received.at(-1)!;
    expect(asked.model).toBe(VERDICT_MODEL);
    expect(JSON.stringify(asked.messages)).toContain('Alan Turing');
  }, 300_000);

  it('when a router project’s chat calls are judged, then the built-in judge records why it cannot and the LLM judge scores the routed reply', async () => {
    await grantCredits(base, teamId, 100);
    const { id } = await json<{ id: string }>(await post('/projects', { name: 'judged-router' }));
    expect(
      (await put(`/projects/${id}/router`, { candidates: [OPENAI_MODEL], reference_model: ANTHROPIC_MODEL })).status,
    ).toBe(200);
    const chatOnce = async () => {
      const res = await post('/v1/chat/completions', {
        model: id,
        messages: [{ role: 'user', content: 'hello there' }],
        store: true,
      });
      expect(res.status).toBe(200);
      const body = await json<{ x_service: { inference_id: string } }>(res);
      return eventually(
        async () => {
          const r = await json<JudgedRecord>(await get(`/inferences/${body.x_service.inference_id}`));
          return r.judge_status === 'scored' || r.judge_status === 'failed' ? r : null;
        },
        120_000,
        250,
      );
    };

    // The built-in judge scores extraction outputs: a chat reply fails at once, saying so and what to use instead.
    expect((await put(`/projects/${id}/judge`, { enabled: true, sample_rate: 1, kind: 'builtin' })).status).toBe(200);
    const builtin = await chatOnce();
    expect(builtin).toMatchObject({ project_id: id, model_id: OPENAI_MODEL, judge_status: 'failed' });
    expect(builtin.judge_error).toMatch(
      new RegExp(`^JUDGE_UNSUPPORTED_TASK: .*chat reply from ${OPENAI_MODEL}: set the project's judge to kind llm`),
    );

    // The LLM judge grades the reply of the model that answered.
    const set = await put(`/projects/${id}/judge`, {
      enabled: true,
      sample_rate: 1,
      kind: 'llm',
      judge_model: VERDICT_MODEL,
    });
    expect(set.status).toBe(200);
    const llm = await chatOnce();
    expect(llm).toMatchObject({
      project_id: id,
      model_id: OPENAI_MODEL,
      judge_status: 'scored',
      llmaj_score: 0.625,
      judge_kind: 'llm',
      judge_model: VERDICT_MODEL,
      judge_error: null,
    });
    expect(JSON.stringify(verdictUpstream.received.at(-1)!.messages)).toContain('hello there');
  }, 300_000);
});
