import { readFileSync } from 'node:fs';
import {
  eventually,
  datasetFile,
  startFakeAnthropicUpstream,
  startFakeOpenAIUpstream,
  type FakeUpstream,
} from '@whetstone/testing';
import {
  ANTHROPIC_MODEL,
  conversationOf,
  fineTuningJobOf,
  OPENAI_MODEL,
  openAiBatchOf,
  upstreamEnv,
} from './compat-helpers';
import { bodyFor, EXEMPT, HUB_TOKEN, type Owned, PARAMETERS } from './tenancy-routes';
import { errorMessageOf } from './envelopes';
import { signUpWithKey, startSystem, type RunningSystem } from './system';
import { apiClient, fakeHub } from './training-helpers';

/**
 * OWASP API1 (broken object-level authorisation) through `pnpm start`: team A creates one object of every
 * kind; team B's key, on every id-bearing route of /openapi.json, gets 404 and none of A's data, and
 * changes nothing of A's (issue 19, item 4). Also: A's presigned URLs state their expiry in the signed
 * `expires` parameter, and a tampered signature or expiry is 403 (item 8); the model hub, configured at
 * a name that resolves to loopback without the operator's allow-list, is never called (item 7).
 */
describe('tenancy: another team gets 404 and no data on every id-bearing route', () => {
  let system: RunningSystem;
  let teamA: Awaited<ReturnType<typeof signUpWithKey>>;
  let teamB: Awaited<ReturnType<typeof signUpWithKey>>;
  let openapi: { paths: Record<string, Record<string, unknown>> };
  const owned = {} as Owned;
  const hub = fakeHub();
  let openai: FakeUpstream;
  let anthropic: FakeUpstream;
  const a = apiClient(
    () => system.baseUrl,
    () => teamA.key,
  );
  const json = async <T>(res: Response) => (await res.json()) as T;

  beforeAll(async () => {
    const hubUrl = new URL(await hub.start());
    hubUrl.hostname = 'localhost';
    openai = await startFakeOpenAIUpstream();
    anthropic = await startFakeAnthropicUpstream();
    system = await startSystem({
      env: { ...upstreamEnv(openai, anthropic), HUB_BASE_URL: hubUrl.toString(), TRAINER_LEASE_SECONDS: '5' },
    });
    teamA = await signUpWithKey(system.baseUrl, 'tenant-a');
    teamB = await signUpWithKey(system.baseUrl, 'tenant-b');
    owned.teamId = teamA.teamId;
    openapi = await json(await fetch(`${system.baseUrl}/openapi.json`));

    owned.dataset = `tenant-a-data-${Date.now()}`;
    const rows = readFileSync(datasetFile('wikigold/dev.jsonl'), 'utf8').split('\n').slice(0, 60).join('\n');
    await a.uploadReady(
      { name: owned.dataset, type: 'extraction', format: 'jsonl', filename: 'a.jsonl' },
      Buffer.from(rows),
    );
    const job = await json<{ id: string }>(
      await a.post('/core/training-jobs', {
        base_model: 'whetstone-extract-base',
        datasets: [{ name: owned.dataset }],
        training_type: 'lora',
        nr_epochs: 1,
      }),
    );
    owned.jobId = job.id;
    const generation = await a.post('/generate', {
      dataset_name: `tenant-a-synthetic-${Date.now()}`,
      schema: { entities: ['person', 'city'] },
      count: 20,
      seed: 3,
    });
    expect(generation.status).toBe(202);
    owned.generationJobId = (await json<{ job_id: string }>(generation)).job_id;
    owned.projectId = (await json<{ id: string }>(await a.post('/projects', { name: 'tenant-a-project' }))).id;
    const batchParams = { model: ANTHROPIC_MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'Ada' }] };
    const batch = await a.post('/v1/messages/batches', { requests: [{ custom_id: 'a', params: batchParams }] });
    owned.batchId = (await json<{ id: string }>(batch)).id;
    owned.openAi = {
      ...(await openAiBatchOf(system.baseUrl, teamA.key, OPENAI_MODEL)),
      fineTuningJobId: await fineTuningJobOf(system.baseUrl, teamA.key),
    };
    owned.conversation = await conversationOf(system.baseUrl, teamA.key, 'Ada Lovelace');
    expect((await a.until(owned.jobId, ['complete', 'failed'], 300_000)).status).toBe('complete');

    const checkpoints = await json<{ checkpoints: { checkpoint_id: string; checkpoint_type: string }[] }>(
      await a.get(`/v1/training/jobs/${owned.jobId}/checkpoints`),
    );
    const [kind, name] = checkpoints.checkpoints[0]!.checkpoint_id.split('/') as [string, string];
    owned.checkpoint = { kind, name };
    const evaluation = await a.post('/core/evaluations', { training_job_id: owned.jobId, dataset_name: owned.dataset });
    expect(evaluation.status).toBe(202);
    owned.evaluationId = (await json<{ evaluation_id: string }>(evaluation)).evaluation_id;

    expect((await a.post(`/projects/${owned.projectId}/deployments`, { training_job_id: owned.jobId })).status).toBe(
      201,
    );
    await eventually(
      async () =>
        (await json<{ deployments: { status: string }[] }>(await a.get(`/projects/${owned.projectId}/deployments`)))
          .deployments[0]?.status === 'active',
      120_000,
    );
    // Ten verdicts make the project's feedback dataset (its threshold); POST /adapt then versions them.
    for (let i = 0; i < 10; i++) {
      const inference = await a.post(`/projects/${owned.projectId}/inference`, {
        text: `Ada Lovelace lived in London on day ${i}.`,
      });
      expect(inference.status).toBe(200);
      const { inference_id } = await json<{ inference_id: string }>(inference);
      if (i === 0) owned.inferenceId = inference_id;
      const verdict =
        i === 0
          ? { verdict: 'incorrect', corrected_output: { entities: { person: ['Ada Lovelace'] } } }
          : { verdict: 'correct' };
      expect((await a.post(`/inferences/${inference_id}/feedback`, verdict)).status).toBe(200);
    }
    let refusal = '';
    const adaptation = await eventually(async () => {
      const res = await a.post(`/projects/${owned.projectId}/adapt`, {});
      if (res.status === 202) return json<{ id: string }>(res);
      refusal = `${res.status} ${await res.text()}`;
      return null;
    }, 60_000).catch((err: Error) => {
      throw new Error(`${err.message}; POST /adapt said ${refusal}`);
    });
    owned.adaptationId = adaptation.id;
  }, 600_000);

  afterAll(async () => {
    await system?.stop();
    await hub.close();
    await openai?.close();
    await anthropic?.close();
  }, 30_000);

  /** Every string that would show that B saw something of A's. */
  const secretsOfA = () =>
    [
      owned.teamId,
      owned.dataset,
      owned.jobId,
      owned.evaluationId,
      owned.generationJobId,
      owned.projectId,
      owned.inferenceId,
      owned.adaptationId,
      owned.batchId,
      'tenant-a-project',
      'Ada Lovelace',
    ].filter(Boolean);

  /** Every (method, template) of /openapi.json with a path parameter. */
  const parameterised = () =>
    Object.entries(openapi.paths)
      .filter(([template]) => template.includes('{'))
      .flatMap(([template, ops]) => Object.keys(ops).map((method) => ({ method, template })));

  /** The template filled with A's ids, or null when no rule names all of its parameters. */
  function fill(template: string): string | null {
    const rule = PARAMETERS.find(([pattern]) => pattern.test(template));
    if (!rule) return null;
    const values = rule[1](owned);
    let missing = false;
    const path = template.replace(/\{(\w+)\}/g, (_m, p: string) => {
      if (values[p] === undefined) missing = true;
      return encodeURIComponent(values[p] ?? '');
    });
    return missing ? null : path;
  }

  /** A request as team B, with its API key or with its dashboard session (cookie and CSRF token). */
  async function asB(method: string, path: string, body?: unknown, via: 'key' | 'session' = 'key') {
    const credentials: Record<string, string> =
      via === 'key' ? { 'x-api-key': teamB.key } : { cookie: teamB.cookie, 'x-csrf-token': teamB.csrf };
    const res = await fetch(`${system.baseUrl}${path}`, {
      method: method.toUpperCase(),
      headers: { ...credentials, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, text: await res.text() };
  }

  const leaks = (text: string) => secretsOfA().filter((s) => text.includes(s) && !isEcho(s));
  // A 404 may name the id the caller itself sent in the path; nothing else of A's may appear.
  let echoed: string[] = [];
  const isEcho = (s: string) => echoed.includes(s);

  it('when a route with a path parameter appears in /openapi.json, then it is exercised below or exempt with a reason', () => {
    const routes = parameterised();
    expect(routes.length).toBeGreaterThanOrEqual(30);
    const uncovered = routes
      .filter(({ template }) => fill(template) === null)
      .map(({ method, template }) => `${method} ${template}`)
      .filter((route) => !(route in EXEMPT));
    expect(uncovered).toEqual([]);
    const stale = Object.keys(EXEMPT).filter((route) => !routes.some((r) => `${r.method} ${r.template}` === route));
    expect(stale).toEqual([]);
  });

  it("when team B calls every id-bearing route with team A's ids, by key and by session, then each answer is 404 {detail} with none of A's data", async () => {
    const answers: { route: string; status: number; leaked: string[]; body?: string }[] = [];
    // Reads first, then writes, deletes last: every route sees A's objects still there.
    const order = (m: string) => ({ get: 0, put: 1, post: 2, delete: 3 })[m] ?? 2;
    const routes = parameterised().sort((x, y) => order(x.method) - order(y.method));
    for (const via of ['key', 'session'] as const)
      for (const { method, template } of routes) {
        if (`${method} ${template}` in EXEMPT) continue;
        const path = fill(template)!;
        echoed = decodeURIComponent(path.replace(/\/(resp_|chatcmpl-|msgbatch_|file-|batch_|conv_)/, '/')).split('/');
        const answer = await asB(method, path, bodyFor(method, template, owned), via);
        const detail = errorMessageOf(template, answer.text);
        answers.push({
          route: `${via} ${method.toUpperCase()} ${template}`,
          status: answer.status,
          leaked: typeof detail === 'string' ? leaks(answer.text) : ['not a {detail} body'],
          ...(answer.status === 404 ? {} : { body: answer.text.slice(0, 300) }),
        });
      }
    echoed = [];
    expect(answers.filter((x) => x.status !== 404 || x.leaked.length)).toEqual([]);
    console.log(
      `BOLA: ${answers.length / 2} id-bearing operations tried with another team's key and session: all 404, 0 leaks`,
    );
  }, 120_000);

  it("when team B names A's objects in a body or a query, or lists its own, then it sees none of A's", async () => {
    const bProject = (
      await json<{ id: string }>(
        await fetch(`${system.baseUrl}/projects`, {
          method: 'POST',
          headers: { 'x-api-key': teamB.key, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'tenant-b-project' }),
        }),
      )
    ).id;
    const inBodies: [string, unknown][] = [
      ['/core/evaluations', { training_job_id: owned.jobId, dataset_name: owned.dataset }],
      [`/projects/${bProject}/deployments`, { training_job_id: owned.jobId }],
      ['/core/training-jobs', { base_model: 'whetstone-extract-base', datasets: [{ name: owned.dataset }] }],
    ];
    for (const [path, body] of inBodies) {
      // A 404 may name the id the caller itself sent in the body.
      echoed = secretsOfA().filter((s) => JSON.stringify(body).includes(s));
      const answer = await asB('post', path, body);
      expect({ path, status: answer.status, leaked: leaks(answer.text) }).toEqual({ path, status: 404, leaked: [] });
    }
    // Every list (GET without a path parameter) and the project filters: nothing of A's.
    const lists = Object.entries(openapi.paths)
      .filter(([template, ops]) => !template.includes('{') && 'get' in ops)
      .map(([template]) => template)
      .concat([
        `/inferences?project_id=${owned.projectId}`,
        `/core/training-jobs?project_id=${owned.projectId}`,
        `/v1/training-jobs?project_id=${owned.projectId}`,
      ]);
    echoed = [];
    expect(lists.length).toBeGreaterThan(8);
    for (const path of lists) {
      const answer = await asB('get', path);
      expect([path, answer.status < 500, leaks(answer.text)]).toEqual([path, true, []]);
    }
    console.log(`BOLA: ${inBodies.length} ids in bodies (404), ${lists.length} lists and filters: 0 leaks`);
  }, 60_000);

  it("when B has tried everything, then A's objects are all still there, unchanged, and the hub was never called", async () => {
    expect((await a.job(owned.jobId)).status).toMatch(/^(complete|deployed)$/);
    expect((await a.get(`/core/datasets/${owned.dataset}/1`)).status).toBe(200);
    const deployments = await json<{ deployments: { status: string }[] }>(
      await a.get(`/projects/${owned.projectId}/deployments`),
    );
    expect(deployments.deployments[0]?.status).toBe('active');
    expect(await json(await a.get(`/projects/${owned.projectId}/judge`))).toMatchObject({ enabled: false });
    expect(await json(await a.get(`/projects/${owned.projectId}/adaptive`))).toMatchObject({ enabled: false });
    const feedback = await json<Record<string, unknown>>(await a.get(`/inferences/${owned.inferenceId}/feedback`));
    expect(JSON.stringify(feedback)).toContain('incorrect');
    expect(JSON.stringify(feedback)).not.toContain('overwritten by another team');
    expect((await a.get(`/core/evaluations/${owned.evaluationId}`)).status).toBe(200);
    expect((await a.get(`/projects/${owned.projectId}/adaptations/${owned.adaptationId}`)).status).toBe(200);
    expect(hub.pushed).toEqual([]);
  });

  it("when the model hub is configured at a name that resolves to loopback, then A's own push is refused and nothing is sent", async () => {
    const res = await a.post(`/v1/training-jobs/${owned.jobId}/push-to-hub`, {
      repo_id: 'acme/tenant-a',
      hub_token: HUB_TOKEN,
    });
    expect(res.status).toBe(403);
    const body = await res.text();
    expect(body).toContain('HUB_ALLOW_PRIVATE_NETWORKS');
    expect(body).not.toContain(HUB_TOKEN);
    expect(hub.pushed).toEqual([]);
  });

  describe('presigned URLs (item 8)', () => {
    const REFUSED = { signature: 403, expiry: 403, earlierExpiry: 403, key: 403, method: 403 };
    it('when an upload URL is issued, then its signed expiry is the stated expires_at, and a tampered signature, expiry or key is 403', async () => {
      const issued = await json<{ upload_url: string; expires_at: string; expires_in_seconds: number }>(
        await a.post('/core/datasets/upload/url', {
          dataset_name: owned.dataset,
          dataset_type: 'extraction',
          format: 'jsonl',
          filename: 'b.jsonl',
        }),
      );
      const url = new URL(issued.upload_url);
      expect(Number(url.searchParams.get('expires')) * 1000).toBe(Date.parse(issued.expires_at));
      expect(issued.expires_in_seconds).toBeGreaterThan(0);
      const body = readFileSync(datasetFile('wikigold/dev.jsonl')).subarray(0, 200);
      const refused = await tampered(url, 'PUT', body);
      expect(refused).toEqual(REFUSED);
      expect((await fetch(url, { method: 'PUT', body })).status).toBe(200);
    });

    it('when a download URL is issued, then it expires when it says, and a tampered one is 403', async () => {
      const download = await json<{ download_url: string; expires_in_seconds: number }>(
        await a.get(`/v1/training-jobs/${owned.jobId}/download`),
      );
      const url = new URL(download.download_url);
      const expires = Number(url.searchParams.get('expires')) * 1000;
      expect(Math.abs(expires - (Date.now() + download.expires_in_seconds * 1000))).toBeLessThan(60_000);
      expect(await tampered(url, 'GET')).toEqual(REFUSED);
      expect((await fetch(url)).status).toBe(200);
    });

    /** The URL with one part changed at a time; each answer's status. */
    async function tampered(url: URL, method: 'GET' | 'PUT', body?: Buffer) {
      const send = (u: URL, m = method) => fetch(u, { method: m, ...(m === 'PUT' ? { body: body ?? '' } : {}) });
      const variant = (change: (u: URL) => void) => {
        const u = new URL(url);
        change(u);
        return u;
      };
      const sig = url.searchParams.get('sig')!;
      const flip = (s: string) => `${s.slice(0, -1)}${s.endsWith('A') ? 'B' : 'A'}`;
      const expires = Number(url.searchParams.get('expires'));
      return {
        signature: (await send(variant((u) => u.searchParams.set('sig', flip(sig))))).status,
        expiry: (await send(variant((u) => u.searchParams.set('expires', String(expires + 86_400))))).status,
        earlierExpiry: (await send(variant((u) => u.searchParams.set('expires', String(expires - 1))))).status,
        key: (await send(variant((u) => (u.pathname = `${u.pathname}x`)))).status,
        method: (await send(url, method === 'GET' ? 'PUT' : 'GET')).status,
      };
    }
  });
});
