import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import { type EmbedTextsResponse, FinishReason, type InferenceRouterService } from '@whetstone/proto/inference/v1';
import type {
  BaseModelView,
  ChatPiece,
  EmbeddingsView,
  GeneratePiece,
  Inference,
  Principal,
} from '../application/ports';
import { chatPieceOf, chatRequestToPb } from './chat.mapper';
import {
  baseModelView,
  chatRoleToPb,
  deploymentView,
  finishReasonOf,
  inferenceTaskToPb,
  projectRouterView,
  projectView,
  usageView,
} from './inference.mapper';
import { callerOf } from './caller';

const NO_BYTES = new Uint8Array(0);
const utf8 = new TextDecoder();
const unixSeconds = (ts: Timestamp | undefined) => (ts ? Math.floor(timestampDate(ts).getTime() / 1000) : 0);

type Router = Client<typeof InferenceRouterService>;

async function* generatePieces(stream: ReturnType<Router['generateText']>): AsyncGenerator<GeneratePiece> {
  for await (const piece of stream) {
    if (piece.text) yield { text: piece.text };
    // Only the last piece says why generation ended; it carries the metering.
    if (piece.finishReason !== FinishReason.UNSPECIFIED)
      yield {
        done: {
          inference_id: piece.inferenceId,
          model: piece.model,
          finish_reason: finishReasonOf(piece.finishReason),
          latency_ms: piece.latencyMs,
          usage: usageView(piece.usage),
        },
      };
  }
}

async function* chatPieces(stream: ReturnType<Router['chat']>): AsyncGenerator<ChatPiece> {
  for await (const piece of stream) yield chatPieceOf(piece);
}

/** The router's embeddings in the gateway's shape (the EmbedTexts call's and a batch result's). */
export const embeddingsView = (e: EmbedTextsResponse): EmbeddingsView => ({
  model: e.model,
  vectors: e.embeddings.map((v) => v.values),
  dimensions: e.dimensions,
  inputTokens: Number(e.inputTokens),
});

/** The inference-router's catalog, extraction and generation over gRPC, in the gateway's plain shapes. */
function servingOverRpc(client: Router) {
  return {
    async listBaseModels(principal: Principal): Promise<BaseModelView[]> {
      return (await client.listBaseModels({ caller: callerOf(principal) })).models.map(baseModelView);
    },
    async listModels(principal: Principal) {
      const res = await client.listModels({ caller: callerOf(principal) });
      return res.models.map((m) => ({
        id: m.id,
        object: 'model' as const,
        created: unixSeconds(m.createdAt),
        owned_by: m.ownedBy,
      }));
    },
    generate(principal, input, signal) {
      const { modelId, projectId, messages, ...sampling } = input;
      const stream = client.generateText(
        {
          caller: callerOf(principal),
          modelId,
          projectId,
          messages: messages.map((m) => ({ role: chatRoleToPb(m.role), content: m.content })),
          sampling: { ...sampling, seed: BigInt(sampling.seed) },
        },
        { signal, timeoutMs: 120_000 },
      );
      return generatePieces(stream);
    },
    chat(principal, input, signal) {
      // No deadline of the gateway's own: a long reply streams as long as the client listens.
      return chatPieces(client.chat(chatRequestToPb(principal, input), { signal }));
    },
    async countChatTokens(principal, input) {
      const res = await client.countChatTokens({ chat: chatRequestToPb(principal, input) });
      return Number(res.inputTokens);
    },
    async embed(principal, r) {
      return embeddingsView(await client.embedTexts({ caller: callerOf(principal), ...r }));
    },
    async infer(principal, r) {
      const res = await client.infer({
        caller: callerOf(principal),
        modelId: r.modelId,
        projectId: r.projectId,
        texts: r.texts,
        schemaJson: r.schema ? Buffer.from(JSON.stringify(r.schema)) : NO_BYTES,
        threshold: r.threshold,
        includeConfidence: r.includeConfidence,
        includeSpans: r.includeSpans,
        task: inferenceTaskToPb(r.task),
      });
      return {
        inferenceId: res.inferenceId,
        model: res.model,
        results: JSON.parse(utf8.decode(res.resultsJson)) as Record<string, unknown>[],
        usage: usageView(res.usage),
        latencyMs: res.latencyMs,
      };
    },
  } satisfies Partial<Inference>;
}

/** The inference-router's projects and deployments over gRPC. */
function projectsOverRpc(client: Router) {
  return {
    async createProject(principal, name) {
      return projectView((await client.createProject({ caller: callerOf(principal), name })).project);
    },
    async listProjects(principal) {
      return (await client.listProjects({ caller: callerOf(principal) })).projects.map(projectView);
    },
    async deleteProject(principal, projectId) {
      await client.deleteProject({ caller: callerOf(principal), projectId });
    },
    async createDeployment(principal, projectId, trainingJobId) {
      const res = await client.createDeployment({ caller: callerOf(principal), projectId, trainingJobId });
      return deploymentView(res.deployment);
    },
    async listJobDeployments(principal, trainingJobId) {
      const res = await client.listJobDeployments({ caller: callerOf(principal), trainingJobId });
      return res.deployments.map(deploymentView);
    },
    async listDeployments(principal, projectId) {
      return (await client.listDeployments({ caller: callerOf(principal), projectId })).deployments.map(deploymentView);
    },
  } satisfies Partial<Inference>;
}

/** Router projects' configuration over gRPC. */
function routersOverRpc(client: Router) {
  return {
    async setProjectRouter(principal, projectId, input) {
      const res = await client.setProjectRouter({ caller: callerOf(principal), projectId, ...input });
      return projectRouterView(res.router);
    },
    async getProjectRouter(principal, projectId) {
      return projectRouterView((await client.getProjectRouter({ caller: callerOf(principal), projectId })).router);
    },
    async deleteProjectRouter(principal, projectId) {
      await client.deleteProjectRouter({ caller: callerOf(principal), projectId });
    },
  } satisfies Partial<Inference>;
}

/** The inference-router over gRPC, in the gateway's plain shapes. */
export function inferenceOverRpc(client: Router, ready: () => Promise<boolean>): Inference {
  return { ready, ...servingOverRpc(client), ...projectsOverRpc(client), ...routersOverRpc(client) };
}
