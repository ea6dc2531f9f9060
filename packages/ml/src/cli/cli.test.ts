import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
    const rows = ['my card never arrived,card', 'where is my card,card', 'top up failed,top_up', 'cannot top up,top_up', 'lost my phone,phone', 'phone stolen,phone'];
    writeFileSync(path.join(dir, 'train.csv'), `text,label\n${rows.join('\n')}\n`);
    writeFileSync(path.join(dir, 'bad.jsonl'), '{"text": "x"}\nnot json\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('when train, eval and predict run on a CSV, then a model is saved, scored and used', async () => {
    const t = io();
    expect(await runMlCli(['train', '--data', path.join(dir, 'train.csv'), '--eval', path.join(dir, 'train.csv'), '--out', path.join(dir, 'model'), '--epochs', '20'], t.io)).toBe(0);
    expect(t.err.join('')).toMatch(/epoch 20\/20 loss/);
    expect(t.out.join('')).toMatch(/micro F1 1\.0000/);
    const p = io();
    expect(await runMlCli(['predict', '--model', path.join(dir, 'model'), '--text', 'my phone was stolen'], p.io)).toBe(0);
    expect(JSON.parse(p.out[0]!)).toMatchObject({ label: 'phone' });
  });

  it('when an entity tagger is trained from CoNLL, then predict returns spans with offsets from the saved model', async () => {
    const conll = ['Alice B-PER', 'Moreau I-PER', 'lives O', 'in O', 'Paris B-LOC', '. O', '', 'Bob B-PER', 'Chen I-PER', 'moved O', 'to O', 'Berlin B-LOC', '. O', '', 'Carla B-PER', 'Diaz I-PER', 'visited O', 'Madrid B-LOC', '. O', ''].join('\n');
    writeFileSync(path.join(dir, 'train.conll'), conll);
    const t = io();
    expect(await runMlCli(['train', '--task', 'ner', '--data', path.join(dir, 'train.conll'), '--out', path.join(dir, 'ner'), '--epochs', '10'], t.io)).toBe(0);
    const p = io();
    expect(await runMlCli(['predict', '--model', path.join(dir, 'ner'), '--text', 'Dana Fox lives in Rome .'], p.io)).toBe(0);
    const { entities } = JSON.parse(p.out[0]!) as { entities: { text: string; label: string; start: number; end: number }[] };
    expect(entities.map(({ text, label, start, end }) => ({ text, label, start, end }))).toContainEqual({ text: 'Rome', label: 'loc', start: 18, end: 22 });
  });

  it('when the data has bad rows, then it fails with the line numbers; bad usage exits 2 with help', async () => {
    const bad = io();
    expect(await runMlCli(['train', '--data', path.join(dir, 'bad.jsonl'), '--out', path.join(dir, 'm2')], bad.io)).toBe(1);
    expect(bad.err.join('')).toMatch(/line 1, label: .*\n.*line 2, \(row\): invalid JSON/);
    const usage = io();
    expect(await runMlCli(['train', '--epochs', '0', '--data', 'x', '--out', 'y'], usage.io)).toBe(2);
    expect(usage.err.join('')).toMatch(/--epochs must be/);
    const help = io();
    expect(await runMlCli(['predict', '--help'], help.io)).toBe(0);
    expect(help.out.join('')).toMatch(/^Usage: pnpm whetstone ml predict/);
  });
});
