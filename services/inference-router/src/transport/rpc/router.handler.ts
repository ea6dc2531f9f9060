import type { ServiceImpl } from '@connectrpc/connect';
import type { InferenceRouterService } from '@whetstone/proto/inference/v1';
import { Reasons, errors } from '@whetstone/errors';
import { requireCaller } from '@whetstone/rpc';
import { createDeployment, listDeployments, listJobDeployments } from '../../application/deployments';
import { chat, countChatTokens } from '../../application/chat';
import type { RouterDeps } from '../../application/deps';
import { embed } from '../../application/embed';
import { extract } from '../../application/extract';
import { generate } from '../../application/generate';
import { listBaseModels, listModels } from '../../application/list-models';
import { deleteProjectRouter, getProjectRouter, setProjectRouter } from '../../application/project-router';
import { createProject, deleteProject, listProjects } from '../../application/projects';
import type { DeploymentWarmer } from '../../application/warm-deployment';
import { chatCallOf, chatPieceToPb } from './chat.mapper';
import { projectRouterToPb } from './project-router.mapper';
import {
  baseModelToPb,
  callableModelToPb,
  chatTurnsOf,
  deploymentToPb,
  embedInputOf,
  embedOutputToPb,
  extractInputOf,
  extractOutputToPb,
  generateOptionsOf,
  generatePieceToPb,
  projectToPb,
} from './router.mapper';

/** InferenceRouterService: proto in, use case, proto out. The caller's team scopes every call. */
export function routerHandler(deps: RouterDeps, warmer: DeploymentWarmer): ServiceImpl<typeof InferenceRouterService> {
  return {
    listBaseModels: () => ({ models: listBaseModels(deps).map(baseModelToPb) }),
    async listModels(req) {
      return { models: (await listModels(deps, requireCaller(req.caller))).map(callableModelToPb) };
    },
    async infer(req) {
      return extractOutputToPb(await extract(deps, extractInputOf(requireCaller(req.caller), req)));
    },
    embedTexts: async (req) => embedOutputToPb(await embed(deps, embedInputOf(requireCaller(req.caller), req))),
    async *generateText(req, ctx) {
      const pieces = generate(deps, {
        caller: requireCaller(req.caller),
        modelId: req.modelId,
        projectId: req.projectId,
        messages: chatTurnsOf(req.messages),
        options: generateOptionsOf(req.sampling, ctx.signal),
      });
      for await (const piece of pieces) yield generatePieceToPb(piece);
    },
    async createProject(req) {
      return { project: projectToPb(await createProject(deps, requireCaller(req.caller), req.name)) };
    },
    async listProjects(req) {
      return { projects: (await listProjects(deps, requireCaller(req.caller))).map(projectToPb) };
    },
    async deleteProject(req) {
      await deleteProject(deps, requireCaller(req.caller), req.projectId);
      return {};
    },
    async createDeployment(req) {
      const caller = requireCaller(req.caller);
      return {
        deployment: deploymentToPb(await createDeployment(deps, warmer, caller, req.projectId, req.trainingJobId)),
      };
    },
    async listDeployments(req) {
      return {
        deployments: (await listDeployments(deps, requireCaller(req.caller), req.projectId)).map(deploymentToPb),
      };
    },
    async *chat(req, ctx) {
      // Only a stored call's id names a record; an unstored one is a v4, which history never waits for.
      const responseId = req.store ? deps.ids.uuid() : deps.ids.ephemeral();
      const pieces = chat(deps, chatCallOf(requireCaller(req.caller), req, ctx.signal, responseId));
      for await (const piece of pieces) yield chatPieceToPb(piece, responseId);
    },
    async countChatTokens(req, ctx) {
      if (!req.chat)
        throw errors.invalid(Reasons.VALIDATION_FAILED, 'chat is required', [{ field: 'chat', message: 'required' }]);
      const { caller, request } = chatCallOf(requireCaller(req.chat.caller), req.chat, ctx.signal, '');
      return { inputTokens: BigInt(await countChatTokens(deps, caller, request)) };
    },
    async listJobDeployments(req) {
      const rows = await listJobDeployments(deps, requireCaller(req.caller), req.trainingJobId);
      return { deployments: rows.map(deploymentToPb) };
    },
    async setProjectRouter(req) {
      const { candidates, referenceModel, maxPromptTokens } = req;
      const view = await setProjectRouter(deps, requireCaller(req.caller), req.projectId, {
        candidates,
        referenceModel,
        maxPromptTokens,
      });
      return { router: projectRouterToPb(view) };
    },
    async getProjectRouter(req) {
      return { router: projectRouterToPb(await getProjectRouter(deps, requireCaller(req.caller), req.projectId)) };
    },
    async deleteProjectRouter(req) {
      await deleteProjectRouter(deps, requireCaller(req.caller), req.projectId);
      return {};
    },
  };
}
