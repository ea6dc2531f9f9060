import { errors, Reasons } from '@whetstone/errors';
import { judgeSettingsProblems, judgingOff, type JudgeKind, type JudgeSettings } from '../domain/judge';
import type { JudgeStore } from './ports';

/** New settings as the caller gives them (the kind unchecked until validated). */
export interface JudgeSettingsInput {
  projectId: string;
  enabled: boolean;
  sampleRate: number;
  kind: string;
  judgeModel: string;
}

/**
 * Replaces a project's judge settings; 422 naming every bad field. The gateway has checked that the project is the
 * caller's team's (projects live in the router); history scopes the row to the team all the same.
 */
export async function setJudgeSettings(
  store: JudgeStore,
  now: () => Date,
  teamId: string,
  input: JudgeSettingsInput,
): Promise<JudgeSettings> {
  const issues = judgeSettingsProblems(input);
  if (!input.projectId) issues.push({ field: 'project_id', message: 'is required', code: 'required' });
  if (issues.length) throw errors.invalid(Reasons.VALIDATION_FAILED, 'Invalid judge settings', issues);
  const kind = input.kind as JudgeKind;
  return store.saveSettings(teamId, {
    projectId: input.projectId,
    enabled: input.enabled,
    sampleRate: input.sampleRate,
    kind,
    judgeModel: kind === 'builtin' ? '' : input.judgeModel.trim(),
    updatedAt: now(),
  });
}

/** A project's judge settings; judging off when it was never configured. */
export async function getJudgeSettings(store: JudgeStore, teamId: string, projectId: string): Promise<JudgeSettings> {
  return (await store.getSettings(teamId, projectId)) ?? judgingOff(projectId);
}
