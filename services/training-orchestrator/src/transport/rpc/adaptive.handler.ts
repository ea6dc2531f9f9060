import { requireCaller, type ServiceImpl } from '@whetstone/rpc';
import type { AdaptiveService } from '@whetstone/proto/training/v1';
import {
  adaptNow,
  getAdaptation,
  getAdaptiveSettings,
  listAdaptations,
  setAdaptiveSettings,
} from '../../application/adaptive';
import type { AdaptiveDeps } from '../../application/deps';
import { adaptationToPb, settingsFromPb, settingsToPb } from './adaptive.mapper';

/** AdaptiveService: a project's adaptive settings and audit trail, scoped to the caller's team. */
export function adaptiveHandler(deps: AdaptiveDeps): ServiceImpl<typeof AdaptiveService> {
  return {
    async getAdaptiveSettings(req) {
      return { settings: settingsToPb(await getAdaptiveSettings(deps, requireCaller(req.caller), req.projectId)) };
    },
    async setAdaptiveSettings(req) {
      const settings = await setAdaptiveSettings(deps, requireCaller(req.caller), settingsFromPb(req.settings));
      return { settings: settingsToPb(settings) };
    },
    async adapt(req) {
      return { adaptation: adaptationToPb(await adaptNow(deps, requireCaller(req.caller), req.projectId)) };
    },
    async listAdaptations(req) {
      const rows = await listAdaptations(deps, requireCaller(req.caller), req.projectId, req.limit);
      return { adaptations: rows.map(adaptationToPb) };
    },
    async getAdaptation(req) {
      return { adaptation: adaptationToPb(await getAdaptation(deps, requireCaller(req.caller), req.adaptationId)) };
    },
  };
}
