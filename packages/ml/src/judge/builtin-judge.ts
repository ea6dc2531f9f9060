import type { ExtractionResult } from '../pipeline/types';

/** The built-in judge's identity as records name it: a fixed formula over two models' outputs, not an LLM. */
export const BUILTIN_JUDGE_ID = 'whetstone-judge-builtin/1';

/**
 * Weight of the served model's own calibrated confidence in the built-in judge's score; the rest is agreement with
 * the independent model. Chosen on wikigold dev (ROC AUC of exact-match per sentence, 0.878 at 0.75 against 0.837
 * for the confidence alone; 0.6–0.9 all within 0.01), never on test: `bench:judge --split dev` reprints the grid.
 */
export const BUILTIN_JUDGE_CONFIDENCE_WEIGHT = 0.75;

/** What the built-in judge reads: the served model's output and an independent model's output for the same input. */
export interface BuiltinJudgeInput {
  /**
   * The served model's result for one text, with confidences (`includeConfidence` and `includeSpans`): `entities`
   * as label → `{text, confidence, start, end}[]`, classification tasks as `{label, confidence}` (or a list of them).
   */
  output: ExtractionResult;
  /** An independent model's result for the same text and schema (the zero-shot base), in the same shape. */
  independent: ExtractionResult;
}

/** A built-in judge score: `score` in [0, 1], a one-line rationale, and the two ingredients it combines. */
export interface BuiltinJudgeScore {
  score: number;
  rationale: string;
  /** The served model's probability that every item it returned is right (product of its confidences). */
  confidence: number;
  /** F1 of exact agreement (label and offsets; label per classification task) with the independent model. */
  agreement: number;
  /** How many items (entity mentions and classification labels) the served output holds. */
  items: number;
}

interface Item {
  key: string;
  confidence: number;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Entity mentions and classification labels of a result as comparable keys; strings count as confidence 1. */
function itemsOf(result: ExtractionResult): Item[] {
  const items: Item[] = [];
  for (const [key, value] of Object.entries(result)) {
    if (key === 'entities' && isRecord(value)) {
      for (const [label, mentions] of Object.entries(value)) {
        if (!Array.isArray(mentions)) continue;
        for (const m of mentions) {
          if (isRecord(m) && typeof m.start === 'number' && typeof m.end === 'number')
            items.push({ key: `entity:${label}:${m.start}:${m.end}`, confidence: confidenceOf(m) });
          else if (typeof m === 'string') items.push({ key: `entity:${label}:${m}`, confidence: 1 });
        }
      }
      continue;
    }
    if (key === 'relation_extraction') continue;
    const labels = Array.isArray(value) ? value : [value];
    for (const l of labels) {
      if (typeof l === 'string') items.push({ key: `class:${key}:${l}`, confidence: 1 });
      else if (isRecord(l) && typeof l.label === 'string')
        items.push({ key: `class:${key}:${l.label}`, confidence: confidenceOf(l) });
    }
  }
  return items;
}

function confidenceOf(item: Record<string, unknown>): number {
  const c = item.confidence;
  return typeof c === 'number' && Number.isFinite(c) ? Math.min(1, Math.max(0, c)) : 1;
}

/** Whether a result holds anything the built-in judge can score (entities or classification tasks). */
export function builtinJudgeCanScore(output: ExtractionResult): boolean {
  return Object.keys(output).some((k) => k !== 'relation_extraction');
}

/**
 * The built-in judge: how likely a served extraction is entirely right, in [0, 1], from the served model's calibrated
 * confidences and its agreement with an independent model. It is a formula, not an LLM:
 * `score = w · Π confidence + (1 − w) · F1(served, independent)` with w = {@link BUILTIN_JUDGE_CONFIDENCE_WEIGHT}.
 * Two empty outputs agree fully; an empty served output has confidence 1, so its score rests on what the independent
 * model found. Relations and structures are not read.
 */
export function builtinJudgeScore(input: BuiltinJudgeInput): BuiltinJudgeScore {
  const served = itemsOf(input.output);
  const other = new Set(itemsOf(input.independent).map((i) => i.key));
  const confidence = served.reduce((p, i) => p * i.confidence, 1);
  const shared = served.filter((i) => other.has(i.key)).length;
  const agreement = served.length + other.size === 0 ? 1 : (2 * shared) / (served.length + other.size);
  const w = BUILTIN_JUDGE_CONFIDENCE_WEIGHT;
  const score = round4(w * confidence + (1 - w) * agreement);
  const rationale =
    `built-in judge (not an LLM): the served model's confidence that all ${served.length} item(s) are right is ` +
    `${confidence.toFixed(2)}; the independent model agrees on ${shared} of ${served.length} (it found ${other.size}), ` +
    `agreement F1 ${agreement.toFixed(2)}; score = ${w}·${confidence.toFixed(2)} + ${round4(1 - w)}·${agreement.toFixed(2)}`;
  return { score, rationale, confidence: round4(confidence), agreement: round4(agreement), items: served.length };
}

const round4 = (x: number) => Math.round(x * 10000) / 10000;
