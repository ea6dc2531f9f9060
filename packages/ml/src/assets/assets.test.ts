import { loadGlove } from './index';

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
