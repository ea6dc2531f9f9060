import { readFileSync } from 'node:fs';
import { datasetFile, eventually } from '@whetstone/testing';
import { signUpWithKey, startSystem, type RunningSystem } from './system';
import { apiClient, type Job } from './training-helpers';

interface Row {
  text: string;
  label: string;
  split: 'train' | 'heldout';
}

/** Five banking77 intents to learn (30 training rows each, 10 held out); a sixth, never trained on, held out as 'unsupported'. */
function intentRows(): { rows: Row[]; known: string[] } {
  const byIntent = new Map<string, { text: string; label: string }[]>();
  for (const line of readFileSync(datasetFile('banking77/test.jsonl'), 'utf8').split('\n').filter(Boolean)) {
    const row = JSON.parse(line) as { text: string; label: string };
    byIntent.set(row.label, [...(byIntent.get(row.label) ?? []), row]);
  }
  const [unknown, ...known] = [...byIntent.keys()].sort().slice(0, 6);
  const rows: Row[] = [
    ...known.flatMap((label) =>
      byIntent
        .get(label)!
        .slice(0, 40)
        .map((r, i) => ({ text: r.text, label, split: i < 30 ? ('train' as const) : ('heldout' as const) })),
    ),
    ...byIntent
      .get(unknown!)!
      .slice(0, 20)
      .map((r) => ({ text: r.text, label: 'unsupported', split: 'heldout' as const })),
  ];
  return { rows, known };
}

/**
 * Issue 20's out-of-scope rejection through the public API: a training job names its out-of-scope label, the
 * threshold is chosen on the held-out split and reported in the job's metrics, and serving answers that label
 * exactly as often as the metrics say.
 */
describe('out-of-scope rejection named in a training job, end to end through pnpm start', () => {
  let system: RunningSystem;
  let key = '';
  const api = apiClient(
    () => system.baseUrl,
    () => key,
  );
  const { rows, known } = intentRows();

  beforeAll(async () => {
    system = await startSystem();
    ({ key } = await signUpWithKey(system.baseUrl, 'out-of-scope'));
    await api.uploadReady(
      { name: 'intents', type: 'classification', format: 'jsonl', filename: 'intents.jsonl' },
      Buffer.from(rows.map((r) => JSON.stringify({ ...r, task: 'intent' })).join('\n')),
    );
    await api.uploadReady(
      { name: 'people', type: 'extraction', format: 'jsonl', filename: 'people.jsonl' },
      Buffer.from(
        Array.from({ length: 12 }, (_, i) =>
          JSON.stringify({ text: `Ada Lovelace wrote note ${i}.`, entities: [{ start: 0, end: 12, label: 'person' }] }),
        ).join('\n'),
      ),
    );
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
  }, 30_000);

  it('when the datasets hold no classification data, or the label is empty, then out_of_scope_label is a 422 naming it', async () => {
    const create = (body: Record<string, unknown>) =>
      api.post('/core/training-jobs', { base_model: 'whetstone-extract-base', ...body });
    const extraction = await create({ datasets: [{ name: 'people' }], out_of_scope_label: 'unsupported' });
    expect(extraction.status).toBe(422);
    expect(((await extraction.json()) as { errors: unknown[] }).errors).toEqual([
      {
        field: 'out_of_scope_label',
        message: 'applies to classification datasets; the datasets given hold extraction data',
      },
    ]);
    const empty = await create({ datasets: [{ name: 'intents' }], out_of_scope_label: '  ' });
    expect(empty.status).toBe(422);
    expect(JSON.stringify(await empty.json())).toMatch(/out_of_scope_label/);
  });

  it('when a job names the label, then its metrics carry the held-out threshold and serving answers the label as often as they say', async () => {
    const created = await api.post('/core/training-jobs', {
      base_model: 'whetstone-extract-base',
      datasets: [{ name: 'intents' }],
      training_type: 'full',
      nr_epochs: 2,
      out_of_scope_label: 'unsupported',
    });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    const done = (await api.until(id, ['complete', 'failed'])) as Job & {
      out_of_scope_label: string | null;
      metrics: { calibration: Record<string, Record<string, number | string>> };
    };
    expect(done.status).toBe('complete');
    expect(done.out_of_scope_label).toBe('unsupported');
    const cal = done.metrics.calibration.intent!;
    expect(cal).toEqual(
      expect.objectContaining({
        out_of_scope_label: 'unsupported',
        reject_below: expect.any(Number),
        heldout_rows: 50,
        heldout_out_of_scope_rows: 20,
      }),
    );

    const heldout = rows.filter((r) => r.split === 'heldout');
    const answers = await eventually(async () => {
      const res = await api.post('/inference', {
        model_id: id,
        inputs: heldout.map((r) => r.text),
        schema: { classifications: [{ task: 'intent', labels: known }] },
      });
      return res.status === 200 ? ((await res.json()) as { results: { intent: string }[] }).results : null;
    }, 30_000);
    const share = (of: (r: Row) => boolean, hit: (r: Row, answer: string) => boolean) => {
      const picked = heldout.map((r, i) => [r, answers[i]!.intent] as const).filter(([r]) => of(r));
      return Number((picked.filter(([r, a]) => hit(r, a)).length / picked.length).toFixed(4));
    };
    const unsupported = (r: Row) => r.label === 'unsupported';
    expect(share(unsupported, (_, a) => a === 'unsupported')).toBe(cal.heldout_out_of_scope_recall);
    expect(
      share(
        (r) => !unsupported(r),
        (r, a) => a === r.label,
      ),
    ).toBe(cal.heldout_in_scope_accuracy);
  }, 240_000);
});
