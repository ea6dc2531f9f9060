import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import {
  AdaptationStatus,
  type Adaptation,
  type AdaptationScore,
  type AdaptiveService,
  type AdaptiveSettings,
} from '@whetstone/proto/training/v1';
import type {
  AdaptationScoreView,
  AdaptationView,
  AdaptivePort,
  AdaptiveSettingsView,
} from '../application/adaptive-ports';
import { callerOf } from './caller';

/** The adaptive contract ⇄ the public JSON of the /projects/:id/adaptive and /adaptations routes. */

const iso = (ts: Timestamp | undefined): string | null => (ts ? timestampDate(ts).toISOString() : null);

const STATUS: Record<AdaptationStatus, AdaptationView['status']> = {
  [AdaptationStatus.UNSPECIFIED]: 'failed',
  [AdaptationStatus.TRAINING]: 'training',
  [AdaptationStatus.EVALUATING]: 'evaluating',
  [AdaptationStatus.PROMOTING]: 'promoting',
  [AdaptationStatus.PROMOTED]: 'promoted',
  [AdaptationStatus.REJECTED]: 'rejected',
  [AdaptationStatus.FAILED]: 'failed',
};

function settingsView(s: AdaptiveSettings | undefined, projectId: string): AdaptiveSettingsView {
  return {
    project_id: s?.projectId || projectId,
    enabled: s?.enabled ?? false,
    min_corrections: s?.minCorrections ?? 0,
    heldout_dataset: s?.heldoutDataset || null,
    metric: (s?.metric || 'f1') as AdaptiveSettingsView['metric'],
    min_gain: s?.minGain ?? 0,
    f1_tolerance: s?.f1Tolerance ?? 0,
    feedback_weight: s?.feedbackWeight ?? 1,
    min_label_support: s?.minLabelSupport ?? 1,
    nr_epochs: s?.nrEpochs || null,
    updated_at: iso(s?.updatedAt),
  };
}

const scoreView = (s: AdaptationScore | undefined): AdaptationScoreView | null =>
  s
    ? { job_id: s.jobId, evaluation_id: s.evaluationId, metrics: (s.metrics as Record<string, unknown>) ?? null }
    : null;

function adaptationView(a: Adaptation | undefined): AdaptationView {
  if (!a) throw new Error('the orchestrator returned no adaptation');
  const decided = a.decidedAt !== undefined || a.status === AdaptationStatus.PROMOTING;
  return {
    id: a.id,
    project_id: a.projectId,
    status: STATUS[a.status],
    trigger: a.trigger,
    feedback_dataset: a.feedbackDataset,
    feedback_version: a.feedbackVersion,
    feedback_rows: a.feedbackRows,
    corrections: a.corrections,
    heldout_dataset: a.heldoutDataset,
    settings: a.settings ? settingsView(a.settings, a.projectId) : null,
    baseline: scoreView(a.baseline),
    candidate: scoreView(a.candidate),
    control: scoreView(a.control),
    gain: decided && a.baseline?.metrics ? a.gain : null,
    decision_reason: a.decisionReason || null,
    created_at: iso(a.createdAt),
    decided_at: iso(a.decidedAt),
  };
}

export function adaptiveOverRpc(client: Client<typeof AdaptiveService>): AdaptivePort {
  return {
    async getSettings(p, projectId) {
      const res = await client.getAdaptiveSettings({ caller: callerOf(p), projectId });
      return settingsView(res.settings, projectId);
    },
    async setSettings(p, s) {
      const res = await client.setAdaptiveSettings({
        caller: callerOf(p),
        settings: {
          projectId: s.project_id,
          enabled: s.enabled,
          minCorrections: s.min_corrections,
          heldoutDataset: s.heldout_dataset ?? '',
          metric: s.metric,
          minGain: s.min_gain,
          f1Tolerance: s.f1_tolerance,
          feedbackWeight: s.feedback_weight,
          minLabelSupport: s.min_label_support,
          nrEpochs: s.nr_epochs ?? 0,
        },
      });
      return settingsView(res.settings, s.project_id);
    },
    async adapt(p, projectId) {
      return adaptationView((await client.adapt({ caller: callerOf(p), projectId })).adaptation);
    },
    async list(p, projectId, limit) {
      const res = await client.listAdaptations({ caller: callerOf(p), projectId, limit });
      return res.adaptations.map(adaptationView);
    },
    async get(p, adaptationId) {
      return adaptationView((await client.getAdaptation({ caller: callerOf(p), adaptationId })).adaptation);
    },
  };
}
