import { extractBaseModel } from './base-model';
import { SchemaError, normalizeSchema } from '../schema/normalize';

describe('whetstone-extract-base (zero-shot)', () => {
  const text = 'Tim Cook met Satya Nadella in Seattle on 12 March 2025. The meeting was great.';

  it('returns GLiNER2 shapes for entities, classifications, relations and structures', () => {
    const out = extractBaseModel.extract(text, {
      entities: ['person', 'city'],
      classifications: [{ task: 'sentiment', labels: ['positive', 'negative'] }],
      relations: ['met'],
      structures: { meeting: { attendee: 'list', date: 'str' } },
    });
    expect(out.entities).toEqual({ person: ['Tim Cook', 'Satya Nadella'], city: ['Seattle'] });
    expect(out.sentiment).toBe('positive');
    expect(out.relation_extraction).toEqual({ met: [['Tim Cook', 'Satya Nadella']] });
    expect(out.meeting).toEqual([expect.objectContaining({ date: '12 March 2025' })]);
  });

  it('adds confidences and offsets on request, and honours the threshold', () => {
    const out = extractBaseModel.extract(
      text,
      { entities: ['person'] },
      { includeConfidence: true, includeSpans: true },
    );
    const first = (out.entities as Record<string, { text: string; start: number; end: number; confidence: number }[]>)
      .person![0]!;
    expect(text.slice(first.start, first.end)).toBe(first.text);
    expect(first.confidence).toBeGreaterThan(0.5);
    const strict = extractBaseModel.extract(text, { entities: ['person'] }, { threshold: 0.999 });
    expect((strict.entities as Record<string, string[]>).person).toEqual([]);
  });

  it('takes classifications as a dict keyed by task, multi-label lists included', () => {
    const out = extractBaseModel.extract(
      'I want a refund and to cancel my subscription',
      { classifications: { intent: { labels: ['refund', 'cancel', 'greeting'], multi_label: true } } },
      { threshold: 0.5 },
    );
    expect(out.intent).toEqual(expect.arrayContaining(['refund', 'cancel']));
    expect(out.intent).not.toContain('greeting');
  });
});

describe('normalizeSchema', () => {
  it('names every bad field, and refuses an empty schema', () => {
    expect(() => normalizeSchema({})).toThrow(SchemaError);
    try {
      normalizeSchema({ entities: [''], classifications: [{ task: 't', labels: ['only-one'] }], colour: 1 });
    } catch (err) {
      expect((err as SchemaError).issues.map((i) => i.field)).toEqual([
        'schema.colour',
        'schema.entities[0]',
        'schema.classifications[0].labels',
      ]);
    }
  });

  it('reads GLiNER2 field specs with choices', () => {
    expect(
      normalizeSchema({ structures: { product: { name: 'str', size: 'size::[small|large]::str' } } }).structures[0]!
        .fields[1],
    ).toEqual({ name: 'size', type: 'str', choices: ['small', 'large'], description: '' });
  });
});
