import { answeredByEncoder, baseEntities, baseEntitiesMany } from './base-entities';
import { zeroShotSpans } from './entities';

describe('the zero-shot base entities', () => {
  it('answers the named types it was pretrained on from the encoder, and every other label from the rules', () => {
    expect(
      ['person', 'Location', 'organisation', 'company', 'city', 'misc', 'nationality'].every(answeredByEncoder),
    ).toBe(true);
    expect(['email', 'date', 'animal', 'product'].some(answeredByEncoder)).toBe(false);
  });

  it('finds people, places and organisations it has never seen in context, with offsets', () => {
    const text = 'Yesterday Marta Kowalczyk flew from Gdansk to meet the board of Zentrix Logistics.';
    const spans = baseEntities(text, ['person', 'location', 'organization'], 0.5);
    for (const s of spans) expect(text.slice(s.start, s.end)).toBe(s.text);
    const by = (label: string) => spans.filter((s) => s.label === label).map((s) => s.text);
    expect(by('person')).toEqual(['Marta Kowalczyk']);
    expect(by('location')).toEqual(['Gdansk']);
    expect(by('organization')).toEqual(['Zentrix Logistics']);
  });

  it('keeps the rules for pattern and gazetteer labels, where they do not overlap an encoder span', () => {
    const text = 'Write to Anna Berg at anna.berg@example.com before 3 May 2026.';
    const spans = baseEntities(text, ['person', 'email', 'date'], 0.5);
    const people = spans.filter((s) => s.label === 'person');
    expect(people.map((s) => s.text)).toEqual(['Anna Berg']);
    // Where a rule's span overlaps an encoder span, the encoder's wins (the rules no longer call a name a date).
    const rules = zeroShotSpans(text, ['email', 'date'], 0.5);
    expect(rules.map((s) => s.text)).toEqual(['anna.berg@example.com', '3 May 2026']);
    expect(spans.filter((s) => s.label !== 'person')).toEqual(
      rules.filter((r) => !people.some((p) => r.start < p.end && r.end > p.start)),
    );
    expect(spans.map((s) => s.text)).toEqual(['Anna Berg', 'anna.berg@example.com', '3 May 2026']);
    expect(spans.map((s) => s.start)).toEqual([...spans.map((s) => s.start)].sort((a, b) => a - b));
  });

  it('falls back to the rules for a text in which the encoder finds no name (a bare name has no context)', () => {
    expect(baseEntities('Ada Lovelace', ['person'], 0.5)).toEqual(zeroShotSpans('Ada Lovelace', ['person'], 0.5));
    expect(baseEntities('Ada Lovelace', ['person'], 0.5).map((s) => s.text)).toEqual(['Ada Lovelace']);
  });

  it('gives the same spans batched as one text at a time', () => {
    const texts = ['Marta Kowalczyk lives in Gdansk.', '', 'Mail ops@zentrix.io about Zentrix Logistics.'];
    const labels = ['person', 'city', 'organization', 'email'];
    // Batched matmuls round differently in the last bits: compare confidences to 6 places.
    const rounded = (spans: { confidence: number }[][]) =>
      spans.map((list) => list.map((s) => ({ ...s, confidence: Number(s.confidence.toFixed(6)) })));
    expect(rounded(baseEntitiesMany(texts, labels, 0.5))).toEqual(
      rounded(texts.map((t) => baseEntities(t, labels, 0.5))),
    );
  });
});

describe('abbreviated names in the zero-shot base', () => {
  const labels = ['person', 'location', 'organization'];
  const by = (text: string, label: string) =>
    baseEntities(text, labels, 0.5)
      .filter((s) => s.label === label)
      .map((s) => s.text);

  it('when a place name begins with an abbreviation, then the span is the whole name and nothing inside it is another', () => {
    expect(by('Edmund Hillary climbed Mt. Everest in 1953.', 'location')).toEqual(['Mt. Everest']);
    expect(by('Dr. Smith moved to St. Louis last year.', 'location')).toEqual(['St. Louis']);
    expect(by('Dr. Smith moved to St. Louis last year.', 'person')).not.toContain('Louis');
  });

  it('when a name ends in a company suffix, then its period is part of it', () => {
    expect(by('She works for Apple Inc. in Cupertino.', 'organization')).toEqual(['Apple Inc.']);
  });

  it('when spans are rewritten, then offsets still slice the text', () => {
    const text = 'Edmund Hillary climbed Mt. Everest; she works for Apple Inc. now.';
    for (const s of baseEntities(text, labels, 0.5)) expect(text.slice(s.start, s.end)).toBe(s.text);
  });
});
