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
  /** The control run (original data only, same recipe); null when the deployed job had no original data. */
  controlJobId: string | null;
  controlEvaluationId: string | null;
  baselineMetrics: Record<string, unknown> | null;
  candidateMetrics: Record<string, unknown> | null;
  controlMetrics: Record<string, unknown> | null;
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
 * A decoder's evaluation: it reports perplexity (beside its generation F1), or, from before generation F1 was
 * scored, loss without F1. The gate reads its held-out loss, the finer figure on a small held-out split.
 */
const isDecoderEvaluation = (m: Record<string, unknown>) =>
  num(m.perplexity) !== null || (num(m.f1) === null && num(m.loss) !== null);

/**
 * The gate: promote only when the metric rose by at least min_gain and no label (with at least min_label_support
 * held-out examples) lost more than f1_tolerance of F1. Decoder evaluations report held-out loss instead: the loss
 * must fall by at least min_gain. The reason names the figures either way.
 */
export function decide(
  s: Pick<AdaptiveSettings, 'metric' | 'minGain' | 'f1Tolerance' | 'minLabelSupport'>,
  baseline: Record<string, unknown>,
  candidate: Record<string, unknown>,
  control?: Record<string, unknown>,
): GateDecision {
  const d = decideOnBaseline(s, baseline, candidate);
  if (!d.promote || !control) return d;
  const c = feedbackEffect(s, control, candidate);
  return c.ok
    ? { ...d, reason: `${d.reason}; and it beats a control retrained the same way without the feedback (${c.text})` }
    : {
        promote: false,
        gain: d.gain,
        reason: `${d.reason}, but a control retrained the same way without the feedback does as well (${c.text}): the gain comes from training longer, not from the feedback`,
      };
}

/**
 * Whether the feedback itself helped: the candidate against the control (the same recipe on the original data
 * only). F1: the paired interval (or, without per-row counts, the unpaired band) must lie above 0; decoders: the
 * held-out loss must be lower by at least min_gain.
 */
function feedbackEffect(
  s: Pick<AdaptiveSettings, 'metric' | 'minGain'>,
  control: Record<string, unknown>,
  candidate: Record<string, unknown>,
): { ok: boolean; text: string } {
  if (isDecoderEvaluation(control)) {
    const before = num(control.loss)!;
    const after = num(candidate.loss) ?? Infinity;
    return { ok: before - after >= s.minGain - 1e-9, text: `held-out loss ${fmt(before)} → ${fmt(after)}` };
  }
  const before = num(control[s.metric]) ?? 0;
  const after = num(candidate[s.metric]) ?? 0;
  const figures = `${s.metric} ${fmt(before)} → ${fmt(after)}`;
  const paired = s.metric === 'f1' ? pairedInterval(control.per_example, candidate.per_example) : null;
  if (paired)
    return { ok: paired.low > 0, text: `${figures}, 95% paired interval ${fmt(paired.low)} to ${fmt(paired.high)}` };
  const band = gainBand(before, after, itemsScored(control));
  return { ok: after - before > band, text: `${figures}, noise band ±${fmt(band)}` };
}

function decideOnBaseline(
  s: Pick<AdaptiveSettings, 'metric' | 'minGain' | 'f1Tolerance' | 'minLabelSupport'>,
  baseline: Record<string, unknown>,
  candidate: Record<string, unknown>,
): GateDecision {
  if (isDecoderEvaluation(baseline)) return decideOnLoss(s.minGain, baseline, candidate);
  const before = num(baseline[s.metric]);
  const after = num(candidate[s.metric]);
  if (before === null || after === null)
    return { promote: false, gain: 0, reason: `the evaluations do not report ${s.metric}` };
  const gain = Number((after - before).toFixed(4));
  const figures = `${s.metric} ${fmt(before)} → ${fmt(after)} (${gain >= 0 ? '+' : ''}${fmt(gain)})`;
  if (gain < s.minGain - 1e-9)
    return { promote: false, gain, reason: `${figures}: the gain is below min_gain ${s.minGain}` };
  const paired = s.metric === 'f1' ? pairedInterval(baseline.per_example, candidate.per_example) : null;
  const band = paired ? 0 : gainBand(before, after, itemsScored(baseline));
  if (paired && paired.low <= 0)
    return {
      promote: false,
      gain,
      reason: `${figures}: the gain is within the noise of the held-out set (95% paired bootstrap interval ${fmt(paired.low)} to ${fmt(paired.high)} includes 0)`,
    };
  if (!paired && gain < band - 1e-9)
    return {
      promote: false,
      gain,
      reason: `${figures}: the gain is within the noise of the held-out set (95% band ±${fmt(band)})`,
    };
  const noise = paired
    ? `beyond the held-out noise (95% paired bootstrap interval ${fmt(paired.low)} to ${fmt(paired.high)})`
    : `beyond the held-out noise (±${fmt(band)})`;
  const checked = [...perLabel(baseline)].filter(([, b]) => b.support >= s.minLabelSupport);
  const z = familyZ(checked.length);
  const candidateLabels = perLabel(candidate);
  const drops = checked
    .map(([label, b]) => ({
      label,
      before: b.f1,
      after: candidateLabels.get(label)?.f1 ?? 0,
      allowed: allowedDrop(s, b, z),
    }))
    .filter((d) => d.before - d.after > d.allowed + 1e-9)
    .sort((a, b) => b.before - b.after - (a.before - a.after));
  if (drops.length) {
    const listed = drops
      .slice(0, 5)
      .map((d) => `${d.label} ${fmt(d.before)} → ${fmt(d.after)}`)
      .join(', ');
    return {
      promote: false,
      gain,
      reason: `${figures}, but ${drops.length} label(s) lost more F1 than f1_tolerance ${s.f1Tolerance} and their noise band: ${listed}`,
    };
  }
  return {
    promote: true,
    gain,
    reason: `${figures} ≥ min_gain ${s.minGain} and ${noise}, and no label with ${s.minLabelSupport}+ held-out examples lost more F1 than f1_tolerance ${s.f1Tolerance} and its noise band`,
  };
}

/**
 * How much F1 a label may lose: f1_tolerance, or the noise band of an F1 measured on `support` examples
 * (z·√(F(1−F)/n), with z for 95% over all the labels checked: Bonferroni) when that is wider, so one example more
 * or less on a rare label, or one of 77 labels moving by chance, is not read as forgetting.
 */
export function allowedDrop(s: Pick<AdaptiveSettings, 'f1Tolerance'>, b: LabelScore, z = 1.96): number {
  const band = b.support > 0 ? z * Math.sqrt((b.f1 * (1 - b.f1)) / b.support) : 1;
  return Math.max(s.f1Tolerance, band);
}

/**
 * The 95% band of a difference of two scores measured on the same `n` items (as two proportions: an approximation
 * for F1): a gain inside it is not evidence that the candidate is better.
 */
export function gainBand(before: number, after: number, n: number): number {
  if (n <= 0) return 0;
  const v = (x: number) => Math.min(1, Math.max(0, x)) * (1 - Math.min(1, Math.max(0, x)));
  return 1.96 * Math.sqrt((v(before) + v(after)) / n);
}

/** Items the headline was measured on: the gold labels (spans, classes) of the per-label figures, else examples. */
function itemsScored(metrics: Record<string, unknown>): number {
  const labels = [...perLabel(metrics).values()].reduce((n, l) => n + l.support, 0);
  return labels || (num(metrics.examples) ?? 0);
}

/** The z of a two-sided 95% band shared by k comparisons (Bonferroni): 1.96 for one, about 3.2 for 77. */
export function familyZ(k: number): number {
  return normalQuantile(1 - 0.05 / (2 * Math.max(1, k)));
}

/** Inverse of the standard normal CDF (Acklam's rational approximation; relative error below 1.2e-9). */
export function normalQuantile(p: number): number {
  const a = [
    -3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1,
    2.506628277459239,
  ];
  const b = [
    -5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1,
  ];
  const c = [
    -7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  const poly = (k: number[], x: number) => k.reduce((acc, coef) => acc * x + coef, 0);
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return poly(c, q) / (poly(d, q) * q + 1);
  }
  if (p > 1 - low) {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    return -poly(c, q) / (poly(d, q) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return (poly(a, r) * q) / (poly(b, r) * r + 1);
}

/** Decoders: the held-out loss (nats per byte of the assistant replies) must fall by at least min_gain. */
function decideOnLoss(
  minGain: number,
  baseline: Record<string, unknown>,
  candidate: Record<string, unknown>,
): GateDecision {
  const before = num(baseline.loss)!;
  const after = num(candidate.loss);
  if (after === null) return { promote: false, gain: 0, reason: 'the candidate’s evaluation does not report loss' };
  const gain = Number((before - after).toFixed(4));
  const figures = `held-out loss ${fmt(before)} → ${fmt(after)} (${gain >= 0 ? '−' : '+'}${fmt(Math.abs(gain))})`;
  return gain < minGain - 1e-9
    ? { promote: false, gain, reason: `${figures}: the loss fell by less than min_gain ${minGain}` }
    : { promote: true, gain, reason: `${figures}: the loss fell by at least min_gain ${minGain}` };
}

type Counts = [number, number, number];
const isCounts = (v: unknown): v is Counts[] =>
  Array.isArray(v) && v.every((r) => Array.isArray(r) && r.length === 3 && r.every((x) => typeof x === 'number'));
const microF1 = (tp: number, fp: number, fn: number) => (tp === 0 ? 0 : (2 * tp) / (2 * tp + fp + fn));

/**
 * The 95% paired bootstrap interval of the micro-F1 gain (candidate minus baseline) over the same held-out rows:
 * 2,000 resamples of the rows, each scoring both models on the same draw (Koehn 2004). Deterministic (fixed seed).
 * Null when the evaluations do not carry matching per-row counts.
 */
export function pairedInterval(baseline: unknown, candidate: unknown): { low: number; high: number } | null {
  if (!isCounts(baseline) || !isCounts(candidate) || baseline.length !== candidate.length || !baseline.length)
    return null;
  const n = baseline.length;
  let seed = 0x5eed;
  const rand = () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const gains: number[] = [];
  for (let b = 0; b < 2000; b++) {
    const sum = [0, 0, 0, 0, 0, 0];
    for (let i = 0; i < n; i++) {
      const k = Math.floor(rand() * n);
      const [bt, bf, bn] = baseline[k]!;
      const [ct, cf, cn] = candidate[k]!;
      sum[0]! += bt;
      sum[1]! += bf;
      sum[2]! += bn;
      sum[3]! += ct;
      sum[4]! += cf;
      sum[5]! += cn;
    }
    gains.push(microF1(sum[3]!, sum[4]!, sum[5]!) - microF1(sum[0]!, sum[1]!, sum[2]!));
  }
  gains.sort((a, b) => a - b);
  return { low: gains[Math.floor(0.025 * gains.length)]!, high: gains[Math.floor(0.975 * gains.length) - 1]! };
}
