/**
 * Token-overlap precision, recall and F1 of generated text against a reference, as the SQuAD evaluation script
 * (v2.0) scores an answer: both texts are normalised (lower case, ASCII punctuation removed, the articles a, an and
 * the removed, whitespace collapsed) and split on whitespace; the tokens in common are counted with multiplicity.
 */
import type { PRF } from './metrics';

/** Python's `string.punctuation`, which the SQuAD script strips. */
const PUNCTUATION = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');

/** The articles as whole words; word characters as Python's Unicode `\w` sees them, so `\b` matches its. */
const ARTICLES = /(?<![\p{L}\p{N}\p{M}_])(?:a|an|the)(?![\p{L}\p{N}\p{M}_])/gu;

/** SQuAD's `normalize_answer`: lower case, no punctuation, no articles, single spaces. */
export function normalizeAnswer(text: string): string {
  const lower = text.toLowerCase();
  const unpunctuated = [...lower].filter((ch) => !PUNCTUATION.has(ch)).join('');
  return unpunctuated.replace(ARTICLES, ' ').split(/\s+/).filter(Boolean).join(' ');
}

const tokensOf = (text: string): string[] => normalizeAnswer(text).split(' ').filter(Boolean);

/**
 * One example's figures. Two texts that normalise to nothing agree fully (1, 1, 1); one empty text against a
 * non-empty one, or no token in common, scores 0 (SQuAD v2.0's rule).
 */
export function tokenPRF(prediction: string, reference: string): PRF {
  const predicted = tokensOf(prediction);
  const wanted = tokensOf(reference);
  if (predicted.length === 0 || wanted.length === 0) {
    const same = predicted.length === wanted.length ? 1 : 0;
    return { precision: same, recall: same, f1: same };
  }
  const counts = new Map<string, number>();
  for (const t of wanted) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of predicted) {
    const left = counts.get(t) ?? 0;
    if (left > 0) {
      common++;
      counts.set(t, left - 1);
    }
  }
  if (common === 0) return { precision: 0, recall: 0, f1: 0 };
  const precision = common / predicted.length;
  const recall = common / wanted.length;
  return { precision, recall, f1: (2 * precision * recall) / (precision + recall) };
}

/** The unweighted mean of each example's precision, recall and F1 (SQuAD's macro average); zeros for none. */
export function meanTokenPRF(pairs: readonly { prediction: string; reference: string }[]): PRF {
  if (pairs.length === 0) return { precision: 0, recall: 0, f1: 0 };
  const sum = { precision: 0, recall: 0, f1: 0 };
  for (const { prediction, reference } of pairs) {
    const s = tokenPRF(prediction, reference);
    sum.precision += s.precision;
    sum.recall += s.recall;
    sum.f1 += s.f1;
  }
  const n = pairs.length;
  return { precision: sum.precision / n, recall: sum.recall / n, f1: sum.f1 / n };
}
