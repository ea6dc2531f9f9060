import type { ServiceImpl } from '@connectrpc/connect';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Reasons, errors } from '@whetstone/errors';
import { InferenceRouterService } from '@whetstone/proto/inference/v1';
import type { Caller, DeploymentRow } from '../../application/ports';
import type { InferenceRouter } from '../../application/router';
import type { CatalogEntry } from '../../domain/catalog';

const callerOf = (c: { teamId: string; keyId: string; userId: string } | undefined): Caller => {
  if (!c?.teamId)
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'caller.team_id is required', [
      { field: 'caller.team_id', message: 'required' },
    ]);
  return { teamId: c.teamId, keyId: c.keyId, userId: c.userId };
};
const ts = (d: Date | null) => (d ? timestampFromDate(d) : undefined);

function baseModelToPb(e: CatalogEntry) {
  return {
    id: e.id,
    name: e.name,
    task: e.task,
    supportsInference: e.supportsInference,
    supportsOnDemandInference: e.supportsOnDemandInference,
    supportsTraining: e.supportsTraining,
    trainingTypes: e.trainingTypes,
    nrEpochs: e.nrEpochs,
    learningRate: e.learningRate,
    price: {
      perRequestMicroCredits: e.price.perRequest,
      per1kInputTokensMicroCredits: e.price.per1kInputTokens,
      per1kOutputTokensMicroCredits: e.price.per1kOutputTokens,
    },
    provider: e.provider,
    description: e.description,
  };
}

function deploymentToPb(d: DeploymentRow) {
  return {
    deploymentId: d.id,
    projectId: d.projectId,
    trainingJobId: d.trainingJobId,
    status: d.status,
    reason: d.reason ?? '',
    createdAt: ts(d.createdAt),
    activatedAt: ts(d.activatedAt),
    endedAt: ts(d.endedAt),
  };
}

/** InferenceRouterService: proto in, use case, proto out. The caller's team scopes every call. */
export function routerHandler(router: InferenceRouter): ServiceImpl<typeof InferenceRouterService> {
  return {
    listBaseModels() {
      return { models: router.listBaseModels().map(baseModelToPb) };
    },
    async listModels(req) {
      return {
        models: (await router.listModels(callerOf(req.caller))).map((m) => ({
          id: m.id,
          ownedBy: m.ownedBy,
          createdAt: ts(m.createdAt),
        })),
      };
    },
    async infer(req) {
      const out = await router.infer({
        caller: callerOf(req.caller),
        modelId: req.modelId,
        projectId: req.projectId,
        texts: req.texts,
        schema: req.schema as Record<string, unknown> | undefined,
        threshold: req.threshold,
        includeConfidence: req.includeConfidence,
        includeSpans: req.includeSpans,
        task: req.task,
      });
      return {
        inferenceId: out.inferenceId,
        model: out.model,
        results: out.results as never,
        usage: {
          inputTokens: BigInt(out.usage.inputTokens),
          outputTokens: BigInt(out.usage.outputTokens),
          costMicroCredits: out.usage.costMicroCredits,
        },
        latencyMs: out.latencyMs,
      };
    },
    async createProject(req) {
      const p = await router.createProject(callerOf(req.caller), req.name);
      return { project: { id: p.id, name: p.name, createdAt: ts(p.createdAt), activeTrainingJobId: '' } };
    },
    async listProjects(req) {
      const rows = await router.listProjects(callerOf(req.caller));
      return {
        projects: rows.map((p) => ({
          id: p.id,
          name: p.name,
          createdAt: ts(p.createdAt),
          activeTrainingJobId: p.activeTrainingJobId ?? '',
        })),
      };
    },
    async deleteProject(req) {
      await router.deleteProject(callerOf(req.caller), req.projectId);
      return {};
    },
    async createDeployment(req) {
      return {
        deployment: deploymentToPb(
          await router.createDeployment(callerOf(req.caller), req.projectId, req.trainingJobId),
        ),
      };
    },
    async listDeployments(req) {
      return { deployments: (await router.listDeployments(callerOf(req.caller), req.projectId)).map(deploymentToPb) };
    },
    async *generateText(req, ctx) {
      for await (const piece of router.generate({
        caller: callerOf(req.caller),
        modelId: req.modelId,
        projectId: req.projectId,
        messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
        options: {
          temperature: req.temperature,
          topP: req.topP,
          maxTokens: req.maxTokens,
          stop: req.stop,
          seed: Number(req.seed),
          signal: ctx.signal,
        },
      })) {
        if ('text' in piece) yield { text: piece.text };
        else {
          const d = piece.done;
          yield {
            text: '',
            finishReason: d.finishReason,
            inferenceId: d.inferenceId,
            model: d.model,
            usage: {
              inputTokens: BigInt(d.usage.inputTokens),
              outputTokens: BigInt(d.usage.outputTokens),
              costMicroCredits: d.usage.costMicroCredits,
            },
            latencyMs: d.latencyMs,
          };
        }
      }
    },
    async listJobDeployments(req) {
      return {
        deployments: (await router.listJobDeployments(callerOf(req.caller), req.trainingJobId)).map(deploymentToPb),
      };
    },
  };
}
