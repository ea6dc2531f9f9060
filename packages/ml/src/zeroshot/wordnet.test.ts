import { zeroShotExtract, zeroShotSpans } from './entities';
import { gazetteerSpans, labelSenses, wordnetGazetteer } from './wordnet';

const texts = (spans: { text: string }[]) => spans.map((s) => s.text);

describe('WordNet gazetteer in the zero-shot base', () => {
  it('when the label is a kind of common noun, then its hyponyms are found in any case and in the plural', () => {
    expect(zeroShotExtract('The dog chased a cat .', { entities: ['animal'] }).entities.animal).toEqual(['dog', 'cat']);
    expect(texts(zeroShotSpans('Wolves and foxes hunt at night .', ['animal']))).toEqual(['Wolves', 'foxes']);
    expect(texts(zeroShotSpans('He caught influenza last winter and later pneumonia .', ['disease']))).toEqual([
      'influenza',
      'pneumonia',
    ]);
  });

  it('when the label names a kind of place, then instances are found as names and common nouns are left out', () => {
    const spans = zeroShotSpans('We flew from Paris to New York , a city we love .', ['city']);
    expect(texts(spans)).toEqual(['Paris', 'New York']);
    expect(wordnetGazetteer('city').namedEntityType).toBe(true);
    expect(wordnetGazetteer('animal').namedEntityType).toBe(false);
  });

  it('when a name is written in lower case, then it does not match, but a capitalised form of an all-caps lemma does', () => {
    expect(gazetteerSpans('a trip to paris', 'city')).toEqual([]);
    expect(texts(zeroShotSpans('It was written in Fortran .', ['programming language']))).toEqual(['Fortran']);
  });

  it('when the label is a multiword lemma, then that lemma is its sense, and an unknown label gives no gazetteer', () => {
    expect(labelSenses('programming language')).toHaveLength(1);
    expect(labelSenses('diseases')).toEqual(labelSenses('disease'));
    expect(labelSenses('qwertyuiop')).toEqual([]);
    expect(gazetteerSpans('The dog barked .', 'qwertyuiop')).toEqual([]);
  });

  it('when confidences are compared, then names beat common nouns, and a name inside a longer name loses confidence', () => {
    const [dog] = gazetteerSpans('The dog barked .', 'animal');
    const [paris] = gazetteerSpans('I live in Paris .', 'city');
    const [inside] = gazetteerSpans('I support Paris Saint-Germain .', 'city');
    expect(paris!.confidence).toBeGreaterThan(dog!.confidence);
    expect(inside!.confidence).toBeLessThan(paris!.confidence - 0.2);
    expect(texts(zeroShotSpans('I support Paris Saint-Germain .', ['city']))).not.toContain('Paris');
  });

  it("when the threshold is above a span's confidence, then that span is not returned", () => {
    const [dog] = gazetteerSpans('The dog barked .', 'animal');
    expect(texts(zeroShotSpans('The dog barked .', ['animal'], dog!.confidence))).toEqual(['dog']);
    expect(zeroShotSpans('The dog barked .', ['animal'], dog!.confidence + 0.01)).toEqual([]);
  });

  it('when spans of several signals overlap, then one span is kept per stretch of text', () => {
    const spans = zeroShotSpans('He speaks English and French , and is learning Japanese .', ['language']);
    for (const a of spans) for (const b of spans) if (a !== b) expect(a.end <= b.start || b.end <= a.start).toBe(true);
    expect(texts(spans)).toContain('Japanese');
  });
});
