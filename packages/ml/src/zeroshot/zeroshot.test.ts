import { zeroShotExtract, zeroShotSpans } from './entities';

describe('zero-shot entity extraction', () => {
  const text = 'Barack Obama met executives of Microsoft in Seattle on 3 May 2016 ; write to press@example.com .';

  it('when labels are named at request time, then GLiNER2 shapes come back keyed by label', () => {
    const result = zeroShotExtract(text, { entities: ['person', 'company', 'city', 'email'] });
    expect(result.entities.person).toContain('Barack Obama');
    expect(result.entities.city).toContain('Seattle');
    expect(result.entities.email).toEqual(['press@example.com']);
    expect(Object.keys(result.entities)).toEqual(['person', 'company', 'city', 'email']);
  });

  it('when confidence and spans are asked for, then items are {text, confidence, start, end} with true offsets', () => {
    const result = zeroShotExtract(text, { entities: ['person'] }, { include_confidence: true, include_spans: true });
    const item = result.entities.person![0] as { text: string; confidence: number; start: number; end: number };
    expect(text.slice(item.start, item.end)).toBe(item.text);
    expect(item.confidence).toBeGreaterThan(0);
    expect(item.confidence).toBeLessThanOrEqual(1);
  });

  it('when the threshold rises, then fewer or equal spans come back, and 1.01 returns none', () => {
    const low = zeroShotSpans(text, ['person', 'city', 'company'], 0.3).length;
    const high = zeroShotSpans(text, ['person', 'city', 'company'], 0.9).length;
    expect(high).toBeLessThanOrEqual(low);
    expect(zeroShotSpans(text, ['person', 'city', 'company'], 1.01)).toEqual([]);
  });

  it('when a label matches no signal, then its list is empty rather than missing', () => {
    expect(zeroShotExtract('nothing to see here .', { entities: ['vehicle'] })).toEqual({ entities: { vehicle: [] } });
  });
});
