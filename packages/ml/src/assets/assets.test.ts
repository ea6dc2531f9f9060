import { loadGlove, loadWordNet } from './load';

describe('shipped GloVe subset', () => {
  it('when loaded, then related words are closer than unrelated ones and unknown words have no vector', () => {
    const glove = loadGlove();
    expect(glove.dim).toBe(100);
    expect(glove.similarity('london', 'paris')).toBeGreaterThan(glove.similarity('london', 'banana') + 0.3);
    expect(glove.similarity('person', 'man')).toBeGreaterThan(0.4);
    expect(glove.has('London')).toBe(true);
    expect(glove.vector('qwertyuiopzxcv')).toBeNull();
  });
});

describe('shipped WordNet nouns', () => {
  it('when loaded, then senses come in WordNet order and hyponym and instance links are the inverse of the hypernym pointers', () => {
    const wn = loadWordNet();
    expect(wn.count).toBe(82192);
    const dog = wn.senses('dog')[0]!;
    expect(wn.lemmas(dog)).toContain('domestic_dog');
    const canine = wn.senses('canine').find((s) => wn.hyponyms(s).includes(dog));
    expect(canine).toBeDefined();
    const capital = wn.senses('national_capital')[0]!;
    expect(wn.instances(capital).some((s) => wn.lemmas(s).includes('Paris'))).toBe(true);
    expect(wn.senses('qwertyuiop')).toEqual([]);
  });
});
