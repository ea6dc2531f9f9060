import { loadGlove } from '../assets/load';
import { loadEncoderBase } from './base';
import { EntityEncoder } from './train';

describe('EntityEncoder.pooledState', () => {
  const base = loadEncoderBase();
  const encoder = new EntityEncoder(base.config, loadGlove(), base.weights, null, []);
  const labels = ['card_arrival', 'lost_or_stolen_card', 'exchange_rate'];

  it('when a text has words, then its pooled state has the model width and classify gives the same scores from it', () => {
    const text = 'I lost my card yesterday';
    const pooled = encoder.pooledState(text);
    expect(pooled).toHaveLength(base.config.dim);
    const fromText = encoder.classify(text, 'intent', labels);
    expect(encoder.classify(text, 'intent', labels, pooled)).toEqual(fromText);
    expect(fromText.reduce((s, x) => s + x.confidence, 0)).toBeCloseTo(1, 5);
    expect(new Set(fromText.map((s) => s.confidence)).size).toBe(labels.length);
  });

  it('when a text has no words, then its pooled state is null and classify is uniform', () => {
    expect(encoder.pooledState('   ')).toBeNull();
    expect(encoder.classify('   ', 'intent', labels).map((s) => s.confidence)).toEqual([1 / 3, 1 / 3, 1 / 3]);
  });
});
