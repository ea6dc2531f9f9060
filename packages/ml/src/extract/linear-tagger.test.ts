import { spanPRF } from '../eval/metrics';
import type { Example } from '../data';
import { LinearTagger } from './linear-tagger';

const ex = (text: string, spans: [string, string][]): Example => ({
  text,
  entities: spans.map(([surface, label]) => ({
    start: text.indexOf(surface),
    end: text.indexOf(surface) + surface.length,
    label,
  })),
});

const train = [
  ex('Alice Moreau lives in Paris .', [
    ['Alice Moreau', 'person'],
    ['Paris', 'location'],
  ]),
  ex('Bob Chen moved to Berlin last year .', [
    ['Bob Chen', 'person'],
    ['Berlin', 'location'],
  ]),
  ex('Carla Diaz visited Madrid .', [
    ['Carla Diaz', 'person'],
    ['Madrid', 'location'],
  ]),
  ex('David Kim works in Seoul .', [
    ['David Kim', 'person'],
    ['Seoul', 'location'],
  ]),
  ex('Eva Novak flew to Prague .', [
    ['Eva Novak', 'person'],
    ['Prague', 'location'],
  ]),
  ex('The weather was fine .', []),
];
const heldOut = [
  ex('Frank Weber lives in Vienna .', [
    ['Frank Weber', 'person'],
    ['Vienna', 'location'],
  ]),
];

describe('linear entity tagger', () => {
  it('when trained on a few sentences, then it finds unseen names with exact character offsets', () => {
    const model = LinearTagger.train(train, { epochs: 10, seed: 1 });
    const found = model.extract(heldOut[0]!.text!);
    expect(found.map(({ text, label, start, end }) => ({ text, label, start, end }))).toEqual([
      { text: 'Frank Weber', label: 'person', start: 0, end: 11 },
      { text: 'Vienna', label: 'location', start: 21, end: 27 },
    ]);
    for (const s of found) expect(s.confidence).toBeGreaterThan(0);
    expect(
      spanPRF(
        heldOut.map((e) => e.entities!),
        [found],
      ).f1,
    ).toBe(1);
  });

  it('when untrained (zero epochs of learning), then it finds nothing, so training is what changes the output', () => {
    const untrained = LinearTagger.train(train, { epochs: 0 });
    expect(untrained.extract(heldOut[0]!.text!)).toEqual([]);
  });

  it('when the threshold is above every confidence, then nothing is returned', () => {
    const model = LinearTagger.train(train, { epochs: 10, seed: 1 });
    expect(model.extract(heldOut[0]!.text!, 1.01)).toEqual([]);
  });
});
