import type { NgramClassifier } from '../classify/ngram-classifier';
import { isNoRelation, type Example } from '../data';
import type { EntityEncoder } from '../encoder';
import {
  classificationPRF,
  relationClassificationPRF,
  relationPRF,
  spanPRF,
  type Relation,
  type Report,
} from '../eval/metrics';
import { classifiersOf, encoderOf, readBundle } from './bundle';
import { prepare } from './rows';
import { best, taskScores } from './task-scores';
import type { CanonicalRow, Metrics } from './types';

/** What to score: `labels` keeps only those labels (gold and predicted; a task's as `<label>` or `<task>/<label>`). */
export interface EvaluateOptions {
  labels?: readonly string[];
  /** Add `per_example`: each held-out row's headline [tp, fp, fn], for paired comparisons of two models. */
  perExample?: boolean;
}

/**
 * Metrics on held-out rows: relations with given spans (relation-classification
 * rows: micro F1 over the relation labels, no-relation excluded, and accuracy),
 * then end-to-end relations (label, argument spans and types exact), then
 * entities (span-exact; a relation's arguments), then classification. The first
 * present is the headline, `headline` says which it is, and `scores` has each
 * one; relations per label are `relation/<label>`. `macro_f1` is the mean F1 of
 * the headline's labels.
 */
export function evaluate(
  model: { encoder: EntityEncoder | null; classifiers: Map<string, NgramClassifier> },
  heldout: (CanonicalRow | Example)[],
  options: EvaluateOptions = {},
): Metrics {
  const data = prepare(heldout);
  const reports: { kind: NonNullable<Metrics['headline']>; report: Report }[] = [];
  const perLabel: Metrics['per_label'] = {};
  const wanted = options.labels ? new Set(options.labels) : null;
  const keep =
    (prefix = '') =>
    (l: string) =>
      !wanted || wanted.has(l) || wanted.has(`${prefix}${l}`);
  const keepSpan = keep();
  const keepRelation = keep('relation/');
  let accuracy: number | undefined;
  if (model.encoder?.relationLabels.length && data.pairs.length) {
    const relationOf = (l: string | null) => (l !== null && !isNoRelation(l) && keepRelation(l) ? l : null);
    const predicted = model.encoder.classifyPairs(
      data.pairs.map((e) => ({ text: e.text ?? '', head: e.head!, tail: e.tail! })),
    );
    const r = relationClassificationPRF(
      data.pairs.map((e) => relationOf(e.label ?? null)),
      predicted.map((p) => relationOf(p.label)),
    );
    accuracy = r.accuracy;
    reports.push({ kind: 'relation_given_spans_micro_f1', report: r });
    for (const [l, v] of Object.entries(r.perLabel)) perLabel[`relation/${l}`] = v;
  }
  const annotated = data.entities.filter((e) => e.relations);
  if (model.encoder?.relationLabels.length && annotated.length) {
    const r = relationPRF(
      annotated.map((e) => (e.relations as Relation[]).filter((x) => keepRelation(x.label))),
      annotated.map((e) => model.encoder!.extractRelations(e.text ?? '').filter((x) => keepRelation(x.label))),
    );
    reports.push({ kind: 'relation_micro_f1', report: r });
    for (const [l, v] of Object.entries(r.perLabel)) perLabel[`relation/${l}`] = v;
  }
  if (model.encoder && data.hasEntities) {
    const r = spanPRF(
      data.entities.map((e) => (e.entities ?? []).filter((s) => keepSpan(s.label))),
      data.entities.map((e) => model.encoder!.extract(e.text ?? '').filter((s) => keepSpan(s.label))),
    );
    reports.push({ kind: 'entity_span_micro_f1', report: r });
    for (const [l, v] of Object.entries(r.perLabel)) perLabel[l] = v;
  }
  for (const t of data.tasks) {
    const clf = model.classifiers.get(t.task);
    if (!clf) continue;
    const keepClass = keep(`${t.task}/`);
    const r = classificationPRF(
      t.examples.map((e) => e.labels.filter(keepClass)),
      t.examples.map((e) =>
        (clf.multiLabel
          ? clf.predict(e.text).labels
          : [best(taskScores(model.encoder, clf, e.text, t.task, clf.labels))]
        ).filter(keepClass),
      ),
    );
    // One gold and one predicted label per text: micro F1 is accuracy (when every label is scored).
    reports.push({ kind: clf.multiLabel || wanted ? 'classification_micro_f1' : 'accuracy', report: r });
    for (const [l, v] of Object.entries(r.perLabel)) perLabel[`${t.task}/${l}`] = v;
  }
  const main = reports[0]?.report ?? { precision: 0, recall: 0, f1: 0, perLabel: {} };
  const round = (x: number) => Number(x.toFixed(4));
  const macro = (r: Report) => {
    const labels = Object.values(r.perLabel);
    return round(labels.reduce((a, l) => a + l.f1, 0) / Math.max(1, labels.length));
  };
  return {
    f1: round(main.f1),
    precision: round(main.precision),
    recall: round(main.recall),
    ...(reports[0] ? { headline: reports[0].kind } : {}),
    ...(accuracy !== undefined ? { accuracy: round(accuracy) } : {}),
    ...(options.perExample && main.perExample ? { per_example: main.perExample } : {}),
    macro_f1: macro(main),
    ...(reports.length > 1
      ? {
          scores: Object.fromEntries(
            reports.map(({ kind, report: r }) => [
              kind,
              { f1: round(r.f1), precision: round(r.precision), recall: round(r.recall), macro_f1: macro(r) },
            ]),
          ),
        }
      : {}),
    per_label: Object.fromEntries(
      Object.entries(perLabel).map(([l, v]) => [
        l,
        { precision: round(v.precision), recall: round(v.recall), f1: round(v.f1), support: v.support },
      ]),
    ),
  };
}

/** Scores a bundle on held-out rows (span-exact entities, relations, per-task classification). */
export function evaluateBundle(
  bundle: Uint8Array,
  rows: (CanonicalRow | Example)[],
  options: EvaluateOptions = {},
): Metrics {
  const { meta, tensors } = readBundle(bundle);
  return evaluate(
    { encoder: encoderOf(meta, tensors)?.merged() ?? null, classifiers: classifiersOf(meta) },
    rows,
    options,
  );
}

const HEADLINES: Record<NonNullable<Metrics['headline']>, string> = {
  entity_span_micro_f1: 'micro span F1 (entities, exact label and offsets)',
  relation_given_spans_micro_f1: 'relation micro F1 (given spans, no-relation excluded)',
  relation_micro_f1: 'relation micro F1 (label and both argument spans exact)',
  classification_micro_f1: 'classification micro F1',
  accuracy: 'accuracy (single-label classification)',
};

/**
 * The headline figure with its name, e.g. `micro span F1 (…) 0.6610, macro F1 0.6012, precision 0.7000, recall
 * 0.6200`; relations with given spans add accuracy, and end-to-end relations the arguments' span F1.
 */
export function headline(m: Metrics): string {
  const name = m.headline ? HEADLINES[m.headline] : 'micro F1';
  const macro = m.macro_f1 !== undefined ? `, macro F1 ${m.macro_f1.toFixed(4)}` : '';
  const accuracy = m.accuracy !== undefined ? `, accuracy ${m.accuracy.toFixed(4)}` : '';
  const args = m.headline === 'relation_micro_f1' ? m.scores?.entity_span_micro_f1 : undefined;
  const argument = args ? `; argument (entity span) F1 ${args.f1.toFixed(4)}` : '';
  return `${name} ${m.f1.toFixed(4)}${macro}${accuracy}, precision ${m.precision.toFixed(4)}, recall ${m.recall.toFixed(4)}${argument}`;
}
