import fc from 'fast-check';
import { surfaceOf, type Surface } from './envelopes';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

/** Fixed (FUZZ_SEED overrides it to explore), so a failure reproduces: the same seed sends the same requests. */
const SEED = Number(process.env.FUZZ_SEED ?? 1337);
const REQUESTS = 10_000;
/** The suite stops sending past this, and says how many it sent; a loaded 2-core machine is slow. */
const TIME_BUDGET_MS = 240_000;
const CONCURRENCY = 8;

type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
};
interface Operation {
  method: string;
  template: string;
  body?: JsonSchema;
}
interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** docs/api.md, Errors: the envelope of each surface (billing denials have their own generic shape). */
function inEnvelope(surface: Surface, body: unknown): boolean {
  const b = body as Record<string, unknown> | null;
  if (!b || typeof b !== 'object') return false;
  const e = b.error as Record<string, unknown> | undefined;
  if (surface === 'openai')
    return !!e && typeof e.message === 'string' && typeof e.type === 'string' && 'param' in e && 'code' in e;
  if (surface === 'anthropic') return b.type === 'error' && !!e && typeof e.type === 'string';
  return typeof b.detail === 'string' || (typeof b.code === 'string' && typeof b.message === 'string');
}

// Values a client gets wrong: wrong types, huge and negative numbers, long and unicode strings, NUL bytes.
const hostileString = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.fullUnicodeString({ maxLength: 40 }),
  fc.string({ minLength: 1, maxLength: 5 }).map((s) => `${s}\u0000${s}`),
  fc.constantFrom('', ' ', '\u0000', 'a'.repeat(5_000), '../../etc/passwd', '%ZZ', '<script>', '💥'.repeat(50)),
);
const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(-1, 0, 1e308, -1e308, 2 ** 53, Number.MAX_SAFE_INTEGER + 2, 0.5),
);
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  hostileNumber,
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.string(), fc.integer()), { maxKeys: 3 }),
);

/** A plausible value of a schema, so the other, wrong fields are what the server must notice. */
function plausible(schema: JsonSchema, refs: Record<string, JsonSchema>, depth = 0): fc.Arbitrary<unknown> {
  if (schema.$ref) return plausible(refs[schema.$ref.split('/').pop()!] ?? {}, refs, depth + 1);
  if (schema.enum?.length) return fc.constantFrom(...schema.enum);
  const options = schema.anyOf ?? schema.oneOf;
  if (options?.length) return fc.oneof(...options.map((o) => plausible(o, refs, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (depth > 4) return anyValue;
  switch (type) {
    case 'string':
      return fc.string({ minLength: 1, maxLength: 12 });
    case 'integer':
      return fc.integer({ min: 0, max: 100 });
    case 'number':
      return fc.double({ min: 0, max: 1, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(plausible(schema.items ?? {}, refs, depth + 1), { maxLength: 3 });
    case 'object':
      return mutatedObject(schema, refs, depth + 1);
    default:
      return anyValue;
  }
}

/** An object of the schema's fields, each kept plausible, left out, or replaced by a hostile value; maybe extra fields. */
function mutatedObject(schema: JsonSchema, refs: Record<string, JsonSchema>, depth = 0): fc.Arbitrary<unknown> {
  const fields = Object.entries(schema.properties ?? {}).map(([name, field]) =>
    fc
      .oneof(
        { weight: 3, arbitrary: plausible(field, refs, depth).map((v) => ({ v })) },
        { weight: 1, arbitrary: fc.constant(undefined) },
        { weight: 2, arbitrary: anyValue.map((v) => ({ v })) },
      )
      .map((choice) => [name, choice] as const),
  );
  return fc
    .tuple(fc.tuple(...fields), fc.dictionary(fc.string({ maxLength: 8 }), anyValue, { maxKeys: 2 }))
    .map(([chosen, extra]) => {
      const out: Record<string, unknown> = { ...extra };
      for (const [name, choice] of chosen) if (choice) out[name] = choice.v;
      return out;
    });
}

/** A body: mostly a mutated object of the operation's schema, sometimes not JSON or not an object at all. */
function bodyOf(op: Operation, refs: Record<string, JsonSchema>): fc.Arbitrary<string | undefined> {
  const broken = fc.constantFrom(
    '{',
    '{"a":',
    'null',
    '[]',
    '"text"',
    '12',
    '{"a":1}}',
    `${'['.repeat(3000)}${']'.repeat(3000)}`,
    '{"\\u0000":1}',
    '\u0000',
  );
  const shaped = op.body ? mutatedObject(op.body, refs).map((v) => JSON.stringify(v)) : anyValue.map(JSON.stringify);
  return fc.oneof(
    { weight: 6, arbitrary: shaped },
    { weight: 2, arbitrary: broken },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

const pathValue = fc.oneof(
  fc.uuid(),
  fc.constantFrom(
    'abc',
    '%ZZ',
    '%E0%A4%A',
    'a%00b',
    '-1',
    '0',
    '99999999999999999999',
    '..',
    '%2e%2e',
    'a'.repeat(300),
  ),
  fc.fullUnicodeString({ minLength: 1, maxLength: 20 }).map(encodeURIComponent),
);
const query = fc.option(
  fc
    .array(
      fc.tuple(
        fc.constantFrom('limit', 'offset', 'status', 'project_id', 'stream', 'model', 'x'),
        fc.oneof(
          hostileString.map((s) => encodeURIComponent(s)),
          fc.constantFrom('%00', '-5', '1e9', '%ZZ', '99999999999', '2147483648'),
        ),
      ),
      { minLength: 1, maxLength: 3 },
    )
    .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
  { freq: 3, nil: '' },
);

function requests(ops: Operation[], refs: Record<string, JsonSchema>, key: string): fc.Arbitrary<FuzzRequest> {
  return fc
    .constantFrom(...ops)
    .chain((op) =>
      fc.record({
        op: fc.constant(op),
        params: fc.array(pathValue, { minLength: 4, maxLength: 4 }),
        query,
        body: op.method === 'get' || op.method === 'delete' ? fc.constant(undefined) : bodyOf(op, refs),
        auth: fc.constantFrom('key', 'key', 'key', 'key', 'none', 'bad-key', 'other-prefix'),
        anthropic: fc.constantFrom(false, false, false, true),
        contentType: fc.constantFrom(
          'application/json',
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded',
        ),
      }),
    )
    .map(({ op, params, query: q, body, auth, anthropic, contentType }) => {
      let i = 0;
      const path = op.template.replace(/\{\w+\}/g, () => params[i++ % params.length]!) + (q ?? '');
      const headers: Record<string, string> = { 'content-type': contentType };
      if (auth === 'key') headers['x-api-key'] = key;
      if (auth === 'bad-key') headers['x-api-key'] = `wst_sk_${'x'.repeat(40)}`;
      if (auth === 'other-prefix') headers.authorization = 'Bearer sk-not-ours';
      if (anthropic) headers['anthropic-version'] = '2023-06-01';
      return { method: op.method.toUpperCase(), path, headers, ...(body !== undefined ? { body } : {}) };
    });
}

/**
 * Issue 19's fuzz suite: 10,000 requests generated from `/openapi.json` with a
 * fixed seed, against the system as `pnpm start` runs it. No answer may be a
 * 5xx, and every 4xx is JSON in its surface's envelope.
 */
describe('fuzzing the public API from /openapi.json', () => {
  let system: RunningSystem;
  let key: string;
  let doc: {
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>;
    components?: { schemas?: Record<string, JsonSchema> };
  };

  beforeAll(async () => {
    system = await startSystem();
    key = (await signUpWithKey(system.baseUrl, 'fuzz')).key;
    doc = (await (await fetch(`${system.baseUrl}/openapi.json`)).json()) as typeof doc;
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
  }, 30_000);

  it(
    `when ${REQUESTS} generated requests are sent (seed ${SEED}), then none is a 5xx and every 4xx is in its envelope`,
    async () => {
      const ops: Operation[] = Object.entries(doc.paths).flatMap(([template, methods]) =>
        Object.entries(methods).map(([method, op]) => {
          const body = op.requestBody?.content['application/json']?.schema;
          return { method, template: template, ...(body ? { body } : {}) };
        }),
      );
      const refs = doc.components?.schemas ?? {};
      const sample = fc.sample(requests(ops, refs, key), { numRuns: REQUESTS, seed: SEED });
      const started = Date.now();
      const failures: { index: number; request: FuzzRequest; status: number; body: string }[] = [];
      const statuses = new Map<number, number>();
      let next = 0;
      let sent = 0;
      const worker = async () => {
        while (next < sample.length && Date.now() - started < TIME_BUDGET_MS && failures.length < 20) {
          const index = next++;
          const request = sample[index]!;
          const res = await fetch(`${system.baseUrl}${request.path}`, {
            method: request.method,
            headers: request.headers,
            ...(request.body !== undefined ? { body: request.body } : {}),
          });
          const text = await res.text();
          sent++;
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status < 400) continue;
          let body: unknown = null;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: a failure below
          }
          const pathname = new URL(request.path, system.baseUrl).pathname;
          const ok =
            res.status < 500 &&
            /^application\/json/.test(res.headers.get('content-type') ?? '') &&
            inEnvelope(surfaceOf(pathname, request.headers), body);
          if (!ok) failures.push({ index, request, status: res.status, body: text.slice(0, 300) });
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const seconds = (Date.now() - started) / 1000;
      console.log(
        `fuzz: seed ${SEED}, ${sent} of ${REQUESTS} requests in ${seconds.toFixed(1)} s over ${ops.length} operations; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`,
      );
      expect(failures.map((f) => ({ ...f, request: { ...f.request, body: f.request.body?.slice(0, 200) } }))).toEqual(
        [],
      );
      expect(sent).toBeGreaterThanOrEqual(Math.min(REQUESTS, 1_000));
      expect(system.logs()).not.toMatch(/unhandled error/);
    },
    TIME_BUDGET_MS + 60_000,
  );
});
