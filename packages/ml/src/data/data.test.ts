import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { datasetFile } from '@whetstone/testing';
import { conllToJsonl, csvToJsonl, decodeUtf8, splitHeldOut, validateJsonl } from './index';
import { JsonlValidator } from './validate';

describe('dataset validation', () => {
  it('when rows are broken in different ways, then each error names its line and field', () => {
    const content = [
      '{"text": "Ada Lovelace was born in London .", "entities": [{"start": 0, "end": 12, "label": "person", "text": "Ada Lovelace"}]}',
      '{"text": "bad offsets", "entities": [{"start": 5, "end": 50, "label": "x"}]}',
      '{"text": "wrong text", "entities": [{"start": 0, "end": 5, "label": "x", "text": "nope!"}]}',
      'not json',
      '{"text": "missing label", "entities": [{"start": 0, "end": 7}]}',
      '',
      '{"text": "Ada Lovelace was born in London .", "entities": [{"start": 0, "end": 12, "label": "person", "text": "Ada Lovelace"}]}',
    ].join('\n');
    const report = validateJsonl(content, 'extraction');
    expect(report.examples).toHaveLength(2);
    expect(report.errors.map((e) => [e.line, e.field])).toEqual([
      [2, 'entities.0'],
      [3, 'entities.0.text'],
      [4, '(row)'],
      [5, 'entities.0.label'],
    ]);
    expect(report.errors[0]!.reason).toMatch(/outside the text/);
    expect(report.duplicates).toEqual([7]);
    expect(report.labels).toEqual({ person: 2 });
  });

  it('when extraction rows carry structures, then valid instances are kept and bad values are reported by field', () => {
    const good = JSON.stringify({
      text: 'Ship the Pixel 8 to Lisbon.',
      structures: { order: [{ product: 'Pixel 8', city: 'Lisbon', tags: ['phone'] }] },
    });
    const bad = JSON.stringify({
      text: 'Ship it.',
      entities: [],
      structures: { order: [{ product: '' }, 'x'], misc: 3 },
    });
    const report = validateJsonl(`${good}\n${bad}\n`, 'extraction', { minExamples: 1 });
    expect(report.examples[0]!.structures).toEqual({
      order: [{ product: 'Pixel 8', city: 'Lisbon', tags: ['phone'] }],
    });
    expect(report.errors.map((e) => `${e.line} ${e.field}`)).toEqual([
      '2 structures.order.0.product',
      '2 structures.order.1',
      '2 structures.misc',
    ]);
  });

  it('when relation-classification rows give a head, a tail and a label, then good ones are kept and each bad one names its field', () => {
    const text = 'Ada Lovelace worked with Charles Babbage .';
    const row = (extra: object) => JSON.stringify({ text, ...extra });
    const head = { start: 0, end: 12, label: 'person', text: 'Ada Lovelace' };
    const tail = { start: 25, end: 40 };
    const content = [
      row({ head, tail, label: 'colleague_of' }),
      row({ head: tail, tail: head, label: 'no_relation' }),
      row({ head, tail: { start: 25, end: 99 }, label: 'colleague_of' }),
      row({ head, tail, label: '' }),
      row({ head, tail: head, label: 'colleague_of' }),
      row({ head: { ...head, text: 'Ada' }, tail, label: 'colleague_of' }),
      row({ head, label: 'colleague_of' }),
      row({ head: { start: 0, end: 12, label: 7 }, tail, label: 'colleague_of' }),
      row({ head, tail, label: 'colleague_of', relations: [] }),
    ].join('\n');
    for (const kind of ['extraction', 'classification'] as const) {
      const report = validateJsonl(content, kind);
      expect(report.examples).toEqual([
        { text, head, tail, label: 'colleague_of' },
        { text, head: tail, tail: head, label: 'no_relation' },
      ]);
      expect(report.errors.map((e) => [e.line, e.field])).toEqual([
        [3, 'tail'],
        [4, 'label'],
        [5, 'tail'],
        [6, 'head.text'],
        [7, 'tail'],
        [8, 'head.label'],
        [9, 'relations'],
      ]);
      expect(report.errors.map((e) => e.reason)).toEqual([
        expect.stringMatching(/outside the text/),
        expect.stringMatching(/no_relation, none or Other when there is none/),
        'head and tail are the same span',
        expect.stringMatching(/does not match the text/),
        'must be an object {start, end, label?}',
        'must be a non-empty string',
        expect.stringMatching(/leave out relations/),
      ]);
      expect(report.labels).toEqual({ colleague_of: 1, no_relation: 1 });
    }
  });

  it('when a file is empty or too small for training, then it says so', () => {
    expect(validateJsonl('\n\n', 'classification').errors).toEqual([
      { line: 0, field: '(file)', reason: 'the file has no examples' },
    ]);
    const small = validateJsonl('{"text":"hi","label":"greet"}', 'classification', { minExamples: 10 });
    expect(small.errors[0]!.reason).toMatch(/at least 10/);
  });

  it('when chat rows lack an assistant turn or a valid role, then they are rejected', () => {
    const r = validateJsonl(
      [
        '{"messages":[{"role":"user","content":"hi"}]}',
        '{"messages":[{"role":"bot","content":"x"}]}',
        '{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}',
      ].join('\n'),
      'chat',
    );
    expect(r.examples).toHaveLength(1);
    expect(r.errors.map((e) => e.field)).toEqual(['messages', 'messages.0.role']);
  });

  it('when chat rows carry OpenAI weights, then 0 or 1 on assistant messages is kept and anything else is a row error', () => {
    const user = { role: 'user', content: 'hi' };
    const reply = (weight: unknown) => ({ role: 'assistant', content: 'hello', weight });
    const r = validateJsonl(
      [
        { messages: [user, reply(0), user, reply(1)] },
        { messages: [user, reply(0)] },
        { messages: [{ ...user, weight: 1 }, reply(1)] },
        { messages: [user, reply(0.5)] },
      ]
        .map((row) => JSON.stringify(row))
        .join('\n'),
      'chat',
    );
    expect(r.examples).toEqual([{ messages: [user, reply(0), user, reply(1)] }]);
    expect(r.errors.map((e) => [e.line, e.field])).toEqual([
      [2, 'messages'],
      [3, 'messages.0.weight'],
      [4, 'messages.1.weight'],
    ]);
  });

  it('when bytes are not UTF-8, then the offending line is reported', () => {
    const bytes = Buffer.concat([Buffer.from('{"text":"ok","label":"a"}\n'), Buffer.from([0x7b, 0xff, 0xfe, 0x7d])]);
    expect(decodeUtf8(bytes).error).toEqual({ line: 2, field: '(row)', reason: 'the file is not valid UTF-8 here' });
  });

  it('when CSV has quoted commas and doubled quotes, then rows convert to text/label JSONL', () => {
    const { jsonl, errors } = csvToJsonl('text,label\n"Hello, world","greet"\n"He said ""hi""",greet\n,empty\n');
    expect(jsonl.split('\n').map((l) => JSON.parse(l))).toEqual([
      { text: 'Hello, world', label: 'greet' },
      { text: 'He said "hi"', label: 'greet' },
    ]);
    expect(errors).toEqual([{ line: 4, field: 'text', reason: 'is empty or missing' }]);
  });

  it('when CoNLL uses BIO or IOB1, then entities get character offsets matching the text', () => {
    const { jsonl, errors } = conllToJsonl(
      '-DOCSTART- O\n\nJohn B-PER\nSmith I-PER\nvisited O\nNew I-LOC\nYork I-LOC\n\nbad line\n',
    );
    expect(errors).toEqual([{ line: 9, field: 'tag', reason: expect.stringContaining('token TAG') }]);
    const row = JSON.parse(jsonl) as {
      text: string;
      entities: { start: number; end: number; label: string; text: string }[];
    };
    expect(row.text).toBe('John Smith visited New York');
    expect(row.entities).toEqual([
      { start: 0, end: 10, label: 'per', text: 'John Smith' },
      { start: 19, end: 27, label: 'loc', text: 'New York' },
    ]);
    expect(validateJsonl(jsonl, 'extraction').errors).toEqual([]);
  });

  it('when the same examples are split twice, then the split is identical and roughly the asked fraction', () => {
    const examples = Array.from({ length: 2000 }, (_, i) => ({ text: `example ${i}`, label: 'x' }));
    const a = splitHeldOut(examples, { heldOutFraction: 0.1, seed: 's' });
    const b = splitHeldOut(examples, { heldOutFraction: 0.1, seed: 's' });
    expect(a.heldOut).toEqual(b.heldOut);
    expect(a.heldOut.length).toBeGreaterThan(150);
    expect(a.heldOut.length).toBeLessThan(250);
    expect(a.train.length + a.heldOut.length).toBe(2000);
  });

  it('when a row pins its split, then the validator says which (test and dev mean held out), and an unknown one is a row error', () => {
    const v = new JsonlValidator('classification');
    const row = (split: unknown) => JSON.stringify({ text: 'hi there', label: 'greet', split });
    expect(v.pushSerialized(row('heldout'), 1)?.split).toBe('heldout');
    expect(v.pushSerialized(row('TEST'), 2)?.split).toBe('heldout');
    expect(v.pushSerialized(row('train'), 3)?.split).toBe('train');
    expect(v.pushSerialized(JSON.stringify({ text: 'no pin', label: 'greet' }), 4)?.split).toBeUndefined();
    expect(v.pushSerialized(row('holdout'), 5)).toBeNull();
    expect(v.errors).toEqual([expect.objectContaining({ line: 5, field: 'split' })]);
  });
});

describe('the shipped datasets (datasets/)', () => {
  const read = (file: string) => readFileSync(datasetFile(file));

  it('when each file is hashed, then its sha256 and size are the ones datasets/README.md records', () => {
    const recorded = [
      ...read('README.md')
        .toString('utf8')
        .matchAll(/^\| `([a-z0-9]+\/[a-z]+\.jsonl)` \| ([\d,]+) \| `([0-9a-f]{64})` \|$/gm),
    ];
    expect(recorded.map((m) => m[1]).sort()).toEqual(
      ['banking77', 'wikigold'].flatMap((set) => ['dev', 'test', 'train'].map((split) => `${set}/${split}.jsonl`)),
    );
    for (const [, file, bytes, sha256] of recorded) {
      const content = read(file!);
      expect([file, content.length, createHash('sha256').update(content).digest('hex')]).toEqual([
        file,
        Number(bytes!.replace(/,/g, '')),
        sha256,
      ]);
    }
  });

  it('when wikigold is validated, then every row of every split is accepted with the documented counts', () => {
    const counts = {
      train: [1355, { location: 773, misc: 600, organization: 719, person: 752 }],
      dev: [168, { location: 147, misc: 46, organization: 70, person: 72 }],
      test: [173, { location: 94, misc: 66, organization: 109, person: 110 }],
    } as const;
    for (const [split, [sentences, entities]] of Object.entries(counts)) {
      const ner = validateJsonl(read(`wikigold/${split}.jsonl`).toString('utf8'), 'extraction');
      expect([split, ner.errors, ner.examples.length, ner.labels]).toEqual([split, [], sentences, entities]);
    }
  });

  it('when banking77 is validated, then every row of every split is accepted, with all 77 intents in each', () => {
    const counts = { train: 5000, dev: 1003, test: 3080 };
    for (const [split, rows] of Object.entries(counts)) {
      const cls = validateJsonl(read(`banking77/${split}.jsonl`).toString('utf8'), 'classification');
      expect([split, cls.errors, cls.examples.length, Object.keys(cls.labels).length]).toEqual([split, [], rows, 77]);
    }
  });
});
