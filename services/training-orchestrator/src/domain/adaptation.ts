/**
 * Adaptive inference: a project's feedback retrains its deployed job, and the candidate is promoted only when the
 * held-out evaluation says it is better. The settings, their bounds and the gate are pure and live here.
 */
import type { FieldError } from '@whetstone/errors';
import { invalid } from './job-spec';

export type AdaptationStatus = 'training' | 'evaluating' | 'promoting' | 'promoted' | 'rejected' | 'failed';
export type AdaptationTrigger = 'corrections' | 'manual';
export type GateMetric = 'f1' | 'precision' | 'recall';

export const IN_PROGRESS: AdaptationStatus[] = ['training', 'evaluating', 'promoting'];

export interface AdaptiveSettings {
  projectId: string;
  enabled: boolean;
  minCorrections: number;
  /** Empty: the deployed job's first training dataset. */
  heldoutDataset: string;
  metric: GateMetric;
  minGain: number;
  f1Tolerance: number;
  feedbackWeight: number;
  minLabelSupport: number;
  /** 0: the base model's default. */
  nrEpochs: number;
  updatedAt: Date | null;
}

/** Who an adaptation acts for: the team billed and the user and key its jobs are filed under. */
export interface Actor {
  teamId: string;
  userId: string;
  keyId: string;
}

export interface Adaptation extends Actor {
  id: string;
  projectId: string;
  status: AdaptationStatus;
  trigger: AdaptationTrigger;
  feedbackDataset: string;
  feedbackVersion: number;
  feedbackRows: number;
  corrections: number;
  settings: AdaptiveSettings;
  heldoutDataset: string;
  baselineJobId: string;
  candidateJobId: string;
  baselineEvaluationId: string;
  candidateEvaluationId: string;
  baselineMetrics: Record<string, unknown> | null;
  candidateMetrics: Record<string, unknown> | null;
  decisionReason: string;
  gain: number | null;
  createdAt: Date;
  decidedAt: Date | null;
}

/**
 * The defaults, chosen so a project that only turns `enabled` on gets a cautious loop: 50 new corrections per round,
 * a candidate must gain at least one F1 point, and no label with 5 or more held-out examples may lose more than five.
 * Feedback rows are seen 3× per epoch: a few hundred corrections then weigh about as much as a small training set,
 * without drowning the original data (which keeps the model from forgetting what nobody corrected).
 */
export function defaultSettings(projectId: string): AdaptiveSettings {
  return {
    projectId,
    enabled: false,
    minCorrections: 50,
    heldoutDataset: '',
    metric: 'f1',
    minGain: 0.01,
    f1Tolerance: 0.05,
    feedbackWeight: 3,
    minLabelSupport: 5,
    nrEpochs: 0,
    updatedAt: null,
  };
}

export const SETTINGS_BOUNDS = {
  minCorrections: { min: 1, max: 100_000 },
  feedbackWeight: { min: 1, max: 20 },
  minLabelSupport: { min: 1, max: 10_000 },
  nrEpochs: { min: 0, max: 100 },
} as const;

const METRICS: GateMetric[] = ['f1', 'precision', 'recall'];

/** Every problem with the settings at once, as InvalidArgument. */
export function assertSettings(s: AdaptiveSettings): void {
  const problems: FieldError[] = [];
  const int = (field: string, v: number, b: { min: number; max: number }) => {
    if (!Number.isInteger(v) || v < b.min || v > b.max)
      problems.push({ field, message: `must be an integer from ${b.min} to ${b.max}` });
  };
  int('min_corrections', s.minCorrections, SETTINGS_BOUNDS.minCorrections);
  int('feedback_weight', s.feedbackWeight, SETTINGS_BOUNDS.feedbackWeight);
  int('min_label_support', s.minLabelSupport, SETTINGS_BOUNDS.minLabelSupport);
  int('nr_epochs', s.nrEpochs, SETTINGS_BOUNDS.nrEpochs);
  if (!METRICS.includes(s.metric)) problems.push({ field: 'metric', message: `must be one of ${METRICS.join(', ')}` });
  for (const [field, v] of [
    ['min_gain', s.minGain],
    ['f1_tolerance', s.f1Tolerance],
  ] as const)
    if (!(v >= 0 && v <= 1)) problems.push({ field, message: 'must be a number from 0 to 1' });
  if (s.heldoutDataset.length > 100)
    problems.push({ field: 'heldout_dataset', message: 'must be at most 100 characters' });
  if (problems.length) throw invalid('Invalid adaptive settings', problems);
}

/** The feedback dataset of a project, as the dataset service names it. */
export const feedbackDatasetName = (projectId: string): string => `feedback-${projectId}`;

const FEEDBACK_NAME = /^feedback-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** The project whose feedback dataset this is, or null for any other dataset. */
export const projectOfFeedbackDataset = (name: string): string | null => FEEDBACK_NAME.exec(name)?.[1] ?? null;

interface LabelScore {
  f1: number;
  support: number;
}

export interface GateDecision {
  promote: boolean;
  gain: number;
  reason: string;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function perLabel(metrics: Record<string, unknown>): Map<string, LabelScore> {
  const out = new Map<string, LabelScore>();
  const raw = metrics.per_label;
  if (!raw || typeof raw !== 'object') return out;
  for (const [label, v] of Object.entries(raw as Record<string, unknown>)) {
    const row = (v ?? {}) as Record<string, unknown>;
    const f1 = num(row.f1);
    if (f1 !== null) out.set(label, { f1, support: num(row.support) ?? 0 });
  }
  return out;
}

const fmt = (x: number) => x.toFixed(4);

/**
 * The gate: promote only when the metric rose by at least min_gain and no label (with at least min_label_support
 * held-out examples) lost more than f1_tolerance of F1. The reason names the figures either way.
 */
export function decide(
  s: Pick<AdaptiveSettings, 'metric' | 'minGain' | 'f1Tolerance' | 'minLabelSupport'>,
  baseline: Record<string, unknown>,
  candidate: Record<string, unknown>,
): GateDecision {
  const before = num(baseline[s.metric]);
  const after = num(candidate[s.metric]);
  if (before === null || after === null)
    return { promote: false, gain: 0, reason: `the evaluations do not report ${s.metric}` };
  const gain = Number((after - before).toFixed(4));
  const figures = `${s.metric} ${fmt(before)} → ${fmt(after)} (${gain >= 0 ? '+' : ''}${fmt(gain)})`;
  if (gain < s.minGain - 1e-9)
    return { promote: false, gain, reason: `${figures}: the gain is below min_gain ${s.minGain}` };
  const candidateLabels = perLabel(candidate);
  const drops = [...perLabel(baseline)]
    .filter(([, b]) => b.support >= s.minLabelSupport)
    .map(([label, b]) => ({ label, before: b.f1, after: candidateLabels.get(label)?.f1 ?? 0 }))
    .filter((d) => d.before - d.after > s.f1Tolerance + 1e-9)
    .sort((a, b) => b.before - b.after - (a.before - a.after));
  if (drops.length) {
    const listed = drops
      .slice(0, 5)
      .map((d) => `${d.label} ${fmt(d.before)} → ${fmt(d.after)}`)
      .join(', ');
    return {
      promote: false,
      gain,
      reason: `${figures}, but ${drops.length} label(s) lost more than f1_tolerance ${s.f1Tolerance}: ${listed}`,
    };
  }
  return {
    promote: true,
    gain,
    reason: `${figures} ≥ min_gain ${s.minGain}, and no label with ${s.minLabelSupport}+ held-out examples lost more than ${s.f1Tolerance} F1`,
  };
}
