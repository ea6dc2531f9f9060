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

  it('when a label names no kind of name (a date, an event, a product), then people and places are not its entities', () => {
    const names = 'Anna Berg was born in Paris on 3 May 1990 .';
    const texts = (labels: string[]) => zeroShotSpans(names, labels).map((s) => `${s.text}:${s.label}`);
    expect(texts(['date'])).toEqual(['3 May 1990:date']);
    expect(texts(['person', 'date'])).toEqual(['Anna Berg:person', '3 May 1990:date']);
    expect(texts(['product'])).toEqual([]);
    expect(texts(['time', 'organization'])).toEqual(['3 May 1990:time']);
  });

  it('when a label is near "date" in GloVe but no time (an event, a meeting), then dates are not its entities', () => {
    const names = 'Anna Berg was born in Paris on 3 May 1990 .';
    const texts = (labels: string[]) => zeroShotSpans(names, labels).map((s) => `${s.text}:${s.label}`);
    expect(texts(['event'])).toEqual([]);
    expect(texts(['meeting', 'date'])).toEqual(['3 May 1990:date']);
    expect(texts(['birthday'])).toEqual(['3 May 1990:birthday']);
    expect(texts(['when'])).toEqual(['3 May 1990:when']); // not in WordNet: GloVe alone
  });

  it('when two labels are both places, then each place goes to the label WordNet lists it under', () => {
    const texts = (text: string, labels: string[]) => zeroShotSpans(text, labels).map((s) => `${s.text}:${s.label}`);
    const capital = 'Paris is the capital of France.';
    expect(texts(capital, ['country', 'city'])).toEqual(['Paris:city', 'France:country']);
    expect(texts(capital, ['city', 'country'])).toEqual(['Paris:city', 'France:country']);
    expect(texts('Angela Merkel visited Germany and Berlin.', ['country', 'city'])).toEqual([
      'Germany:country',
      'Berlin:city',
    ]);
  });

  it('when a label is near a pattern in GloVe but WordNet files it elsewhere, then the pattern does not serve it', () => {
    // GloVe: "country" is 0.62 from "number" and 0.60 from "money", "company" 0.61 from "cost".
    const texts = (text: string, labels: string[]) => zeroShotSpans(text, labels).map((s) => `${s.text}:${s.label}`);
    expect(texts('Microsoft paid $5 million in Texas.', ['company', 'state', 'price'])).toEqual([
      'Microsoft:company',
      '$5 million:price',
      'Texas:state',
    ]);
    expect(texts('Call +1 555 010 0199 from Canada.', ['country', 'phone'])).toEqual([
      '+1 555 010 0199:phone',
      'Canada:country',
    ]);
  });

  it('when a label is a kind of person, then people are still its entities, and unrelated names are not', () => {
    const spans = zeroShotSpans('The novel by Anna Berg was praised in Paris .', ['author', 'date']);
    expect(spans.map((s) => `${s.text}:${s.label}`)).toEqual(['Anna Berg:author']);
  });

  it('when GloVe puts a kind-of-person label far from "person" but WordNet files it as one, then people are its entities', () => {
    // GloVe: "politician" 0.45 from "person", "musician" 0.36: under the floor names need without WordNet.
    const texts = (text: string, labels: string[]) => zeroShotSpans(text, labels).map((s) => `${s.text}:${s.label}`);
    expect(texts('Barack Obama visited Germany in 2013.', ['politician', 'country'])).toEqual([
      'Barack Obama:politician',
      'Germany:country',
    ]);
    expect(texts('The concert by Anna Berg was held in Paris .', ['musician', 'city'])).toEqual([
      'Anna Berg:musician',
      'Paris:city',
    ]);
  });

  it('when a price ends a sentence or a day is named, then the price stops at its last digit and the day is a date', () => {
    const text = 'The iPhone 16 costs $799. We ship on Saturday, 3 May 2025, or on 2025-05-10 for 1,200.50 euros.';
    const spans = zeroShotSpans(text, ['price', 'date']).map((s) => `${s.text}:${s.label}`);
    expect(spans).toEqual([
      '$799:price',
      'Saturday:date',
      '3 May 2025:date',
      '2025-05-10:date',
      '1,200.50 euros:price',
    ]);
  });
});
