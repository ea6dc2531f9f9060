/** Domain ⇄ proto for AdaptiveService; no rules here. */
import type { JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import {
  AdaptationStatus as PbStatus,
  type AdaptationSchema,
  type AdaptiveSettings as PbSettings,
  type AdaptiveSettingsSchema,
} from '@whetstone/proto/training/v1';
import type { Adaptation, AdaptationStatus, AdaptiveSettings, GateMetric } from '../../domain/adaptation';

const STATUS: Record<AdaptationStatus, PbStatus> = {
  training: PbStatus.TRAINING,
  evaluating: PbStatus.EVALUATING,
  promoting: PbStatus.PROMOTING,
  promoted: PbStatus.PROMOTED,
  rejected: PbStatus.REJECTED,
  failed: PbStatus.FAILED,
};

const ts = (d: Date | null) => (d ? timestampFromDate(d) : undefined);
const struct = (v: Record<string, unknown> | null) => (v ? (v as JsonObject) : undefined);

export function settingsToPb(s: AdaptiveSettings): MessageInitShape<typeof AdaptiveSettingsSchema> {
  return {
    projectId: s.projectId,
    enabled: s.enabled,
    minCorrections: s.minCorrections,
    heldoutDataset: s.heldoutDataset,
    metric: s.metric,
    minGain: s.minGain,
    f1Tolerance: s.f1Tolerance,
    feedbackWeight: s.feedbackWeight,
    minLabelSupport: s.minLabelSupport,
    nrEpochs: s.nrEpochs,
    updatedAt: ts(s.updatedAt),
  };
}

/** The request's settings; validation (bounds, metric names) is the domain's. */
export function settingsFromPb(s: PbSettings | undefined): AdaptiveSettings {
  return {
    projectId: s?.projectId ?? '',
    enabled: s?.enabled ?? false,
    minCorrections: s?.minCorrections ?? 0,
    heldoutDataset: s?.heldoutDataset ?? '',
    metric: (s?.metric ?? '') as GateMetric,
    minGain: s?.minGain ?? 0,
    f1Tolerance: s?.f1Tolerance ?? 0,
    feedbackWeight: s?.feedbackWeight ?? 0,
    minLabelSupport: s?.minLabelSupport ?? 0,
    nrEpochs: s?.nrEpochs ?? 0,
    updatedAt: null,
  };
}

export function adaptationToPb(a: Adaptation): MessageInitShape<typeof AdaptationSchema> {
  return {
    id: a.id,
    projectId: a.projectId,
    status: STATUS[a.status],
    trigger: a.trigger,
    feedbackDataset: a.feedbackDataset,
    feedbackVersion: a.feedbackVersion,
    feedbackRows: a.feedbackRows,
    corrections: a.corrections,
    settings: settingsToPb(a.settings),
    heldoutDataset: a.heldoutDataset,
    baseline: { jobId: a.baselineJobId, evaluationId: a.baselineEvaluationId, metrics: struct(a.baselineMetrics) },
    candidate: { jobId: a.candidateJobId, evaluationId: a.candidateEvaluationId, metrics: struct(a.candidateMetrics) },
    ...(a.controlJobId
      ? {
          control: {
            jobId: a.controlJobId,
            evaluationId: a.controlEvaluationId ?? '',
            metrics: struct(a.controlMetrics),
          },
        }
      : {}),
    decisionReason: a.decisionReason,
    gain: a.gain ?? 0,
    createdAt: ts(a.createdAt),
    decidedAt: ts(a.decidedAt),
  };
}
