/**
 * Judging stored inferences (issue 16): a project's settings, the rules they must meet, and the retry policy of the
 * judge worker. Pure: the worker, the store and the judges themselves live outside.
 */
import type { FieldError } from '@whetstone/errors';

/** `builtin` is a formula over two models' outputs (not an LLM); `llm` asks a chat model with a rubric. */
export type JudgeKind = 'builtin' | 'llm';

/** null: not sampled; pending: queued (and while being judged); scored; failed after every attempt. */
export type JudgeStatus = 'pending' | 'scored' | 'failed';

/** One project's judging configuration. */
export interface JudgeSettings {
  projectId: string;
  enabled: boolean;
  /** Share of new inferences judged, 0 to 1. */
  sampleRate: number;
  kind: JudgeKind;
  /** The chat model an LLM judge calls; empty for the built-in judge. */
  judgeModel: string;
  /** null when never configured. */
  updatedAt: Date | null;
}

/** What a judge says about one record. */
export interface JudgeVerdict {
  score: number;
  rationale: string;
  kind: JudgeKind;
  /** The judge's identity: the built-in judge's versioned id or the LLM's model id. */
  model: string;
}

/** The judge's state on a record, as GET /inferences/:id shows it. */
export interface JudgeState {
  status: JudgeStatus | null;
  rationale: string | null;
  kind: JudgeKind | null;
  model: string | null;
  error: string | null;
  judgedAt: Date | null;
}

/** The kinds a project can choose. */
export const AVAILABLE_JUDGE_KINDS: readonly JudgeKind[] = ['builtin', 'llm'];

/** Judging off: what a project that was never configured has. */
export const judgingOff = (projectId: string): JudgeSettings => ({
  projectId,
  enabled: false,
  sampleRate: 0,
  kind: 'builtin',
  judgeModel: '',
  updatedAt: null,
});

/** Every problem with new settings, one per field (422 naming each). */
export function judgeSettingsProblems(s: { sampleRate: number; kind: string; judgeModel: string }): FieldError[] {
  const issues: FieldError[] = [];
  if (!(Number.isFinite(s.sampleRate) && s.sampleRate >= 0 && s.sampleRate <= 1))
    issues.push({ field: 'sample_rate', message: 'must be a number from 0 to 1', code: 'out_of_range' });
  if (!AVAILABLE_JUDGE_KINDS.includes(s.kind as JudgeKind))
    issues.push({
      field: 'kind',
      message: `must be one of: ${AVAILABLE_JUDGE_KINDS.join(', ')}`,
      code: 'invalid_value',
    });
  if (s.kind === 'llm' && !s.judgeModel.trim())
    issues.push({ field: 'judge_model', message: 'is required for the llm judge', code: 'required' });
  if (s.judgeModel.length > 200)
    issues.push({ field: 'judge_model', message: 'must be at most 200 characters', code: 'too_big' });
  return issues;
}

/** How a failed attempt is followed up: retried after a growing delay, or given up for good. */
export function afterFailure(
  attempts: number,
  maxAttempts: number,
  retryable: boolean,
): { retryInMs: number } | { giveUp: true } {
  if (!retryable || attempts >= maxAttempts) return { giveUp: true };
  return { retryInMs: Math.min(60_000, 2_000 * 2 ** (attempts - 1)) };
}

/** A score is a finite number in [0, 1]; anything else is the judge's fault, not the record's. */
export const isScore = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0 && x <= 1;
