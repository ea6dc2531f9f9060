/**
 * pnpm --filter @whetstone/bench bench:loop [--scenario entities|classification|all] [--seed n]
 *
 * The closed loop (issue 16), measured through the public API of a system started as `pnpm start` does. Per scenario:
 * train a LoRA job on a small start set and deploy it; infer a pool of other training sentences through the project;
 * submit corrections (the gold answer) for the first 100 wrong outputs; POST /projects/:id/adapt; and read the gate's
 * decision. Test-set figures come from inference through the project before and after (and from the candidate by id
 * when it was not promoted). A second project gets the same 100 corrections with their labels shuffled: its candidate
 * must be rejected. The gate uses the product's default settings and scores a dev set (every row pinned held out);
 * the test sets never reach training or the gate.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { datasetsDir } from '@whetstone/testing';
import { signUpWithKey, startSystem } from '../../test/e2e/system';

const HELP = `Usage: pnpm --filter @whetstone/bench bench:loop [--scenario entities|classification|all] [--seed n]

Adaptive retraining through the public API: test F1 before and after an adaptation on 100 corrections, and the
gate's decision for the same corrections with shuffled labels (which it must reject).

Options:
  --scenario <s>  entities (wikigold: 200-sentence start), classification (banking77: 500-row start), or all (default)
  --seed <n>      seed of the label shuffle and of the banking77 sample (default 13)
  -h, --help      show this help
`;

type Span = { start: number; end: number; label: string; text: string };
interface Row {
  text: string;
  entities?: Span[];
  label?: string;
  task?: string;
}
interface Adaptation {
  id: string;
  status: string;
  corrections: number;
  gain: number | null;
  decision_reason: string | null;
  baseline: { job_id: string; metrics: { f1: number } | null };
  candidate: { job_id: string; metrics: { f1: number } | null };
}
interface Scenario {
  name: string;
  type: 'extraction' | 'classification';
  start: Row[];
  pool: Row[];
  dev: Row[];
  test: Row[];
}

const read = (file: string): Row[] =>
  readFileSync(path.join(datasetsDir(), file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);

/** A seeded permutation (mulberry32), so a run reproduces. */
function shuffled<T>(xs: T[], seed: number): T[] {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function scenarios(seed: number): Scenario[] {
  const wiki = read('wikigold/train.jsonl');
  const bank = shuffled(read('banking77/train.jsonl'), seed);
  return [
    {
      name: 'entities',
      type: 'extraction',
      start: wiki.slice(0, 200),
      pool: wiki.slice(200, 500),
      dev: read('wikigold/dev.jsonl'),
      test: read('wikigold/test.jsonl'),
    },
    {
      name: 'classification',
      type: 'classification',
      start: bank.slice(0, 500),
      pool: bank.slice(500, 800),
      dev: read('banking77/dev.jsonl'),
      test: read('banking77/test.jsonl'),
    },
  ];
}

const spanKey = (s: { start: number; end: number; label: string }) => `${s.label}:${s.start}:${s.end}`;

/** The model's answer for one row, in the row's own terms: a set of span keys, or the label. */
function predicted(type: Scenario['type'], result: Record<string, unknown>, task: string): Set<string> {
  if (type === 'classification') {
    const v = result[task];
    const label = typeof v === 'string' ? v : (v as { label?: string } | undefined)?.label;
    return new Set(label ? [label] : []);
  }
  const entities = (result.entities ?? {}) as Record<string, { start: number; end: number }[]>;
  return new Set(Object.entries(entities).flatMap(([label, ms]) => ms.map((m) => spanKey({ ...m, label }))));
}

const gold = (type: Scenario['type'], r: Row): Set<string> =>
  new Set(type === 'classification' ? [r.label!] : (r.entities ?? []).map(spanKey));

/** Micro F1 over rows (for single-label classification it equals accuracy). */
function microF1(pairs: { gold: Set<string>; pred: Set<string> }[]): number {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const { gold: g, pred: p } of pairs) {
    tp += [...p].filter((k) => g.has(k)).length;
    fp += [...p].filter((k) => !g.has(k)).length;
    for (const k of g) if (!p.has(k)) fn++;
  }
  return tp === 0 ? 0 : (2 * tp) / (2 * tp + fp + fn);
}

const sameSet = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((k) => b.has(k));

function client(base: string, key: string) {
  const headers = { 'content-type': 'application/json', 'x-api-key': key };
  const call = async (method: string, p: string, body?: unknown, attempt = 0): Promise<Record<string, unknown>> => {
    const res = await fetch(`${base}${p}`, { method, headers, ...(body ? { body: JSON.stringify(body) } : {}) });
    // A model loading for its first call (425) answers once warm; a 503 (a service restarting on this loaded
    // machine) is retried as its Retry-After says, like any client would.
    if (res.status === 425 || (res.status === 503 && attempt < 30)) {
      const wait = Number(res.headers.get('retry-after') ?? 1) * 1000 || 1000;
      return new Promise((r) => setTimeout(() => r(call(method, p, body, attempt + 1)), wait));
    }
    const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.status >= 400) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const wait = async <T>(what: string, poll: () => Promise<T | null>, timeoutMs = 1_800_000): Promise<T> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const v = await poll();
      if (v) return v;
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 1_000));
    }
  };
  return {
    post: (p: string, body: unknown) => call('POST', p, body),
    put: (p: string, body: unknown) => call('PUT', p, body),
    get: (p: string) => call('GET', p),
    wait,
  };
}
type Client = ReturnType<typeof client>;

async function upload(api: Client, name: string, type: string, rows: object[]): Promise<void> {
  const { upload_url } = await api.post('/core/datasets/upload/url', {
    dataset_name: name,
    dataset_type: type,
    format: 'jsonl',
    filename: `${name}.jsonl`,
  });
  await fetch(upload_url as string, { method: 'PUT', body: rows.map((r) => JSON.stringify(r)).join('\n') + '\n' });
  await api.post('/core/datasets/upload/process', { dataset_name: name });
  await api.wait(`${name} ready`, async () => {
    const v = await api.get(`/core/datasets/${name}/1`);
    if (v.status === 'failed') throw new Error(`${name} failed: ${JSON.stringify(v.report)}`);
    return v.status === 'ready' ? v : null;
  });
}

async function deployedProject(api: Client, name: string, jobId: string): Promise<string> {
  const id = (await api.post('/projects', { name })).id as string;
  await api.post(`/projects/${id}/deployments`, { training_job_id: jobId });
  await api.wait(`${name} active`, async () => {
    const { deployments } = (await api.get(`/projects/${id}/deployments`)) as { deployments: { status: string }[] };
    return deployments[0]?.status === 'active' ? true : null;
  });
  return id;
}

type Target = { projectId: string } | { jobId: string; schema: Record<string, unknown> };

/** The schema a job is asked with by id (a project uses its trained schema): the start set's labels. */
function schemaOf(s: Scenario): Record<string, unknown> {
  if (s.type === 'classification')
    return { classifications: [{ task: s.start[0]!.task, labels: [...new Set(s.start.map((r) => r.label!))] }] };
  return { entities: [...new Set(s.start.flatMap((r) => (r.entities ?? []).map((e) => e.label)))] };
}

/** Infers every row (through a project, or a job by id) and returns each result. */
async function infer(api: Client, target: Target, rows: Row[]) {
  const out: { row: Row; inferenceId: string; result: Record<string, unknown> }[] = [];
  for (const row of rows) {
    const body = { text: row.text, include_spans: true };
    const res =
      'projectId' in target
        ? await api.post(`/projects/${target.projectId}/inference`, body)
        : await api.post('/inference', { ...body, model_id: target.jobId, schema: target.schema });
    out.push({ row, inferenceId: res.inference_id as string, result: (res.result ?? {}) as Record<string, unknown> });
  }
  return out;
}

async function testF1(api: Client, s: Scenario, target: Target): Promise<number> {
  const task = s.test[0]?.task ?? '';
  const results = await infer(api, target, s.test);
  return microF1(results.map((r) => ({ gold: gold(s.type, r.row), pred: predicted(s.type, r.result, task) })));
}

/** The corrected output of a row, as the feedback API takes it (spans by offset, or the label). */
function correction(s: Scenario, r: Row): Record<string, unknown> {
  if (s.type === 'classification') return { [r.task!]: r.label };
  const entities: Record<string, { text: string; start: number; end: number }[]> = {};
  for (const e of r.entities ?? []) (entities[e.label] ??= []).push({ text: e.text, start: e.start, end: e.end });
  return { entities };
}

/** The same rows with their labels shuffled among them (entity spans keep their place, labels move). */
function withShuffledLabels(s: Scenario, rows: Row[], seed: number): Row[] {
  if (s.type === 'classification') {
    const labels = shuffled(
      rows.map((r) => r.label!),
      seed,
    );
    return rows.map((r, i) => ({ ...r, label: labels[i]! }));
  }
  const labels = shuffled(
    rows.flatMap((r) => (r.entities ?? []).map((e) => e.label)),
    seed,
  );
  let i = 0;
  return rows.map((r) => ({ ...r, entities: (r.entities ?? []).map((e) => ({ ...e, label: labels[i++]! })) }));
}

/** Each adaptation's status as it changes, one line each (a poll that sees the same status prints nothing). */
const shownStatus = new Map<string, string>();
function showStatus(a: Adaptation): void {
  if (shownStatus.get(a.id) === a.status) return;
  shownStatus.set(a.id, a.status);
  process.stderr.write(`  adaptation ${a.id.slice(0, 8)}: ${a.status}\n`);
}

async function adapt(api: Client, projectId: string, devName: string): Promise<Adaptation> {
  // The product's defaults, with the gate scoring the dev set.
  await api.put(`/projects/${projectId}/adaptive`, { enabled: false, heldout_dataset: devName });
  const started = (await api.post(`/projects/${projectId}/adapt`, {})) as unknown as Adaptation;
  return api.wait(`adaptation ${started.id}`, async () => {
    const a = (await api.get(`/projects/${projectId}/adaptations/${started.id}`)) as unknown as Adaptation;
    showStatus(a);
    return ['promoted', 'rejected', 'failed'].includes(a.status) ? a : null;
  });
}

interface Outcome {
  scenario: string;
  before: number;
  after: number;
  decision: Adaptation;
  shuffled: Adaptation;
  corrections: number;
  seconds: number;
}

async function run(api: Client, s: Scenario, seed: number): Promise<Outcome> {
  const t0 = performance.now();
  const log = (m: string) => process.stderr.write(`[${s.name}] ${m}\n`);
  const task = s.start[0]?.task ?? '';
  await upload(api, `${s.name}-start`, s.type, s.start);
  await upload(
    api,
    `${s.name}-dev`,
    s.type,
    s.dev.map((r) => ({ ...r, split: 'heldout' })),
  );
  log(`training a LoRA job on ${s.start.length} rows`);
  const job = (await api.post('/core/training-jobs', {
    base_model: 'whetstone-extract-base',
    datasets: [{ name: `${s.name}-start` }],
    training_type: 'lora',
  })) as { id: string };
  await api.wait('the start job', async () => {
    const j = await api.get(`/core/training-jobs/${job.id}`);
    if (j.status === 'failed') throw new Error(`training failed: ${String(j.failure_reason)}`);
    return j.status === 'complete' ? j : null;
  });
  const [good, bad] = [
    await deployedProject(api, `${s.name}-loop`, job.id),
    await deployedProject(api, `${s.name}-shuffled`, job.id),
  ];
  log(`test F1 before (${s.test.length} rows through the project)`);
  const before = await testF1(api, s, { projectId: good });

  log(`inferring the ${s.pool.length}-row pool; correcting the first 100 wrong outputs`);
  const wrong = (await infer(api, { projectId: good }, s.pool))
    .filter((r) => !sameSet(gold(s.type, r.row), predicted(s.type, r.result, task)))
    .slice(0, 100);
  for (const w of wrong)
    await api.post(`/inferences/${w.inferenceId}/feedback`, {
      verdict: 'incorrect',
      corrected_output: correction(s, w.row),
    });
  const mislabelled = withShuffledLabels(
    s,
    wrong.map((w) => w.row),
    seed,
  );
  const onBad = await infer(api, { projectId: bad }, mislabelled);
  for (const w of onBad)
    await api.post(`/inferences/${w.inferenceId}/feedback`, {
      verdict: 'incorrect',
      corrected_output: correction(s, w.row),
    });
  await new Promise((r) => setTimeout(r, 2_000)); // feedback events reach the dataset service

  log('adapting both projects');
  const [decision, shuffledDecision] = await Promise.all([
    adapt(api, good, `${s.name}-dev`),
    adapt(api, bad, `${s.name}-dev`),
  ]);
  log(`decision: ${decision.status}: ${decision.decision_reason}`);
  log(`shuffled: ${shuffledDecision.status}: ${shuffledDecision.decision_reason}`);
  log(
    `test F1 after (${decision.status}: ${decision.status === 'promoted' ? 'through the project' : 'the candidate by id'})`,
  );
  const after = await testF1(
    api,
    s,
    decision.status === 'promoted' ? { projectId: good } : { jobId: decision.candidate.job_id, schema: schemaOf(s) },
  );
  return {
    scenario: s.name,
    before,
    after,
    decision,
    shuffled: shuffledDecision,
    corrections: wrong.length,
    seconds: (performance.now() - t0) / 1000,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string', default: 'all' },
      seed: { type: 'string', default: '13' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return void process.stdout.write(HELP);
  const seed = Number(values.seed);
  const chosen = scenarios(seed).filter((s) => values.scenario === 'all' || values.scenario === s.name);
  if (!chosen.length || !Number.isInteger(seed)) {
    process.stderr.write(`unknown --scenario or --seed\n\n${HELP}`);
    process.exit(2);
  }
  process.stderr.write('starting the system…\n');
  const system = await startSystem({
    env: { RATE_LIMIT_INFERENCE_PER_MINUTE: '1000000', RATE_LIMIT_TRAINING_JOBS_PER_MINUTE: '1000' },
  });
  const load = loadavg()[0]!.toFixed(1);
  try {
    const { key } = await signUpWithKey(system.baseUrl, 'bench-loop');
    const api = client(system.baseUrl, key);
    const f = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(3));
    console.log(`adaptive loop (issue 16), seed ${seed}, load average at start ${load}`);
    for (const s of chosen) {
      const o = await run(api, s, seed);
      const d = o.decision;
      console.log(`${o.scenario}: ${o.corrections} corrections, ${o.seconds.toFixed(0)} s`);
      console.log(`  test F1 before ${f(o.before)}, after ${f(o.after)}, lift ${f(o.after - o.before)} (goal ≥0.050)`);
      console.log(
        `  gate on the dev set: ${d.status}; dev F1 ${f(d.baseline.metrics?.f1)} → ${f(d.candidate.metrics?.f1)} (${d.decision_reason})`,
      );
      const b = o.shuffled;
      console.log(
        `  shuffled labels: ${b.status} (must be rejected); dev F1 ${f(b.baseline.metrics?.f1)} → ${f(b.candidate.metrics?.f1)} (${b.decision_reason})`,
      );
    }
  } finally {
    await system.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
