export * from './eval';
export * from './data';
export * from './text';
export * from './classify/ngram-classifier';
export * from './extract/linear-tagger';
export * from './assets';
export * from './zeroshot';
