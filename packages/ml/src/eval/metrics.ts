/** Evaluation metrics: span-level for extraction (exact type and offsets), label-level for classification. */

export interface Span {
  start: number;
  end: number;
  label: string;
}

export interface PRF {
  precision: number;
  recall: number;
  f1: number;
}

export interface LabelPRF extends PRF {
  /** Gold occurrences of the label. */
  support: number;
}

/** Micro-averaged scores with the per-label breakdown. */
export interface Report extends PRF {
  perLabel: Record<string, LabelPRF>;
  /** Each example's [true positives, false positives, false negatives], in order: paired comparisons resample these. */
  perExample?: [number, number, number][];
}

const prf = (tp: number, fp: number, fn: number): PRF => {
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
  return { precision, recall, f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall) };
};

/** Micro P/R/F1 over items matched exactly, plus per-label figures. `key` identifies an item within one example. */
function score<T>(gold: T[][], pred: T[][], key: (item: T) => string, label: (item: T) => string): Report {
  if (gold.length !== pred.length)
    throw new Error(`gold has ${gold.length} examples but predictions have ${pred.length}`);
  const counts = new Map<string, { tp: number; fp: number; fn: number }>();
  const bump = (l: string, field: 'tp' | 'fp' | 'fn') => {
    const c = counts.get(l) ?? { tp: 0, fp: 0, fn: 0 };
    c[field]++;
    counts.set(l, c);
  };
  const perExample: [number, number, number][] = [];
  for (let i = 0; i < gold.length; i++) {
    const goldKeys = new Set(gold[i]!.map(key));
    const predKeys = new Set<string>();
    const row: [number, number, number] = [0, 0, 0];
    for (const p of pred[i]!) {
      const k = key(p);
      if (predKeys.has(k)) continue;
      predKeys.add(k);
      const hit = goldKeys.has(k);
      bump(label(p), hit ? 'tp' : 'fp');
      row[hit ? 0 : 1]++;
    }
    for (const g of gold[i]!)
      if (!predKeys.has(key(g))) {
        bump(label(g), 'fn');
        row[2]++;
      }
    perExample.push(row);
  }
  let tp = 0;
  let fp = 0;
  let fn = 0;
  const perLabel: Record<string, LabelPRF> = {};
  for (const [l, c] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
    tp += c.tp;
    fp += c.fp;
    fn += c.fn;
    perLabel[l] = { ...prf(c.tp, c.fp, c.fn), support: c.tp + c.fn };
  }
  return { ...prf(tp, fp, fn), perLabel, perExample };
}

/** Entities (and relation arguments): a prediction counts only with the exact label and offsets. */
export function spanPRF(gold: Span[][], pred: Span[][]): Report {
  return score(
    gold,
    pred,
    (s) => `${s.label}\u0000${s.start}\u0000${s.end}`,
    (s) => s.label,
  );
}

/** Classification, single- or multi-label: each example's gold and predicted label sets. */
export function classificationPRF(gold: string[][], pred: string[][]): Report {
  const wrap = (rows: string[][]) => rows.map((labels) => labels.map((l) => ({ l })));
  return score(
    wrap(gold),
    wrap(pred),
    (x) => x.l,
    (x) => x.l,
  );
}

export interface Relation {
  label: string;
  head: Span;
  tail: Span;
}

/** Relations: exact relation label and exact head and tail spans. */
export function relationPRF(gold: Relation[][], pred: Relation[][]): Report {
  const k = (r: Relation) =>
    `${r.label}\u0000${r.head.label}:${r.head.start}:${r.head.end}\u0000${r.tail.label}:${r.tail.start}:${r.tail.end}`;
  return score(gold, pred, k, (r) => r.label);
}

/**
 * Relation classification with given spans, the TACRED and SemEval convention: one gold and one predicted label
 * per pair, `null` for no relation. Micro precision, recall and F1 count the relation labels only (a pair predicted
 * as a relation is a false positive unless its gold is that relation; a related pair not predicted as its relation
 * is a false negative), per label too; accuracy counts every pair, no-relation ones included.
 */
export function relationClassificationPRF(
  gold: readonly (string | null)[],
  pred: readonly (string | null)[],
): Report & { accuracy: number } {
  const asSet = (labels: readonly (string | null)[]) => labels.map((l) => (l === null ? [] : [l]));
  const report = classificationPRF(asSet(gold), asSet(pred));
  const correct = gold.filter((g, i) => g === pred[i]).length;
  return { ...report, accuracy: gold.length ? correct / gold.length : 0 };
}
