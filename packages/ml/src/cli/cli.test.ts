import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { headline } from '../pipeline';
import { runMlCli } from './main';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  // A clock that moves 1 ms per reading: the pacing of progress lines does not depend on the machine's speed.
  let ms = 0;
  return {
    out,
    err,
    io: { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s), isTTY: false, now: () => ++ms },
  };
}

describe('pnpm whetstone ml', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ml-cli-'));
    const rows = [
      'my card never arrived,card',
      'where is my card,card',
      'top up failed,top_up',
      'cannot top up,top_up',
      'lost my phone,phone',
      'phone stolen,phone',
    ];
    writeFileSync(path.join(dir, 'train.csv'), `text,label\n${rows.join('\n')}\n`);
    writeFileSync(path.join(dir, 'bad.jsonl'), '{"text": "x"}\nnot json\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('when train, eval and predict run on a CSV, then a model is saved, scored and used', async () => {
    const t = io();
    expect(
      await runMlCli(
        [
          'train',
          '--data',
          path.join(dir, 'train.csv'),
          '--eval',
          path.join(dir, 'train.csv'),
          '--out',
          path.join(dir, 'model'),
          '--epochs',
          '20',
        ],
        t.io,
      ),
    ).toBe(0);
    expect(t.err.join('')).toMatch(/epoch 20\/20 loss/);
    expect(t.out.join('')).toMatch(/accuracy \(single-label classification\) 1\.0000/);
    // Without a terminal, progress is one line per few seconds: this short run prints the first and the last.
    expect(t.err.join('').match(/\] +\d+% epoch/g)).toEqual([expect.stringMatching(/\] +\d% epoch/), '] 100% epoch']);
    const e = io();
    expect(
      await runMlCli(
        [
          'eval',
          '--model',
          path.join(dir, 'model'),
          '--data',
          path.join(dir, 'train.csv'),
          '--labels',
          'card,phone',
          '--macro',
        ],
        e.io,
      ),
    ).toBe(0);
    expect(e.out.join('')).toMatch(/scoring the given 2 labels\): classification micro F1 1\.0000, macro F1 1\.0000/);
    const p = io();
    expect(
      await runMlCli(['predict', '--model', path.join(dir, 'model'), '--text', 'someone stole my phone'], p.io),
    ).toBe(0);
    expect(JSON.parse(p.out[0]!)).toMatchObject({ label: { label: 'phone' } });
    expect(JSON.parse(readFileSync(path.join(dir, 'model', 'manifest.json'), 'utf8'))).toMatchObject({
      baseModel: 'whetstone-extract-base',
      trainingType: 'full',
      schema: { classifications: [{ task: 'label', labels: ['card', 'phone', 'top_up'] }] },
    });
  });

  it('when the entity encoder is trained from CoNLL with checkpoints, then predict returns spans with offsets and a checkpoint resumes', async () => {
    const people = [
      ['Alice', 'Moreau'],
      ['Bob', 'Chen'],
      ['Carla', 'Diaz'],
      ['Omar', 'Haddad'],
      ['Mei', 'Tanaka'],
      ['Jonas', 'Berg'],
    ];
    const places = ['Paris', 'Berlin', 'Madrid', 'Lisbon', 'Oslo', 'Cairo'];
    const conll = people
      .flatMap(([first, last], i) => [
        `${first} B-PER`,
        `${last} I-PER`,
        'lives O',
        'in O',
        `${places[i]} B-LOC`,
        '. O',
        '',
      ])
      .join('\n');
    writeFileSync(path.join(dir, 'train.conll'), conll);
    const t = io();
    const args = [
      'train',
      '--data',
      path.join(dir, 'train.conll'),
      '--out',
      path.join(dir, 'ner'),
      '--epochs',
      '8',
      '--batch-size',
      '3',
      '--checkpoints',
      path.join(dir, 'ckpt'),
    ];
    expect(await runMlCli(args, t.io)).toBe(0);
    expect(t.err.join('')).toMatch(/trained parameters/);
    expect(existsSync(path.join(dir, 'ckpt', 'weights', '48'))).toBe(true);
    const p = io();
    expect(
      await runMlCli(['predict', '--model', path.join(dir, 'ner'), '--text', 'Dana Fox lives in Rome .'], p.io),
    ).toBe(0);
    const { entities } = JSON.parse(p.out[0]!) as {
      entities: Record<string, { text: string; start: number; end: number }[]>;
    };
    expect(entities.loc!.map(({ text, start, end }) => ({ text, start, end }))).toContainEqual({
      text: 'Rome',
      start: 18,
      end: 22,
    });
    // Resuming from the epoch-4 state reproduces the uninterrupted model's predictions.
    const r = io();
    expect(
      await runMlCli(
        [
          ...args.slice(0, 4),
          path.join(dir, 'ner2'),
          '--epochs',
          '8',
          '--batch-size',
          '3',
          '--resume',
          path.join(dir, 'ckpt', 'weights', '24'),
        ],
        r.io,
      ),
    ).toBe(0);
    const p2 = io();
    expect(
      await runMlCli(['predict', '--model', path.join(dir, 'ner2'), '--text', 'Dana Fox lives in Rome .'], p2.io),
    ).toBe(0);
    expect(p2.out).toEqual(p.out);
  });

  it('when trained and evaluated on relation rows with given spans, then the headline is relation micro F1 (given spans), not span F1', async () => {
    const people = ['Alice Moreau', 'Bob Chen', 'Carla Diaz', 'Omar Haddad', 'Mei Tanaka', 'Jonas Berg'];
    const orgs = ['Acme', 'Globex', 'Initech'];
    const lines = people.flatMap((p, i) => {
      const text = `${p} works for ${orgs[i % orgs.length]} .`;
      const head = { start: 0, end: p.length };
      const tail = { start: p.length + 11, end: text.length - 2 };
      return [
        JSON.stringify({ text, head, tail, label: 'works_for' }),
        JSON.stringify({ text, head: tail, tail: head, label: 'no_relation' }),
      ];
    });
    writeFileSync(path.join(dir, 'relations.jsonl'), `${lines.join('\n')}\n`);
    const t = io();
    const data = path.join(dir, 'relations.jsonl');
    const args = ['train', '--data', data, '--eval', data, '--out', path.join(dir, 'rel'), '--epochs', '2'];
    expect(await runMlCli(args, t.io)).toBe(0);
    const named =
      /relation micro F1 \(given spans, no-relation excluded\) [01]\.\d{4}, macro F1 [01]\.\d{4}, accuracy [01]\.\d{4}/;
    expect(t.out.join('')).toMatch(new RegExp(`eval on 12 rows: ${named.source}`));
    expect(t.out.join('')).not.toMatch(/span F1/);
    const e = io();
    expect(await runMlCli(['eval', '--model', path.join(dir, 'rel'), '--data', data, '--labels'], e.io)).toBe(0);
    expect(e.out.join('')).toMatch(
      /scoring the file's 2 labels\): relation micro F1 \(given spans, no-relation excluded\)/,
    );
  });

  it("when held-out relations are end to end, then the headline is relation F1 and the arguments' span F1 is printed apart", () => {
    const line = headline({
      f1: 0.5,
      precision: 0.6,
      recall: 0.4,
      headline: 'relation_micro_f1',
      per_label: {},
      scores: {
        relation_micro_f1: { f1: 0.5, precision: 0.6, recall: 0.4, macro_f1: 0.45 },
        entity_span_micro_f1: { f1: 0.9, precision: 0.9, recall: 0.9, macro_f1: 0.9 },
      },
    });
    expect(line).toBe(
      'relation micro F1 (label and both argument spans exact) 0.5000, precision 0.6000, recall 0.4000; argument (entity span) F1 0.9000',
    );
  });

  it('when the data has bad rows, then it fails with the line numbers; bad usage exits 2 with help', async () => {
    const bad = io();
    expect(
      await runMlCli(['train', '--data', path.join(dir, 'bad.jsonl'), '--out', path.join(dir, 'm2')], bad.io),
    ).toBe(1);
    expect(bad.err.join('')).toMatch(/line 1, label: .*\n.*line 2, \(row\): invalid JSON/);
    const usage = io();
    expect(await runMlCli(['train', '--epochs', '0', '--data', 'x', '--out', 'y'], usage.io)).toBe(2);
    expect(usage.err.join('')).toMatch(/--epochs must be/);
    const help = io();
    expect(await runMlCli(['predict', '--help'], help.io)).toBe(0);
    expect(help.out.join('')).toMatch(/^Usage: pnpm whetstone ml predict/);
  });
});
