import { AppError, Reasons, errors } from '@whetstone/errors';
import { SchemaError, normalizeSchema } from '@whetstone/ml';
import { Catalog, Restrictions, priceOf, type CatalogEntry } from '../domain/catalog';
import type {
  Billing,
  Caller,
  ChatTurn,
  DeploymentRow,
  GenerateOptions,
  Ids,
  Metering,
  ModelFleet,
  ModelRef,
  ProjectStore,
  TrainedModels,
} from './ports';

export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface RouterDeps {
  catalog: Catalog;
  restrictions: Restrictions;
  trained: TrainedModels;
  billing: Billing;
  fleet: ModelFleet;
  metering: Metering;
  store: ProjectStore;
  ids: Ids;
  logger: Logger;
  now?: () => Date;
  /** How long a deployment may take to warm before it fails. */
  warmTimeoutMs?: number;
}

export interface InferInput {
  caller: Caller;
  modelId: string;
  projectId: string;
  texts: string[];
  schema: Record<string, unknown> | undefined;
  threshold: number;
  includeConfidence: boolean;
  includeSpans: boolean;
  task: string;
}

export interface InferOutput {
  inferenceId: string;
  model: string;
  results: Record<string, unknown>[];
  usage: { inputTokens: number; outputTokens: number; costMicroCredits: bigint };
  latencyMs: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SERVABLE_JOB = new Set(['complete', 'deployed']);
const MAX_TEXTS = 1000;

/** Rough token count for the pre-flight credit check (the model-server reports the real one). */
const estimateTokens = (texts: string[]) => texts.reduce((n, t) => n + Math.ceil(t.length / 4), 0);

/** The router's use cases: catalog, native inference, projects and deployments. */
export class InferenceRouter {
  private readonly now: () => Date;
  private readonly warming = new Set<string>();

  constructor(private readonly deps: RouterDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  listBaseModels(): CatalogEntry[] {
    return this.deps.catalog.entries;
  }

  async listModels(caller: Caller): Promise<{ id: string; ownedBy: string; createdAt: Date | null }[]> {
    const base = this.deps.catalog.entries
      .filter((e) => e.supportsOnDemandInference && !this.deps.restrictions.restricted(caller.teamId, e.id))
      .map((e) => ({ id: e.id, ownedBy: e.provider === 'builtin' ? 'whetstone' : e.provider, createdAt: null }));
    const trained = (await this.deps.trained.listServable(caller.teamId)).map((m) => ({
      id: m.jobId,
      ownedBy: 'whetstone',
      createdAt: m.completedAt,
    }));
    return [...base, ...trained];
  }

  async infer(input: InferInput): Promise<InferOutput> {
    const startedAt = this.now();
    const t0 = performance.now();
    if (input.texts.length < 1 || input.texts.length > MAX_TEXTS) {
      throw errors.invalid(Reasons.VALIDATION_FAILED, `Give 1 to ${MAX_TEXTS} input texts.`, [
        { field: 'inputs', message: `must hold 1 to ${MAX_TEXTS} strings` },
      ]);
    }
    const target = input.projectId
      ? await this.projectTarget(input.caller, input.projectId)
      : await this.modelTarget(input.caller, input.modelId);
    if (target.entry.task !== 'extraction')
      throw errors.precondition(
        Reasons.MODEL_NOT_SERVABLE,
        `Model '${target.ref.modelId}' is a decoder: call it with task "generate" and messages.`,
      );
    // Project calls may omit the schema: the deployed model's trained schema is used.
    if (input.schema !== undefined || !input.projectId) validateSchema(input.schema);

    const estimate = priceOf(target.entry.price, estimateTokens(input.texts));
    await this.deps.billing.checkSpendable(input.caller.teamId, estimate, false);

    const out = await this.deps.fleet.extract(target.ref, input.texts, input.schema, {
      threshold: input.threshold,
      includeConfidence: input.includeConfidence,
      includeSpans: input.includeSpans,
    });
    const cost = priceOf(target.entry.price, out.inputTokens);
    const latencyMs = Number((performance.now() - t0).toFixed(3));
    const inferenceId = this.deps.ids.uuid();
    this.deps.metering.record({
      inferenceId,
      caller: input.caller,
      model: target.ref.modelId,
      projectId: input.projectId,
      task: input.task || 'extract',
      inputs: input.texts,
      schema: input.schema,
      outputs: out.results,
      latencyMs,
      inputTokens: out.inputTokens,
      outputTokens: 0,
      costMicroCredits: cost,
      startedAt,
      completedAt: this.now(),
    });
    return {
      inferenceId,
      model: target.ref.modelId,
      results: out.results,
      usage: { inputTokens: out.inputTokens, outputTokens: 0, costMicroCredits: cost },
      latencyMs,
    };
  }

  /**
   * Streams a trained decoder's reply (a job id, or a project whose active
   * deployment is a decoder), priced and metered like extraction.
   */
  async *generate(input: {
    caller: Caller;
    modelId: string;
    projectId: string;
    messages: ChatTurn[];
    options: GenerateOptions;
  }): AsyncGenerator<{ text: string } | { done: InferOutput & { finishReason: string } }> {
    const startedAt = this.now();
    const t0 = performance.now();
    if (!input.messages.length)
      throw errors.invalid(Reasons.VALIDATION_FAILED, 'Give at least one message.', [
        { field: 'messages', message: 'must not be empty' },
      ]);
    const target = input.projectId
      ? await this.projectTarget(input.caller, input.projectId)
      : await this.modelTarget(input.caller, input.modelId, 'decoder');
    if (target.entry.task !== 'decoder')
      throw errors.precondition(
        Reasons.MODEL_NOT_SERVABLE,
        `Model '${target.ref.modelId}' is an extraction model: call /inference with a schema instead of task "generate".`,
      );
    const promptBytes = input.messages.reduce((n, m) => n + Buffer.byteLength(m.content), 0);
    await this.deps.billing.checkSpendable(
      input.caller.teamId,
      priceOf(target.entry.price, promptBytes, input.options.maxTokens || 128),
      false,
    );
    const stream = this.deps.fleet.generate(target.ref, input.messages, input.options);
    let text = '';
    for await (const piece of stream.chunks) {
      text += piece;
      yield { text: piece };
    }
    const end = stream.done();
    const cost = priceOf(target.entry.price, end.inputTokens, end.outputTokens);
    const latencyMs = Number((performance.now() - t0).toFixed(3));
    const inferenceId = this.deps.ids.uuid();
    this.deps.metering.record({
      inferenceId,
      caller: input.caller,
      model: target.ref.modelId,
      projectId: input.projectId,
      task: 'generate',
      inputs: input.messages.map((m) => `${m.role}: ${m.content}`),
      schema: undefined,
      outputs: [{ text, finish_reason: end.finishReason }],
      latencyMs,
      inputTokens: end.inputTokens,
      outputTokens: end.outputTokens,
      costMicroCredits: cost,
      startedAt,
      completedAt: this.now(),
    });
    yield {
      done: {
        inferenceId,
        model: target.ref.modelId,
        results: [{ text }],
        usage: { inputTokens: end.inputTokens, outputTokens: end.outputTokens, costMicroCredits: cost },
        latencyMs,
        finishReason: end.finishReason,
      },
    };
  }

  /** A base model id or a training job id the team can see. */
  private async modelTarget(
    caller: Caller,
    modelId: string,
    kind: 'extraction' | 'decoder' = 'extraction',
  ): Promise<{ ref: ModelRef; entry: CatalogEntry }> {
    if (!modelId)
      throw errors.invalid(Reasons.VALIDATION_FAILED, 'Give model_id or base_model.', [
        { field: 'model_id', message: 'required (a base model id or a training job id)' },
      ]);
    const entry = this.deps.catalog.get(modelId);
    if (entry) {
      if (this.deps.restrictions.restricted(caller.teamId, entry.id))
        throw new AppError(
          'PermissionDenied',
          Reasons.MODEL_RESTRICTED,
          `Model '${entry.id}' is not available to this account.`,
        );
      if (!entry.supportsInference || !entry.supportsOnDemandInference) {
        throw errors.precondition(
          Reasons.MODEL_NOT_SERVABLE,
          `Model '${entry.id}' is a training-only base model: train a job on it and call the job id, or deploy the job to a project.`,
        );
      }
      if (entry.task !== kind) {
        throw errors.precondition(
          Reasons.MODEL_NOT_SERVABLE,
          `Model '${entry.id}' is a ${entry.task} model; ${kind === 'decoder' ? 'give a schema to extract with it' : 'call it with task "generate" and messages'}.`,
        );
      }
      return { ref: { modelId: entry.id, bucket: '', key: '' }, entry };
    }
    if (!UUID.test(modelId))
      throw errors.notFound(
        'MODEL_NOT_FOUND',
        `Model '${modelId}' was not found. List base models at GET /v1/base-models, or use a training job id.`,
      );
    const job = await this.deps.trained.get(caller.teamId, modelId);
    if (!job) throw errors.notFound('MODEL_NOT_FOUND', `Model '${modelId}' was not found.`);
    const base = this.deps.catalog.get(job.baseModel) ?? this.deps.catalog.entries[0]!;
    if (
      this.deps.restrictions.restricted(caller.teamId, job.jobId) ||
      this.deps.restrictions.restricted(caller.teamId, base.id)
    ) {
      throw new AppError(
        'PermissionDenied',
        Reasons.MODEL_RESTRICTED,
        `Model '${modelId}' is not available to this account.`,
      );
    }
    if (!SERVABLE_JOB.has(job.status) || !job.bundle) {
      throw errors.precondition(
        Reasons.MODEL_NOT_SERVABLE,
        `Training job '${modelId}' is ${job.status}; only complete jobs can serve inference.`,
      );
    }
    if (base.task !== kind) {
      throw errors.precondition(
        Reasons.MODEL_NOT_SERVABLE,
        `Training job '${modelId}' is a ${base.task} model; ${base.task === 'decoder' ? 'call it with task "generate" and messages' : 'give a schema to extract with it'}.`,
      );
    }
    return { ref: { modelId: job.jobId, ...job.bundle }, entry: base };
  }

  private async projectTarget(caller: Caller, projectId: string): Promise<{ ref: ModelRef; entry: CatalogEntry }> {
    const project = UUID.test(projectId) ? await this.deps.store.getProject(caller.teamId, projectId) : null;
    if (!project) throw errors.notFound('PROJECT_NOT_FOUND', `Project '${projectId}' was not found.`);
    const active = await this.deps.store.activeDeployment(project.id);
    if (!active)
      throw errors.precondition(
        Reasons.MODEL_NOT_SERVABLE,
        `Project '${project.name}' has no active deployment yet; deploy a complete training job and wait until it is active.`,
      );
    const job = await this.deps.trained.get(caller.teamId, active.trainingJobId);
    const entry = (job && this.deps.catalog.get(job.baseModel)) ?? this.deps.catalog.entries[0]!;
    return { ref: { modelId: active.trainingJobId, bucket: active.bundleBucket, key: active.bundleKey }, entry };
  }

  async createProject(caller: Caller, name: string) {
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > 100)
      throw errors.invalid(Reasons.VALIDATION_FAILED, 'Project name must be 1 to 100 characters.', [
        { field: 'name', message: 'must be 1 to 100 characters' },
      ]);
    return this.deps.store.createProject({
      id: this.deps.ids.uuid(),
      teamId: caller.teamId,
      name: trimmed,
      createdAt: this.now(),
    });
  }

  listProjects(caller: Caller) {
    return this.deps.store.listProjects(caller.teamId);
  }

  async deleteProject(caller: Caller, projectId: string): Promise<void> {
    const deleted = UUID.test(projectId) && (await this.deps.store.deleteProject(caller.teamId, projectId));
    if (!deleted) throw errors.notFound('PROJECT_NOT_FOUND', `Project '${projectId}' was not found.`);
  }

  async createDeployment(caller: Caller, projectId: string, trainingJobId: string): Promise<DeploymentRow> {
    const project = UUID.test(projectId) ? await this.deps.store.getProject(caller.teamId, projectId) : null;
    if (!project) throw errors.notFound('PROJECT_NOT_FOUND', `Project '${projectId}' was not found.`);
    const job = UUID.test(trainingJobId) ? await this.deps.trained.get(caller.teamId, trainingJobId) : null;
    if (!job) throw errors.notFound('JOB_NOT_FOUND', `Training job '${trainingJobId}' was not found.`);
    if (!SERVABLE_JOB.has(job.status) || !job.bundle) {
      throw errors.precondition(
        'JOB_NOT_COMPLETE',
        `Training job '${trainingJobId}' is ${job.status}; only complete jobs can be deployed.`,
      );
    }
    const row = await this.deps.store.createDeployment({
      id: this.deps.ids.uuid(),
      projectId: project.id,
      teamId: caller.teamId,
      trainingJobId: job.jobId,
      bundleBucket: job.bundle.bucket,
      bundleKey: job.bundle.key,
      status: 'deploying',
      reason: null,
      createdAt: this.now(),
      activatedAt: null,
      endedAt: null,
    });
    void this.warmDeployment(row, this.deps.catalog.get(job.baseModel)?.task ?? 'extraction');
    return row;
  }

  async listDeployments(caller: Caller, projectId: string): Promise<DeploymentRow[]> {
    const project = UUID.test(projectId) ? await this.deps.store.getProject(caller.teamId, projectId) : null;
    if (!project) throw errors.notFound('PROJECT_NOT_FOUND', `Project '${projectId}' was not found.`);
    return this.deps.store.listDeployments(project.id);
  }

  /** Every deployment of a job the team can see (404 for an unknown or foreign job). */
  async listJobDeployments(caller: Caller, trainingJobId: string): Promise<DeploymentRow[]> {
    const job = UUID.test(trainingJobId) ? await this.deps.trained.get(caller.teamId, trainingJobId) : null;
    if (!job) throw errors.notFound('JOB_NOT_FOUND', `Training job '${trainingJobId}' was not found.`);
    return this.deps.store.listJobDeployments(caller.teamId, trainingJobId);
  }

  /** Finishes deployments left `deploying` by a restart. */
  async resumePendingDeployments(): Promise<number> {
    const pending = await this.deps.store.pendingDeployments();
    for (const row of pending) {
      const job = await this.deps.trained.get(row.teamId, row.trainingJobId).catch(() => null);
      void this.warmDeployment(row, (job && this.deps.catalog.get(job.baseModel)?.task) ?? 'extraction');
    }
    return pending.length;
  }

  /** A deleted job stops serving everywhere it was deployed. */
  async releaseJob(trainingJobId: string): Promise<number> {
    return this.deps.store.releaseJob(trainingJobId, 'the training job was deleted', this.now());
  }

  /** Waits for in-flight deployments (tests and shutdown). */
  get deploymentsInFlight(): number {
    return this.warming.size;
  }

  private async warmDeployment(row: DeploymentRow, task: 'extraction' | 'decoder'): Promise<void> {
    if (this.warming.has(row.id)) return;
    this.warming.add(row.id);
    const started = Date.now();
    const ref = { modelId: row.trainingJobId, bucket: row.bundleBucket, key: row.bundleKey };
    try {
      if (task === 'decoder') {
        // A decoder is warm once it has produced a token on its server.
        const probe = this.deps.fleet.generate(ref, [{ role: 'user', content: 'hi' }], {
          temperature: 0,
          topP: 1,
          maxTokens: 1,
          stop: [],
          seed: 0,
        });
        for await (const _ of probe.chunks) void _;
      } else await this.deps.fleet.warm(ref, this.deps.warmTimeoutMs ?? 60_000);
      const activated = await this.deps.store.activate(row.id, this.now());
      this.deps.logger.info(
        { deploymentId: row.id, projectId: row.projectId, ms: Date.now() - started, activated },
        'deployment active',
      );
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      await this.deps.store
        .fail(row.id, reason, this.now())
        .catch((e: unknown) =>
          this.deps.logger.warn({ err: e, deploymentId: row.id }, 'could not record a failed deployment'),
        );
      this.deps.logger.warn({ deploymentId: row.id, reason }, 'deployment failed');
    } finally {
      this.warming.delete(row.id);
    }
  }
}

function validateSchema(schema: Record<string, unknown> | undefined): void {
  try {
    normalizeSchema(schema);
  } catch (err) {
    if (err instanceof SchemaError) {
      throw errors.invalid(
        Reasons.VALIDATION_FAILED,
        `Invalid schema: ${err.message}`,
        err.issues.map((i) => ({ field: i.field, message: i.message })),
      );
    }
    throw err;
  }
}
