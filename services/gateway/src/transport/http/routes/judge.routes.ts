import { z } from 'zod';
import { pathId } from './inference/projects.routes';
import type { HistoryPort } from '../../../application/history-ports';
import type { Inference } from '../../../application/ports';
import type { Api } from '../api';
import { authOf } from '../auth';

const JudgeSettingsBody = z
  .object({
    enabled: z.boolean({ error: 'must be true or false' }),
    sample_rate: z
      .number({ error: 'must be a number from 0 to 1' })
      .min(0, 'must be a number from 0 to 1')
      .max(1, 'must be a number from 0 to 1'),
    kind: z.enum(['builtin', 'llm'], { error: "must be 'builtin' or 'llm'" }).optional(),
    judge_model: z.string().trim().max(200, 'must be at most 200 characters').optional(),
  })
  .openapi('JudgeSettingsRequest');

/**
 * Judging of a project's inferences (issue 16). Projects live in the router and the settings in inference-history,
 * so the project is first looked up as the caller's team's (another team's, or an unknown one, is 404).
 */
export function registerJudgeRoutes(api: Api, history: HistoryPort, inference: Inference): void {
  const ownProject = async (res: Parameters<typeof authOf>[0], value: unknown) => {
    const projectId = pathId(value, 'project_id');
    await inference.listDeployments(authOf(res).principal, projectId);
    return projectId;
  };

  api.route(
    {
      method: 'put',
      path: '/projects/:project_id/judge',
      summary:
        'Judge a share of the project’s new inferences: {enabled, sample_rate 0–1, kind builtin|llm, judge_model}; scores land on the records (llmaj_score, judge_rationale, judge_kind, judge_model)',
      tag: 'Projects',
      auth: 'key-or-session',
      body: JudgeSettingsBody,
    },
    async ({ req, res, body }) => {
      const projectId = await ownProject(res, req.params.project_id);
      return history.setJudgeSettings(authOf(res).principal, {
        projectId,
        enabled: body.enabled,
        sampleRate: body.sample_rate,
        kind: body.kind ?? 'builtin',
        judgeModel: body.judge_model ?? '',
      });
    },
  );

  api.route(
    {
      method: 'get',
      path: '/projects/:project_id/judge',
      summary: 'The project’s judge settings; judging is off until set',
      tag: 'Projects',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const projectId = await ownProject(res, req.params.project_id);
      return history.getJudgeSettings(authOf(res).principal, projectId);
    },
  );
}
