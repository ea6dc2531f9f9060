import { readFileSync } from 'node:fs';
import { datasetFile, eventually, fixtureDataset } from '@whetstone/testing';
import { signUpWithKey, startSystem, type RunningSystem } from './system';
import { apiClient } from './training-helpers';

interface Row {
  text: string;
  label: string;
  task: string;
}
interface Adaptation {
  id: string;
  status: string;
  trigger: string;
  corrections: number;
  heldout_dataset: string;
  baseline: { job_id: string; metrics: { f1: number } | null };
  candidate: { job_id: string; metrics: { f1: number } | null };
  control: { job_id: string; metrics: { f1: number } | null } | null;
  gain: number | null;
  decision_reason: string | null;
}

const TASK = 'banking77-intent';
const rows = readFileSync(fixtureDataset('banking77/train-3-intents.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Row);
const byLabel = (label: string) => rows.filter((r) => r.label === label);
const [cards, lost, exchange] = ['card_arrival', 'lost_or_stolen_card', 'exchange_rate'].map(byLabel) as [
  Row[],
  Row[],
  Row[],
];
// Scored only, never trained on: the three intents' rows of banking77 test.
const scored = readFileSync(datasetFile('banking77/test.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Row)
  .filter((r) => ['card_arrival', 'lost_or_stolen_card', 'exchange_rate'].includes(r.label));
const jsonl = (list: object[]) => Buffer.from(list.map((r) => JSON.stringify(r)).join('\n') + '\n');

/**
 * Issue 16, adaptive inference, end to end through `pnpm start` and the public API. The deployed job knows two
 * intents; the held-out dataset has three. Project A's corrections teach the third (exchange_rate): the candidate
 * gains on held-out data and is promoted, and A's endpoint serves it. Project B's "corrections" swap the two known
 * intents: its candidate loses, is rejected, and B keeps serving the job it had. Asserts decisions, not speed.
 */
describe('adaptive inference, end to end through pnpm start', () => {
  let system: RunningSystem;
  let base: string;
  let key: string;
  const { post, get, until, uploadReady } = apiClient(
    () => base,
    () => key,
  );
  const json = async <T>(res: Response) => (await res.json()) as T;
  const put = (p: string, body: unknown) =>
    fetch(`${base}${p}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(body),
    });
  let baselineJobId: string;

  const project = async (name: string) => {
    const id = (await json<{ id: string }>(await post('/projects', { name }))).id;
    expect((await post(`/projects/${id}/deployments`, { training_job_id: baselineJobId })).status).toBe(201);
    await eventually(
      async () =>
        (await json<{ deployments: { status: string }[] }>(await get(`/projects/${id}/deployments`))).deployments[0]
          ?.status === 'active',
      120_000,
    );
    return id;
  };
  const activeJob = async (projectId: string) =>
    (
      await json<{ projects: { id: string; active_training_job_id: string | null }[] }>(await get('/projects'))
    ).projects.find((p) => p.id === projectId)?.active_training_job_id;
  /** Infers each text through the project and gives the verdict: the label given, as a correction when it differs. */
  const feedback = async (projectId: string, list: { text: string; label: string }[]) => {
    for (const { text, label } of list) {
      const res = await post(`/projects/${projectId}/inference`, { text });
      expect(res.status).toBe(200);
      const body = await json<{ inference_id: string; result: Record<string, unknown> }>(res);
      const given = body.result[TASK];
      const predicted = typeof given === 'string' ? given : (given as { label?: string } | undefined)?.label;
      const verdict =
        predicted === label ? { verdict: 'correct' } : { verdict: 'incorrect', corrected_output: { [TASK]: label } };
      expect((await post(`/inferences/${body.inference_id}/feedback`, verdict)).status).toBe(200);
    }
  };
  const decided = (projectId: string) =>
    eventually(
      async () => {
        const { data } = await json<{ data: Adaptation[] }>(await get(`/projects/${projectId}/adaptations`));
        const a = data[0];
        return a && ['promoted', 'rejected', 'failed'].includes(a.status) ? a : null;
      },
      400_000,
      500,
    );

  beforeAll(async () => {
    system = await startSystem();
    base = system.baseUrl;
    ({ key } = await signUpWithKey(base, 'adaptive'));
    // Trained on two intents; scored on three (its own rows never overlap the corrections below).
    await uploadReady(
      { name: 'two-intents', type: 'classification', format: 'jsonl', filename: 'two.jsonl' },
      jsonl([...cards.slice(0, 20), ...lost.slice(0, 20)]),
    );
    await uploadReady(
      { name: 'three-intents', type: 'classification', format: 'jsonl', filename: 'three.jsonl' },
      // Every row pinned to the held-out split: the gate scores all of them.
      jsonl(
        [...scored, ...cards.slice(40), ...lost.slice(40), ...exchange.slice(30)].map((r) => ({
          ...r,
          split: 'heldout',
        })),
      ),
    );
    const job = await json<{ id: string }>(
      await post('/core/training-jobs', {
        base_model: 'whetstone-extract-base',
        datasets: [{ name: 'two-intents' }],
        training_type: 'lora',
      }),
    );
    expect((await until(job.id, ['complete', 'failed'], 300_000)).status).toBe('complete');
    baselineJobId = job.id;
  }, 600_000);

  afterAll(async () => {
    await system?.stop();
  }, 30_000);

  it('reports the defaults, refuses bad settings with every field named, and needs feedback before adapting', async () => {
    const id = await project('settings-only');
    expect(await json(await get(`/projects/${id}/adaptive`))).toMatchObject({
      project_id: id,
      enabled: false,
      min_corrections: 50,
      metric: 'f1',
      updated_at: null,
    });
    const bad = await put(`/projects/${id}/adaptive`, {
      enabled: true,
      min_gain: 3,
      metric: 'auc',
      feedback_weight: 0,
    });
    expect(bad.status).toBe(422);
    const detail = JSON.stringify(await bad.json());
    for (const field of ['min_gain', 'metric', 'feedback_weight']) expect(detail).toContain(field);

    const early = await post(`/projects/${id}/adapt`, {});
    expect(early.status).toBeGreaterThanOrEqual(400);
    expect(early.status).toBeLessThan(500);
    expect(JSON.stringify(await early.json())).toContain('feedback');

    const other = await signUpWithKey(base, 'adaptive-other');
    const foreign = await fetch(`${base}/projects/${id}/adaptive`, { headers: { 'x-api-key': other.key } });
    expect(foreign.status).toBe(404);
  }, 300_000);

  it('promotes a candidate that learned from corrections, and rejects one trained on swapped labels', async () => {
    const settings = {
      enabled: true,
      min_corrections: 10,
      heldout_dataset: 'three-intents',
      min_gain: 0.05,
      f1_tolerance: 0.25,
      min_label_support: 3,
    };
    const [good, bad] = await Promise.all([project('learns-exchange-rate'), project('swapped-labels')]);
    for (const id of [good, bad]) expect((await put(`/projects/${id}/adaptive`, settings)).status).toBe(200);

    // Good: the unknown intent first (every one is a correction), then confirmations or corrections of the others.
    await feedback(good, [...exchange.slice(0, 24), ...cards.slice(20, 26), ...lost.slice(20, 26)]);
    // Bad: the two known intents, each "corrected" to the other.
    const swapped = [
      ...cards.slice(20, 32).map((r) => ({ ...r, label: 'lost_or_stolen_card' })),
      ...lost.slice(20, 32).map((r) => ({ ...r, label: 'card_arrival' })),
    ];
    await feedback(bad, swapped);

    const [promoted, rejected] = await Promise.all([decided(good), decided(bad)]);
    // The reason starts with the decision, so a mismatch prints the gate's figures.
    expect(promoted.decision_reason).toMatch(/^promoted: /);
    expect(promoted.status).toBe('promoted');
    expect(promoted).toMatchObject({ trigger: 'corrections', heldout_dataset: 'three-intents' });
    expect(promoted.corrections).toBeGreaterThanOrEqual(10);
    expect(promoted.baseline.job_id).toBe(baselineJobId);
    expect(promoted.gain).toBeGreaterThanOrEqual(0.05);
    expect(promoted.candidate.metrics!.f1).toBeGreaterThan(promoted.baseline.metrics!.f1);
    // Credited to the corrections, not to training longer: it beats the control retrained without them.
    expect(promoted.candidate.metrics!.f1).toBeGreaterThan(promoted.control!.metrics!.f1);
    expect(promoted.decision_reason).toContain('beats a control');
    expect(await activeJob(good)).toBe(promoted.candidate.job_id);

    expect(rejected.decision_reason).toMatch(/^rejected: /);
    expect(rejected.status).toBe('rejected');
    expect(rejected.trigger).toBe('corrections');
    expect(await activeJob(bad)).toBe(baselineJobId);
    // The rejected candidate is kept (complete), not deployed.
    expect((await until(rejected.candidate.job_id, ['complete'])).status).toBe('complete');

    // The audit trail reads back by id, and a second start while nothing runs is a manual adaptation.
    const one = await json<Adaptation>(await get(`/projects/${good}/adaptations/${promoted.id}`));
    expect(one).toMatchObject({ id: promoted.id, status: 'promoted' });
    // Corrections counted after the first run started may start another run on their own once it is decided
    // (by design: a later feedback version tries again); the manual start waits for that one's decision.
    let manual = await post(`/projects/${bad}/adapt`, {});
    for (let attempt = 0; manual.status === 409 && attempt < 2; attempt++) {
      await decided(bad);
      manual = await post(`/projects/${bad}/adapt`, {});
    }
    expect(manual.status).toBe(202);
    expect(await json(manual)).toMatchObject({ status: 'training', trigger: 'manual' });
    const again = await post(`/projects/${bad}/adapt`, {});
    expect(again.status).toBe(409);
  }, 900_000);

  it('retrains a decoder on corrected chat turns and promotes it when the held-out loss falls', async () => {
    await uploadReady(
      { name: 'greetings', type: 'generation', format: 'jsonl', filename: 'greetings.jsonl' },
      readFileSync(fixtureDataset('chat/greetings.jsonl')),
    );
    const names = ['Ada', 'Bob', 'Cleo', 'Dev', 'Eve', 'Fay', 'Gus', 'Hal', 'Ivy', 'Jo', 'Kim', 'Lu', 'Max', 'Ned'];
    const turn = (name: string) => ({
      messages: [
        { role: 'user', content: `hi, I am ${name}` },
        { role: 'assistant', content: `Ahoy ${name}! What brings ye aboard?` },
      ],
    });
    // The replies the team wants from now on, as the gate's held-out set (every row pinned held out).
    await uploadReady(
      { name: 'ahoy', type: 'generation', format: 'jsonl', filename: 'ahoy.jsonl' },
      jsonl(names.slice(0, 10).map((n) => ({ ...turn(`${n}na`), split: 'heldout' }))),
    );
    const job = await json<{ id: string }>(
      await post('/core/training-jobs', {
        base_model: 'whetstone-decoder-base',
        datasets: [{ name: 'greetings' }],
        training_type: 'lora',
        nr_epochs: 2,
      }),
    );
    expect((await until(job.id, ['complete', 'failed'], 300_000)).status).toBe('complete');
    baselineJobId = job.id;
    const id = await project('decoder');
    expect((await put(`/projects/${id}/adaptive`, { enabled: false, heldout_dataset: 'ahoy' })).status).toBe(200);
    for (const name of names) {
      const { messages } = turn(name);
      const res = await post(`/projects/${id}/inference`, { messages: messages.slice(0, 1), max_tokens: 12 });
      expect(res.status).toBe(200);
      const { inference_id } = await json<{ inference_id: string }>(res);
      const corrected = { verdict: 'incorrect', corrected_output: { text: messages[1]!.content } };
      expect((await post(`/inferences/${inference_id}/feedback`, corrected)).status).toBe(200);
    }
    // POST /adapt versions whatever feedback is pending, however few.
    await eventually(async () => (await post(`/projects/${id}/adapt`, {})).status === 202, 30_000, 1_000);
    const decision = await decided(id);
    expect(decision.decision_reason).toMatch(/^promoted: /);
    expect(decision.status).toBe('promoted');
    expect(decision.trigger).toBe('manual');
    expect(decision.decision_reason).toContain('held-out loss');
    expect(decision.corrections).toBeGreaterThanOrEqual(10);
    expect(await activeJob(id)).toBe(decision.candidate.job_id);
  }, 900_000);
});
