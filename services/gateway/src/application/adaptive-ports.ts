/** What the gateway needs for adaptive inference (issue 16), in the public JSON shapes; the orchestrator owns it. */
import type { Principal } from './ports';

export interface AdaptiveSettingsView {
  project_id: string;
  enabled: boolean;
  min_corrections: number;
  /** null: the deployed job's first training dataset. */
  heldout_dataset: string | null;
  metric: 'f1' | 'precision' | 'recall';
  min_gain: number;
  f1_tolerance: number;
  feedback_weight: number;
  min_label_support: number;
  /** null: the base model's default. */
  nr_epochs: number | null;
  /** null until set. */
  updated_at: string | null;
}

export interface AdaptationScoreView {
  job_id: string;
  evaluation_id: string;
  /** f1, precision, recall, per_label, examples; null until the evaluation completes. */
  metrics: Record<string, unknown> | null;
}

export interface AdaptationView {
  id: string;
  project_id: string;
  status: 'training' | 'evaluating' | 'promoting' | 'promoted' | 'rejected' | 'failed';
  trigger: string;
  feedback_dataset: string;
  feedback_version: number;
  feedback_rows: number;
  corrections: number;
  heldout_dataset: string;
  settings: AdaptiveSettingsView | null;
  baseline: AdaptationScoreView | null;
  candidate: AdaptationScoreView | null;
  /** The deployed job retrained the same way without the feedback; null when it had no original data. */
  control: AdaptationScoreView | null;
  /** Candidate minus baseline on settings.metric; null until decided. */
  gain: number | null;
  decision_reason: string | null;
  created_at: string | null;
  decided_at: string | null;
}

export type AdaptiveSettingsInput = Omit<AdaptiveSettingsView, 'updated_at'>;

export interface AdaptivePort {
  getSettings(principal: Principal, projectId: string): Promise<AdaptiveSettingsView>;
  setSettings(principal: Principal, settings: AdaptiveSettingsInput): Promise<AdaptiveSettingsView>;
  adapt(principal: Principal, projectId: string): Promise<AdaptationView>;
  list(principal: Principal, projectId: string, limit: number): Promise<AdaptationView[]>;
  get(principal: Principal, adaptationId: string): Promise<AdaptationView>;
}
