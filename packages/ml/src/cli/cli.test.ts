import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runMlCli } from './main';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s), isTTY: false } };
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
