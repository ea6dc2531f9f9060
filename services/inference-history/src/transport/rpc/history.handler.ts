import type { ServiceImpl } from '@connectrpc/connect';
import type { InferenceHistoryService } from '@whetstone/proto/history/v1';
import { requireCaller } from '@whetstone/rpc';
import type { HistoryDeps } from '../../application/deps';
import { deleteInference } from '../../application/delete-inference';
import { updateMetadata } from '../../application/update-metadata';
import { getFeedback } from '../../application/get-feedback';
import { getInference } from '../../application/get-inference';
import { listInferences } from '../../application/list-inferences';
import { submitFeedback } from '../../application/submit-feedback';
import { getJudgeSettings, setJudgeSettings } from '../../application/judge-settings';
import type { JudgeStore } from '../../application/ports';
import {
  correctionOf,
  feedbackToPb,
  filterOf,
  judgeKindOf,
  judgeSettingsToPb,
  recordToPb,
  verdictOf,
} from './history.mapper';

/** InferenceHistoryService: proto in, use case, proto out. The caller's team scopes every call. */
export function historyHandler(
  deps: HistoryDeps & { judgeStore: JudgeStore },
): ServiceImpl<typeof InferenceHistoryService> {
  return {
    async listInferences(req) {
      const page = await listInferences(deps, requireCaller(req.caller).teamId, filterOf(req));
      return { records: page.records.map(recordToPb), total: BigInt(page.total), totalCapped: page.totalCapped };
    },
    async getInference(req) {
      return { record: recordToPb(await getInference(deps, requireCaller(req.caller).teamId, req.inferenceId)) };
    },
    async submitFeedback(req) {
      const feedback = await submitFeedback(deps, requireCaller(req.caller).teamId, req.inferenceId, {
        verdict: verdictOf(req.verdict),
        correctedOutput: correctionOf(req.correctedOutput),
        notes: req.notes,
      });
      return { feedback: feedbackToPb(feedback) };
    },
    async getFeedback(req) {
      return { feedback: feedbackToPb(await getFeedback(deps, requireCaller(req.caller).teamId, req.inferenceId)) };
    },
    async deleteInference(req) {
      return { inferenceId: await deleteInference(deps, requireCaller(req.caller).teamId, req.inferenceId) };
    },
    async updateInferenceMetadata(req) {
      const teamId = requireCaller(req.caller).teamId;
      return { record: recordToPb(await updateMetadata(deps, teamId, req.inferenceId, { ...req.metadata })) };
    },
    async setJudgeSettings(req) {
      const s = req.settings;
      const settings = await setJudgeSettings(deps.judgeStore, deps.now, requireCaller(req.caller).teamId, {
        projectId: s?.projectId ?? '',
        enabled: s?.enabled ?? false,
        sampleRate: s?.sampleRate ?? 0,
        kind: judgeKindOf(s?.kind ?? 0),
        judgeModel: s?.judgeModel ?? '',
      });
      return { settings: judgeSettingsToPb(settings) };
    },
    async getJudgeSettings(req) {
      const teamId = requireCaller(req.caller).teamId;
      return { settings: judgeSettingsToPb(await getJudgeSettings(deps.judgeStore, teamId, req.projectId)) };
    },
  };
}
