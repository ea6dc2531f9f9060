import type { NgramClassifier } from '../classify/ngram-classifier';
import type { Example } from '../data';
import type { EntityEncoder } from '../encoder';
import { classificationPRF, relationPRF, spanPRF, type Relation, type Report } from '../eval/metrics';
import { classifiersOf, encoderOf, readBundle } from './bundle';
import { prepare } from './rows';
import { best, taskScores } from './task-scores';
import type { CanonicalRow, Metrics } from './types';

/**
 * Metrics on held-out rows: entities (span-exact) when the data has them, then
 * relations (label, argument spans and types exact; per label as
 * `relation/<label>`), then classification; the first present is the headline.
 */
export function evaluate(
  model: { encoder: EntityEncoder | null; classifiers: Map<string, NgramClassifier> },
  heldout: (CanonicalRow | Example)[],
): Metrics {
  const data = prepare(heldout);
  const reports: Report[] = [];
  const perLabel: Metrics['per_label'] = {};
  if (model.encoder && data.hasEntities) {
    const r = spanPRF(
      data.entities.map((e) => e.entities ?? []),
      data.entities.map((e) => model.encoder!.extract(e.text ?? '')),
    );
    reports.push(r);
    for (const [l, v] of Object.entries(r.perLabel)) perLabel[l] = v;
  }
  const annotated = data.entities.filter((e) => e.relations);
  if (model.encoder?.relationLabels.length && annotated.length) {
    const r = relationPRF(
      annotated.map((e) => e.relations as Relation[]),
      annotated.map((e) => model.encoder!.extractRelations(e.text ?? '')),
    );
    reports.push(r);
    for (const [l, v] of Object.entries(r.perLabel)) perLabel[`relation/${l}`] = v;
  }
  for (const t of data.tasks) {
    const clf = model.classifiers.get(t.task);
    if (!clf) continue;
    const r = classificationPRF(
      t.examples.map((e) => e.labels),
      t.examples.map((e) =>
        clf.multiLabel
          ? clf.predict(e.text).labels
          : [best(taskScores(model.encoder, clf, e.text, t.task, clf.labels))],
      ),
    );
    reports.push(r);
    for (const [l, v] of Object.entries(r.perLabel)) perLabel[`${t.task}/${l}`] = v;
  }
  const main = reports[0] ?? { precision: 0, recall: 0, f1: 0 };
  const round = (x: number) => Number(x.toFixed(4));
  return {
    f1: round(main.f1),
    precision: round(main.precision),
    recall: round(main.recall),
    per_label: Object.fromEntries(
      Object.entries(perLabel).map(([l, v]) => [
        l,
        { precision: round(v.precision), recall: round(v.recall), f1: round(v.f1), support: v.support },
      ]),
    ),
  };
}

/** Scores a bundle on held-out rows (span-exact entities, relations, per-task classification). */
export function evaluateBundle(bundle: Uint8Array, rows: (CanonicalRow | Example)[]): Metrics {
  const { meta, tensors } = readBundle(bundle);
  return evaluate({ encoder: encoderOf(meta, tensors)?.merged() ?? null, classifiers: classifiersOf(meta) }, rows);
}
