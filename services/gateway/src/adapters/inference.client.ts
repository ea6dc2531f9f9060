import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import { InferenceRouterService, type Deployment, type Project } from '@whetstone/proto/inference/v1';
import type { DeploymentView, Inference, Principal, ProjectView } from '../application/ports';

const MICRO_PER_CREDIT = 1_000_000;
const iso = (ts: Timestamp | undefined): string | null => (ts ? timestampDate(ts).toISOString() : null);
const credits = (micro: bigint): number => Number(micro) / MICRO_PER_CREDIT;
const caller = (p: Principal) => ({ teamId: p.teamId, keyId: p.keyId, userId: p.userId });

const projectView = (p: Project | undefined): ProjectView => ({
  id: p?.id ?? '',
  name: p?.name ?? '',
  created_at: iso(p?.createdAt),
  active_training_job_id: p?.activeTrainingJobId || null,
});
const deploymentView = (d: Deployment | undefined): DeploymentView => ({
  deployment_id: d?.deploymentId ?? '',
  project_id: d?.projectId ?? '',
  training_job_id: d?.trainingJobId ?? '',
  status: d?.status ?? '',
  reason: d?.reason || null,
  created_at: iso(d?.createdAt),
  activated_at: iso(d?.activatedAt),
  ended_at: iso(d?.endedAt),
});

/** The inference-router over gRPC, in the gateway's plain shapes. */
export function inferenceOverRpc(
  client: Client<typeof InferenceRouterService>,
  ready: () => Promise<boolean>,
): Inference {
  return {
    ready,
    async listBaseModels(principal) {
      const res = await client.listBaseModels({ caller: caller(principal) });
      return res.models.map((m) => ({
        id: m.id,
        object: 'base_model' as const,
        name: m.name,
        task: m.task,
        provider: m.provider,
        description: m.description,
        supports_inference: m.supportsInference,
        supports_on_demand_inference: m.supportsOnDemandInference,
        supports_training: m.supportsTraining,
        training_types: m.trainingTypes,
        default_hyperparameters: m.supportsTraining
          ? { nr_epochs: m.nrEpochs?.default ?? 0, learning_rate: m.learningRate?.default ?? 0 }
          : null,
        hyperparameter_bounds: m.supportsTraining
          ? {
              nr_epochs: { min: m.nrEpochs?.min ?? 0, max: m.nrEpochs?.max ?? 0 },
              learning_rate: { min: m.learningRate?.min ?? 0, max: m.learningRate?.max ?? 0 },
            }
          : null,
        pricing: {
          per_request_credits: credits(m.price?.perRequestMicroCredits ?? 0n),
          per_1k_input_tokens_credits: credits(m.price?.per1kInputTokensMicroCredits ?? 0n),
          per_1k_output_tokens_credits: credits(m.price?.per1kOutputTokensMicroCredits ?? 0n),
        },
      }));
    },
    async listModels(principal) {
      const res = await client.listModels({ caller: caller(principal) });
      return res.models.map((m) => ({
        id: m.id,
        object: 'model' as const,
        created: m.createdAt ? Math.floor(timestampDate(m.createdAt).getTime() / 1000) : 0,
        owned_by: m.ownedBy,
      }));
    },
    async *generate(principal, input, signal) {
      const stream = client.generateText(
        {
          caller: caller(principal),
          modelId: input.modelId,
          projectId: input.projectId,
          messages: input.messages,
          temperature: input.temperature,
          topP: input.topP,
          maxTokens: input.maxTokens,
          stop: input.stop,
          seed: BigInt(input.seed),
        },
        { signal, timeoutMs: 120_000 },
      );
      for await (const piece of stream) {
        if (piece.text) yield { text: piece.text };
        if (piece.finishReason) {
          const input_tokens = Number(piece.usage?.inputTokens ?? 0n);
          const output_tokens = Number(piece.usage?.outputTokens ?? 0n);
          yield {
            done: {
              inference_id: piece.inferenceId,
              model: piece.model,
              finish_reason: piece.finishReason,
              latency_ms: piece.latencyMs,
              usage: {
                input_tokens,
                output_tokens,
                total_tokens: input_tokens + output_tokens,
                cost_credits: credits(piece.usage?.costMicroCredits ?? 0n),
              },
            },
          };
        }
      }
    },
    async infer(principal, r) {
      const res = await client.infer({
        caller: caller(principal),
        modelId: r.modelId,
        projectId: r.projectId,
        texts: r.texts,
        ...(r.schema ? { schema: r.schema as never } : {}),
        threshold: r.threshold,
        includeConfidence: r.includeConfidence,
        includeSpans: r.includeSpans,
        task: r.task,
      });
      const input = Number(res.usage?.inputTokens ?? 0n);
      const output = Number(res.usage?.outputTokens ?? 0n);
      return {
        inferenceId: res.inferenceId,
        model: res.model,
        results: res.results as Record<string, unknown>[],
        usage: {
          input_tokens: input,
          output_tokens: output,
          total_tokens: input + output,
          cost_credits: credits(res.usage?.costMicroCredits ?? 0n),
        },
        latencyMs: res.latencyMs,
      };
    },
    async createProject(principal, name) {
      return projectView((await client.createProject({ caller: caller(principal), name })).project);
    },
    async listProjects(principal) {
      return (await client.listProjects({ caller: caller(principal) })).projects.map(projectView);
    },
    async deleteProject(principal, projectId) {
      await client.deleteProject({ caller: caller(principal), projectId });
    },
    async createDeployment(principal, projectId, trainingJobId) {
      return deploymentView(
        (await client.createDeployment({ caller: caller(principal), projectId, trainingJobId })).deployment,
      );
    },
    async listJobDeployments(principal, trainingJobId) {
      return (await client.listJobDeployments({ caller: caller(principal), trainingJobId })).deployments.map(
        deploymentView,
      );
    },
    async listDeployments(principal, projectId) {
      return (await client.listDeployments({ caller: caller(principal), projectId })).deployments.map(deploymentView);
    },
  };
}
