import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '@whetstone/testing';
import { surfaceOf, type Surface } from './envelopes';
import { signUpWithKey, startSystem, type RunningSystem } from './system';
import { apiClient } from './training-helpers';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const ADMIN_TOKEN = 'e2e-admin-token-mistakes-0123456789';

interface Answer {
  status: number;
  contentType: string | null;
  body: unknown;
}

/** Whether a body is an error in the envelope of its surface. */
function inEnvelope(surface: Surface, body: unknown): boolean {
  const b = body as Record<string, unknown> | null;
  if (!b || typeof b !== 'object') return false;
  if (surface === 'openai') {
    const e = b.error as Record<string, unknown> | undefined;
    return !!e && typeof e.message === 'string' && typeof e.type === 'string' && 'param' in e && 'code' in e;
  }
  if (surface === 'anthropic') {
    const e = b.error as Record<string, unknown> | undefined;
    return b.type === 'error' && !!e && typeof e.type === 'string' && typeof e.message === 'string';
  }
  return typeof b.detail === 'string';
}

/**
 * Client mistakes through the whole system as `pnpm start` runs it: every one
 * is a 4xx in its surface's envelope, never a 5xx (issues 19 and 22). The first
 * block replays the reproductions of the fuzz run in issue 22 (item 4) against
 * every route of /openapi.json that takes a path parameter.
 */
describe('client mistakes end to end: 4xx in the right envelope, never 5xx', () => {
  let system: RunningSystem;
  let account: Awaited<ReturnType<typeof signUpWithKey>>;
  let openapi: { paths: Record<string, Record<string, unknown>> };
  const api = apiClient(
    () => system.baseUrl,
    () => account.key,
  );

  beforeAll(async () => {
    system = await startSystem({ env: { ADMIN_TOKEN } });
    account = await signUpWithKey(system.baseUrl, 'mistakes');
    openapi = (await (await fetch(`${system.baseUrl}/openapi.json`)).json()) as typeof openapi;
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
  }, 30_000);

  /** Send a request with the team's key (unless headers say otherwise) and read the answer whatever it is. */
  async function send(
    method: string,
    pathAndQuery: string,
    init: { body?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const res = await fetch(`${system.baseUrl}${pathAndQuery}`, {
      method: method.toUpperCase(),
      headers: { 'x-api-key': account.key, 'content-type': 'application/json', ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // kept as text: the assertion below names it
    }
    return { status: res.status, contentType: res.headers.get('content-type'), body };
  }

  /** Expect a 4xx (exactly `status` when given) in the envelope of the request's surface. */
  function expectMistake(answer: Answer, where: string, surface: Surface, status?: number): void {
    const seen = { where, status: answer.status, body: answer.body };
    expect(seen).toEqual({ where, status: status ?? expect.any(Number), body: expect.anything() });
    expect({ where, clientError: answer.status >= 400 && answer.status < 500 }).toEqual({ where, clientError: true });
    expect({ where, json: /^application\/json/.test(answer.contentType ?? '') }).toEqual({ where, json: true });
    expect({ where, envelope: inEnvelope(surface, answer.body), body: answer.body }).toEqual({
      where,
      envelope: true,
      body: answer.body,
    });
  }

  /** Every (method, path template) of the OpenAPI document that takes a path parameter. */
  const parameterised = () =>
    Object.entries(openapi.paths)
      .filter(([template]) => template.includes('{'))
      .flatMap(([template, ops]) => Object.keys(ops).map((method) => ({ method, template })));

  describe('the fuzz reproductions of issue 22', () => {
    it('when any path parameter has malformed percent-encoding (%ZZ, a truncated escape), then it is 400', async () => {
      const routes = parameterised();
      expect(routes.length).toBeGreaterThan(20);
      for (const bad of ['%ZZ', '%E0%A4%A']) {
        for (const { method, template } of routes) {
          const pathname = template.replace(/\{\w+\}/g, bad);
          const answer = await send(method, pathname, method === 'get' || method === 'delete' ? {} : { body: '{}' });
          expectMistake(answer, `${method} ${pathname}`, surfaceOf(pathname), 400);
        }
      }
    });

    it('when any path parameter holds a NUL byte, then it is 400; a non-UUID id is a 4xx too (404 for ids)', async () => {
      for (const { method, template } of parameterised()) {
        const nul = template.replace(/\{\w+\}/g, 'a%00b');
        const body = method === 'get' || method === 'delete' ? {} : { body: '{}' };
        expectMistake(await send(method, nul, body), `${method} ${nul}`, surfaceOf(nul), 400);
        const notUuid = template.replace(/\{\w+\}/g, 'abc');
        expectMistake(await send(method, notUuid, body), `${method} ${notUuid}`, surfaceOf(notUuid));
      }
      expectMistake(await send('get', '/generate/jobs/abc'), 'GET /generate/jobs/abc', 'generic', 404);
      expectMistake(await send('get', '/core/datasets/a%00b'), 'GET /core/datasets/a%00b', 'generic', 400);
      expectMistake(await send('delete', '/core/datasets/a%00b'), 'DELETE /core/datasets/a%00b', 'generic', 400);
    });

    it('when a query value or a JSON string holds a NUL byte, then it is 400 or 422 naming the field', async () => {
      expectMistake(await send('get', '/core/training-jobs?project_id=a%00b'), 'query project_id', 'generic', 400);
      expectMistake(await send('get', '/projects?x=%00'), 'query x', 'generic', 400);
      const bodies: [string, string, string, Record<string, string>?][] = [
        ['/core/datasets/upload/process', JSON.stringify({ dataset_name: '\u0000' }), 'dataset_name'],
        [
          '/core/datasets/upload/url',
          JSON.stringify({
            dataset_name: 'a\u0000b',
            dataset_type: 'extraction',
            format: 'jsonl',
            filename: 'a.jsonl',
          }),
          'dataset_name',
        ],
        ['/projects', JSON.stringify({ name: 'p\u0000' }), 'name'],
        [
          '/core/evaluations',
          JSON.stringify({ training_job_id: '00000000-0000-4000-8000-000000000000', dataset_name: 'x\u0000' }),
          'dataset_name',
        ],
        [
          '/create-api-key',
          JSON.stringify({ name: 'k\u0000' }),
          'name',
          { 'x-api-key': '', cookie: account.cookie, 'x-csrf-token': account.csrf },
        ],
      ];
      for (const [pathname, body, field, headers] of bodies) {
        const answer = await send('post', pathname, { body, ...(headers ? { headers } : {}) });
        expectMistake(answer, `POST ${pathname}`, 'generic', 422);
        expect((answer.body as { errors: { field: string; code: string }[] }).errors).toEqual([
          expect.objectContaining({ field, code: 'nul_character' }),
        ]);
      }
      const chat = await send('post', '/v1/chat/completions', {
        body: JSON.stringify({ model: 'whetstone-extract-base', messages: [{ role: 'user', content: 'hi\u0000' }] }),
      });
      expectMistake(chat, 'POST /v1/chat/completions', 'openai', 422);
      expect((chat.body as { error: { param: string } }).error.param).toBe('messages.0.content');
      const messages = await send('post', '/v1/messages', {
        body: JSON.stringify({ model: 'x', max_tokens: 5, messages: [{ role: 'user', content: '\u0000' }] }),
      });
      expectMistake(messages, 'POST /v1/messages', 'anthropic', 422);
    });

    it('when 8 first uploads of one new dataset name race, then all succeed as versions 1 to 8 of one dataset', async () => {
      const name = `race-${Date.now()}`;
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          send('post', '/core/datasets/upload/url', {
            body: JSON.stringify({
              dataset_name: name,
              dataset_type: 'extraction',
              format: 'jsonl',
              filename: 'a.jsonl',
            }),
          }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
      const numbers = answers.map((a) => Number((a.body as { version_number: number }).version_number));
      expect(numbers.sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const versions = (await send('get', `/core/datasets/${name}`)).body as { count: number };
      expect(versions.count).toBe(8);
    });

    it('when the request line or headers are too large, then the 431 is JSON in the envelope of the surface', async () => {
      const long = await fetch(`${system.baseUrl}/core/datasets/${'a'.repeat(20_000)}`);
      expectMistake(
        { status: long.status, contentType: long.headers.get('content-type'), body: await long.json() },
        '20 KB path',
        'generic',
        431,
      );
      const openai = await fetch(`${system.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'x-filler': 'f'.repeat(20_000) },
      });
      expectMistake(
        { status: openai.status, contentType: openai.headers.get('content-type'), body: await openai.json() },
        '20 KB header on chat completions',
        'openai',
        431,
      );
    });
  });

  describe('the known defects of issue 19', () => {
    it('when a key reaches its expires_at, then it is refused at once although it was just used', async () => {
      const expiresAt = new Date(Date.now() + 2_000);
      const created = await send('post', '/create-api-key', {
        body: JSON.stringify({ name: 'short-lived', expires_at: expiresAt.toISOString() }),
        headers: { 'x-api-key': '', cookie: account.cookie, 'x-csrf-token': account.csrf },
      });
      expect(created.status).toBe(200);
      const secret = (created.body as { secret_key: string }).secret_key;
      expect((await send('get', '/core/datasets', { headers: { 'x-api-key': secret } })).status).toBe(200);
      await new Promise((r) => setTimeout(r, expiresAt.getTime() - Date.now() + 50));
      const late = await send('get', '/core/datasets', { headers: { 'x-api-key': secret } });
      expect(late).toMatchObject({ status: 401, body: { detail: 'This API key has expired.' } });
    });

    it('when project_id names no project of the team, then creating a training job is 404 at once', async () => {
      for (const projectId of ['00000000-0000-4000-8000-000000000000', 'abc']) {
        const answer = await send('post', '/core/training-jobs', {
          body: JSON.stringify({
            base_model: 'whetstone-extract-base',
            datasets: [{ name: 'anything' }],
            project_id: projectId,
          }),
        });
        expectMistake(answer, `project_id ${projectId}`, 'generic', 404);
        expect((answer.body as { detail: string }).detail).toContain('Project');
      }
    });

    it('when the newest version failed after a ready one, then the list says both, and an extraction base refuses the chat data with 422', async () => {
      const name = `chat-${Date.now()}`;
      const rows = Array.from({ length: 12 }, (_, i) =>
        JSON.stringify({
          messages: [
            { role: 'user', content: `question ${i}` },
            { role: 'assistant', content: `answer ${i}` },
          ],
        }),
      ).join('\n');
      await api.uploadReady({ name, type: 'generation', format: 'jsonl', filename: 'chat.jsonl' }, Buffer.from(rows));

      const training = await send('post', '/core/training-jobs', {
        body: JSON.stringify({ base_model: 'whetstone-extract-base', datasets: [{ name }] }),
      });
      expectMistake(training, 'extraction base on chat data', 'generic', 422);
      expect((training.body as { errors: { field: string }[] }).errors).toEqual([
        expect.objectContaining({ field: 'datasets.0.name' }),
      ]);

      const second = await send('post', '/core/datasets/upload/url', {
        body: JSON.stringify({
          dataset_name: name,
          dataset_type: 'generation',
          format: 'jsonl',
          filename: 'bad.jsonl',
        }),
      });
      await fetch((second.body as { upload_url: string }).upload_url, { method: 'PUT', body: 'not json\n' });
      await api.post('/core/datasets/upload/process', { dataset_name: name });
      await eventually(async () => {
        const v = (await send('get', `/core/datasets/${name}/2`)).body as { status: string };
        return v.status === 'failed';
      }, 60_000);
      const list = (await send('get', '/core/datasets')).body as { datasets: Record<string, unknown>[] };
      expect(list.datasets.find((d) => d.dataset_name === name)).toMatchObject({
        status: 'failed',
        version_number: '2',
        latest_ready_version: '1',
      });
    });

    it('when an operator blocks the team, then its dashboard session can create no key, project or upload URL', async () => {
      const blocked = await signUpWithKey(system.baseUrl, 'blocked');
      const kbAddr = `127.0.0.1:${Number(new URL(system.baseUrl).port) - 8080 + 50051}`;
      await run('pnpm', ['--silent', 'whetstone', 'admin', 'block', '--team', blocked.teamId, '--reason', 'e2e'], {
        cwd: ROOT,
        env: { ...process.env, KEY_BILLING_ADDR: kbAddr, ADMIN_TOKEN },
      });
      const session = { cookie: blocked.cookie, 'x-csrf-token': blocked.csrf, 'x-api-key': '' };
      const attempts: [string, unknown][] = [
        ['/create-api-key', { name: 'after the block' }],
        ['/projects', { name: 'after the block' }],
        [
          '/core/datasets/upload/url',
          { dataset_name: 'after-the-block', dataset_type: 'extraction', format: 'jsonl', filename: 'a.jsonl' },
        ],
      ];
      for (const [pathname, body] of attempts) {
        const answer = await send('post', pathname, { body: JSON.stringify(body), headers: session });
        expectMistake(answer, `blocked session POST ${pathname}`, 'generic', 401);
        expect((answer.body as { detail: string }).detail).toBe('This account is blocked.');
      }
    });
  });

  describe('afterwards', () => {
    it('when all of that has been sent, then no service logged an unhandled error', () => {
      expect(system.logs()).not.toMatch(/unhandled error/);
    });
  });
});
