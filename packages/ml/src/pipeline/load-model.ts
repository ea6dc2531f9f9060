import { EMBEDDING_STATE_WEIGHT, type EntityMention } from '../encoder';
import { normalizeSchema, type NormalizedSchema } from '../schema/normalize';
import { extractWith, zeroShotLabelScores, zeroShotRelations } from '../zeroshot/base-model';
import { baseEntities } from '../zeroshot/base-entities';
import { classifiersOf, encoderOf, readBundle } from './bundle';
import { structureLabel } from './rows';
import { taskScores } from './task-scores';
import { withTemperature } from '../classify/calibration';
import type { ExtractionModel, ExtractionSchema, ModelManifest, PredictOptions } from './types';

/** The manifest's trained schema as a request schema (used when a project call sends none). */
function manifestSchema(m: ModelManifest): ExtractionSchema {
  const structures = m.schema.structures ?? {};
  const isField = (label: string) =>
    Object.entries(structures).some(([name, fields]) =>
      Object.keys(fields).some((f) => structureLabel(name, f) === label),
    );
  const entities = m.schema.entities.filter((l) => !isField(l));
  const classifications = m.schema.classifications.filter((c) => !isField(c.task));
  const choices = (label: string) => m.schema.classifications.find((c) => c.task === label)?.labels;
  return {
    ...(entities.length ? { entities } : {}),
    ...(classifications.length ? { classifications } : {}),
    ...(m.schema.relations.length ? { relations: m.schema.relations } : {}),
    ...(Object.keys(structures).length
      ? {
          structures: Object.fromEntries(
            Object.entries(structures).map(([name, fields]) => [
              name,
              Object.fromEntries(
                Object.entries(fields).map(([f, type]) => [
                  f,
                  choices(structureLabel(name, f)) ? { type, choices: choices(structureLabel(name, f))! } : type,
                ]),
              ),
            ]),
          ),
        }
      : {}),
  };
}

/**
 * A servable model from a bundle (a LoRA adapter is merged on load): trained
 * labels, tasks and relations use the trained weights; any other label or
 * relation, and structures, fall back to the zero-shot base, so one model
 * serves any schema.
 */
export function loadModel(bundle: Uint8Array): ExtractionModel {
  const { meta, tensors } = readBundle(bundle);
  const encoder = encoderOf(meta, tensors)?.merged() ?? null;
  const classifiers = classifiersOf(meta);
  const trainedTypes = new Set(encoder?.trainedLabels ?? []);
  const manifest = meta.manifest;
  const normalized = (schema: ExtractionSchema) =>
    normalizeSchema(schema && Object.keys(schema).length ? schema : manifestSchema(manifest));
  const explicitOf = (options: PredictOptions) => (options.threshold && options.threshold > 0 ? options.threshold : 0);
  /** One text's result; `encoded` holds its trained-label mentions when a batch computed them already. */
  const run = (text: string, schema: NormalizedSchema, options: PredictOptions, encoded?: EntityMention[]) => {
    const explicit = explicitOf(options);
    return extractWith(text, schema, options, {
      entities: (t, labels, threshold) => {
        const known = labels.filter((l) => trainedTypes.has(l));
        const mine = encoder && known.length ? (encoded ?? encoder.extract(t, known, explicit)) : [];
        const others = labels.filter((l) => !trainedTypes.has(l));
        const zero = others.length
          ? baseEntities(t, others, threshold).filter((z) => !mine.some((m) => z.start < m.end && z.end > m.start))
          : [];
        return [...mine, ...zero].sort((a, b) => a.start - b.start);
      },
      classify: (t, task) => {
        const clf = classifiers.get(task.task);
        if (!clf || !task.labels.every((l) => clf.labels.includes(l)))
          return zeroShotLabelScores(t, task.labels, task.multi_label);
        const picked = taskScores(encoder, clf, t, task.task, task.labels);
        if (clf.multiLabel || task.multi_label) return picked;
        const sum = picked.reduce((n, s) => n + s.confidence, 0) || 1;
        const cal = manifest.calibration?.[task.task];
        if (!cal) return picked.map((s) => ({ label: s.label, confidence: s.confidence / sum }));
        // Calibrated confidence; below the held-out threshold the answer is the out-of-scope label.
        const probs = withTemperature(
          picked.map((s) => s.confidence / sum),
          cal.temperature,
        );
        const scores = picked.map((s, i) => ({ label: s.label, confidence: probs[i]! }));
        if (cal.reject_below === undefined || !cal.out_of_scope_label) return scores;
        const rejectProbs = withTemperature(
          picked.map((s) => s.confidence / sum),
          cal.reject_temperature ?? cal.temperature,
        );
        const top = Math.max(...rejectProbs.filter((_, i) => picked[i]!.label !== cal.out_of_scope_label));
        return top < cal.reject_below
          ? [{ label: cal.out_of_scope_label, confidence: Number((1 - top).toFixed(4)) }]
          : scores;
      },
      // Trained structure fields: spans of `structure.field` from the encoder, choices from its classifier.
      structureField: (t, structure, field) => {
        const label = structureLabel(structure, field.name);
        const clf = classifiers.get(label);
        if (field.choices.length && clf && field.choices.every((c) => clf.labels.includes(c)))
          return { scores: taskScores(encoder, clf, t, label, field.choices) };
        if (!field.choices.length && encoder && trainedTypes.has(label))
          return { spans: encoder.extract(t, [label], explicit) };
        return null;
      },
      // Trained relation names from the encoder, any other from the zero-shot base.
      relations: (t, names, threshold) => {
        const known = encoder ? names.filter((r) => encoder.relationLabels.includes(r)) : [];
        const others = names.filter((r) => !known.includes(r));
        // A head trained on given spans alone has no entity types: its arguments are the schema's entities, zero-shot.
        const found = known.length
          ? encoder!.trainedLabels.length
            ? encoder!.extractRelations(t, known, encoder!.trainedLabels, explicit)
            : encoder!.relationsBetween(t, baseEntities(t, schema.entities, threshold), known, explicit)
          : [];
        const mine = found.map((r) => ({ relation: r.label, head: r.head, tail: r.tail, confidence: r.confidence }));
        return [...mine, ...(others.length ? zeroShotRelations(t, others, threshold) : [])];
      },
    });
  };
  const relationHead = encoder?.relationLabels.length ? encoder : null;
  return {
    manifest,
    ...(relationHead
      ? {
          classifyRelation: (text, head, tail) => {
            const [p] = relationHead.classifyPairs([{ text, head, tail }]);
            return { relation: p!.label, confidence: p!.confidence };
          },
        }
      : {}),
    ...(encoder ? { embed: (texts: readonly string[]) => encoder.embedMany(texts, EMBEDDING_STATE_WEIGHT) } : {}),
    extract: (text, schema, options = {}) => run(text, normalized(schema), options),
    extractMany(texts, schema, options = {}) {
      const norm = normalized(schema);
      const known = norm.entities.filter((l) => trainedTypes.has(l));
      // The trained labels' mentions of every text in batched forward passes; the rest runs per text as before.
      const encoded = encoder && known.length ? encoder.extractMany(texts, known, explicitOf(options)) : undefined;
      return texts.map((text, i) => run(text, norm, options, encoded?.[i]));
    },
  };
}
