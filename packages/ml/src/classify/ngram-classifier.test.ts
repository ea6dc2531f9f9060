import { classificationPRF } from '../eval/metrics';
import { ClassifierTrainer, NaiveBayes, NgramClassifier, ngramLearningRate, ngramNames } from './ngram-classifier';

const train = [
  ['my card has not arrived yet', 'card_arrival'],
  ['when will my new card arrive', 'card_arrival'],
  ['still waiting for the card in the post', 'card_arrival'],
  ['how do I top up my account', 'top_up'],
  ['top up with a bank transfer', 'top_up'],
  ['can I add money by card', 'top_up'],
  ['I lost my phone', 'lost_phone'],
  ['my phone was stolen yesterday', 'lost_phone'],
  ['someone took my phone what do I do', 'lost_phone'],
].map(([text, label]) => ({ text: text!, labels: [label!] }));
const heldOut = [
  ['the card still has not arrived', 'card_arrival'],
  ['I want to top up by transfer', 'top_up'],
  ['phone stolen', 'lost_phone'],
];

describe('n-gram classifier', () => {
  it('when a checkpoint continues on rows with a class it never saw, then the class is appended and learned', () => {
    const rows = (label: string, words: string[]) => words.map((w) => ({ text: `please ${w} now`, labels: [label] }));
    const original = [...rows('card', ['card', 'plastic']), ...rows('lost', ['lost', 'stolen'])];
    const first = new ClassifierTrainer(original, { bucketsLog2: 10, seed: 1 });
    for (let i = 0; i < 5; i++) first.runEpoch();
    // As an adaptation trains: the original rows plus the corrections.
    const more = [...original, ...rows('rate', ['rate', 'exchange', 'currency'])];
    const next = new ClassifierTrainer(more, { bucketsLog2: 10, seed: 1 }, first.snapshot());
    for (let i = 0; i < 20; i++) next.runEpoch();
    expect(next.snapshot().labels).toEqual(['card', 'lost', 'rate']);
    expect(next.model().predict('please exchange now').labels).toEqual(['rate']);
    expect(next.model().predict('please stolen now').labels).toEqual(['lost']);
  });

  it('when trained on a little data, then the loss falls and held-out F1 beats the untrained model', () => {
    const untrained = NgramClassifier.untrained(['card_arrival', 'lost_phone', 'top_up']);
    const before = classificationPRF(
      heldOut.map(([, l]) => [l!]),
      heldOut.map(([t]) => [untrained.predict(t!).label]),
    ).f1;
    const { model, epochLosses } = NgramClassifier.train(train, { epochs: 10, seed: 1 });
    expect(epochLosses[epochLosses.length - 1]!).toBeLessThan(epochLosses[0]! / 2);
    const after = classificationPRF(
      heldOut.map(([, l]) => [l!]),
      heldOut.map(([t]) => [model.predict(t!).label]),
    ).f1;
    expect(after).toBe(1);
    expect(after).toBeGreaterThan(before);
  });

  it('when trained twice with the same seed, then the weights are identical; serialised, it predicts the same', () => {
    const a = NgramClassifier.train(train, { epochs: 3, seed: 7 }).model;
    const b = NgramClassifier.train(train, { epochs: 3, seed: 7 }).model;
    expect(JSON.stringify(a.toJSON())).toBe(JSON.stringify(b.toJSON()));
    const restored = NgramClassifier.fromJSON(JSON.parse(JSON.stringify(a.toJSON())));
    expect(restored.predict('my phone is gone')).toEqual(a.predict('my phone is gone'));
  });

  it('when training is cancelled, then it stops with an error', () => {
    const controller = new AbortController();
    controller.abort();
    expect(() => NgramClassifier.train(train, { signal: controller.signal })).toThrow(/cancelled/);
  });

  it('when multi-label, then every label above the threshold is returned', () => {
    const data = [
      { text: 'refund and cancel my order', labels: ['refund', 'cancel'] },
      { text: 'refund please', labels: ['refund'] },
      { text: 'cancel it', labels: ['cancel'] },
    ];
    const rates: number[] = [];
    const { model } = NgramClassifier.train(data, {
      epochs: 30,
      multiLabel: true,
      seed: 3,
      onProgress: (p) => rates.push(p.learningRate),
    });
    expect(model.predict('refund and cancel').labels.sort()).toEqual(['cancel', 'refund']);
    // Sigmoids keep the larger step (a small one leaves them short of the 0.5 threshold); softmax takes 0.03.
    expect(new Set(rates)).toEqual(new Set([0.5]));
    expect(ngramLearningRate('words+char4', false)).toBe(0.03);
  });

  it('when progress is reported, then it carries epoch, step, loss, throughput and ETA', () => {
    const seen: number[] = [];
    NgramClassifier.train(train, {
      epochs: 2,
      onProgress: (p) => seen.push(p.epoch, p.step, Number(p.etaSeconds >= 0), Number(p.examplesPerSecond > 0)),
    });
    expect(seen).toEqual([1, 9, 1, 1, 2, 18, 1, 1]);
  });

  it('when a word is misspelt, then its character 4-grams still carry it to the class it was trained on', () => {
    const rows = [
      ...['I transferred money', 'the money I transferred', 'transferred it yesterday'].map((t) => [t, 'transfer']),
      ...['I topped up money', 'the money I topped up', 'topped it up yesterday'].map((t) => [t, 'top_up']),
    ].map(([text, label]) => ({ text: text!, labels: [label!] }));
    expect(ngramNames('Transfered!', 'words+char4')).toEqual(
      expect.arrayContaining(['transfered', '#<tra', '#tran', '#ered', '#red>']),
    );
    const chars = NgramClassifier.train(rows, { epochs: 10, seed: 1 }).model;
    const words = NgramClassifier.train(rows, { epochs: 10, seed: 1, features: 'words' }).model;
    expect(chars.featureSet).toBe('words+char4');
    expect(chars.predict('transfered').label).toBe('transfer');
    expect(chars.predict('transfered').confidence).toBeGreaterThan(0.8);
    // Words alone know nothing of the misspelt word: only the bias answers.
    expect(words.predict('transfered').confidence).toBeLessThan(0.6);
  });

  it('when a model or checkpoint was stored before character n-grams, then it keeps reading words alone', () => {
    const words = NgramClassifier.train(train, { epochs: 3, seed: 7, features: 'words' }).model;
    const { features, ...stored } = words.toJSON() as Parameters<typeof NgramClassifier.fromJSON>[0];
    expect(features).toBe('words');
    const restored = NgramClassifier.fromJSON(stored);
    expect(restored.featureSet).toBe('words');
    expect(restored.predict('my phone is gone')).toEqual(words.predict('my phone is gone'));
    const trainer = new ClassifierTrainer(train, { seed: 7, features: 'words' });
    trainer.runEpoch();
    const { features: _, ...old } = trainer.snapshot();
    expect(new ClassifierTrainer(train, { seed: 7 }, old).features).toBe('words');
    expect(new ClassifierTrainer(train, { seed: 7 }).features).toBe('words+char4');
  });

  it('when Naive Bayes is trained, then it also separates the classes (it is the baseline)', () => {
    const nb = NaiveBayes.train(train.map((e) => ({ text: e.text, label: e.labels[0]! })));
    expect(heldOut.map(([t]) => nb.predict(t!))).toEqual(heldOut.map(([, l]) => l));
  });
});
