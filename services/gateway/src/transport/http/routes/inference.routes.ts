import type { Request, Response } from 'express';
import { z } from 'zod';
import { AppError, Reasons } from '@whetstone/errors';
import type { Inference, InferResult } from '../../../application/ports';
import type { Api } from '../api';
import { authOf } from '../auth';

const MAX_TEXT = 100_000;
const Text = z.string().min(1, 'must not be empty').max(MAX_TEXT, `must be at most ${MAX_TEXT} characters`);
const Inputs = z.array(Text).min(1, 'must hold at least 1 string').max(1000, 'must hold at most 1,000 strings');
const SchemaObject = z.record(z.string(), z.unknown());
const Options = {
  threshold: z.number().min(0).max(1).optional(),
  include_confidence: z.boolean().optional(),
  include_spans: z.boolean().optional(),
};

const ContentBlock = z.object({
  type: z.literal('text'),
  text: z.string().max(MAX_TEXT),
  cache_control: z.object({ type: z.literal('ephemeral'), ttl: z.string().optional() }).optional(),
});
const Message = z.object({
  role: z.enum(['system', 'user', 'assistant']),
  content: z.union([z.string().max(MAX_TEXT), z.array(ContentBlock).min(1).max(100)]),
});

export const InferenceBody = z
  .object({
    messages: z.array(Message).min(1).max(200).optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().gt(0).max(1).optional(),
    max_tokens: z.number().int().min(1).max(2048).optional(),
    stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).optional(),
    seed: z.number().int().min(0).optional(),
    stream: z.boolean().optional(),
    model_id: z.string().trim().min(1).max(200).optional(),
    base_model: z.string().trim().min(1).max(200).optional(),
    text: Text.optional(),
    inputs: Inputs.optional(),
    schema: SchemaObject.optional(),
    task: z.string().max(50).optional(),
    dataset_name: z.string().max(200).optional(),
    ...Options,
  })
  .superRefine((b, ctx) => {
    if (!b.model_id && !b.base_model)
      ctx.addIssue({
        code: 'custom',
        path: ['model_id'],
        message: 'give model_id or base_model (a base model id or a training job id)',
      });
    if (b.task === 'generate') {
      if (!b.messages)
        ctx.addIssue({
          code: 'custom',
          path: ['messages'],
          message: 'is required with task "generate": a list of {role, content}',
        });
      return;
    }
    if (b.text === undefined && b.inputs === undefined)
      ctx.addIssue({ code: 'custom', path: ['text'], message: 'is required (or give inputs, a list of texts)' });
    if (b.schema === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['schema'],
        message: 'is required for extraction models: give entities, classifications, relations or structures',
      });
  })
  .openapi('InferenceRequest');

const GLINER_TASKS = ['extract_entities', 'classify_text', 'extract_json', 'extract_relations', 'schema'] as const;
type GlinerTask = (typeof GLINER_TASKS)[number];

const GlinerFields = {
  model_id: z.string().trim().min(1).max(200).optional(),
  text: Text.optional(),
  inputs: Inputs.optional(),
  schema: z.union([SchemaObject, z.array(z.unknown())]),
  ...Options,
};
const oneOfTextOrInputs = (b: { text?: string | undefined; inputs?: string[] | undefined }, ctx: z.RefinementCtx) => {
  if ((b.text === undefined) === (b.inputs === undefined))
    ctx.addIssue({
      code: 'custom',
      path: ['text'],
      message: 'give exactly one of text or inputs (1 to 1,000 strings)',
    });
};
export const GlinerBody = z
  .object({ task: z.enum(GLINER_TASKS), ...GlinerFields })
  .superRefine(oneOfTextOrInputs)
  .openapi('Gliner2Request');
const GlinerTaskBody = z.object(GlinerFields).superRefine(oneOfTextOrInputs);

const Option = z.union([
  z.string().trim().min(1).max(200),
  z.object({ id: z.string().trim().min(1).max(200), description: z.string().max(1000).optional() }),
]);
export const SystemOneBody = z
  .object({
    model_id: z.string().trim().min(1).max(200).optional(),
    text: Text,
    options: z.array(Option).min(2, 'must hold at least 2 options').max(50, 'must hold at most 50 options'),
    rubric: z.string().max(5000).optional(),
  })
  .superRefine((b, ctx) => {
    const ids = b.options.map((o) => (typeof o === 'string' ? o : o.id));
    if (new Set(ids).size !== ids.length)
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'option ids must be unique' });
  })
  .openapi('SystemOneRequest');

const ProjectInferenceBody = z
  .object({
    text: Text.optional(),
    inputs: Inputs.optional(),
    schema: SchemaObject.optional(),
    ...Options,
    messages: z.array(Message).min(1).max(200).optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().gt(0).max(1).optional(),
    max_tokens: z.number().int().min(1).max(2048).optional(),
    stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).optional(),
    seed: z.number().int().min(0).optional(),
    stream: z.boolean().optional(),
  })
  .superRefine((b, ctx) => (b.messages ? undefined : oneOfTextOrInputs(b, ctx)))
  .openapi('ProjectInferenceRequest');
const CreateProjectBody = z
  .object({ name: z.string().trim().min(1, 'is required').max(100) })
  .openapi('CreateProjectRequest');
const CreateDeploymentBody = z
  .object({ training_job_id: z.string().trim().min(1, 'is required').max(100) })
  .openapi('CreateDeploymentRequest');

/** GLiNER2's per-task schema shapes, mapped to the native schema. */
function glinerSchema(task: GlinerTask, schema: Record<string, unknown> | unknown[]): Record<string, unknown> {
  switch (task) {
    case 'extract_entities':
      return Array.isArray(schema) ? { entities: schema } : 'entities' in schema ? schema : { entities: schema };
    case 'classify_text':
      return Array.isArray(schema)
        ? { classifications: schema }
        : 'classifications' in schema
          ? schema
          : { classifications: schema };
    case 'extract_json':
      return Array.isArray(schema) ? { structures: schema } : 'structures' in schema ? schema : { structures: schema };
    case 'extract_relations':
      return Array.isArray(schema) ? { relations: schema } : 'relations' in schema ? schema : { relations: schema };
    case 'schema':
      if (Array.isArray(schema))
        throw new AppError('InvalidArgument', Reasons.VALIDATION_FAILED, 'Request body failed validation', {
          fieldErrors: [{ field: 'schema', message: 'must be an object for task schema' }],
        });
      return schema;
  }
}

const TASK_LABEL: Record<GlinerTask, string> = {
  extract_entities: 'ner',
  classify_text: 'classification',
  extract_json: 'json',
  extract_relations: 'relations',
  schema: 'schema',
};

function meta(out: InferResult) {
  return { inference_id: out.inferenceId, model: out.model, latency_ms: out.latencyMs, usage: out.usage };
}

const pathId = (value: unknown, name: string): string => {
  if (typeof value !== 'string' || !value || value.length > 100)
    throw new AppError('Malformed', Reasons.MALFORMED_PARAMETER, `Invalid path parameter: ${name}`);
  return value;
};

/** Content blocks are joined into one text; `cache_control` markers are accepted (the built-in decoder has no prompt cache). */
const flatten = (content: z.infer<typeof Message>['content']) =>
  typeof content === 'string' ? content : content.map((b) => b.text).join('');

/** Native inference, GLiNER2 routes, the decision route, the catalog, and projects with deployments. */
export function registerInferenceRoutes(api: Api, inference: Inference): void {
  /** Decoder generation: one JSON answer, or Server-Sent Events with `stream: true`. */
  const generate = async (
    req: Request,
    res: Response,
    body: Omit<z.infer<typeof InferenceBody>, 'model_id' | 'base_model'> & {
      model_id?: string | undefined;
      base_model?: string | undefined;
    },
    projectId = '',
  ) => {
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const pieces = inference.generate(
      authOf(res).principal,
      {
        modelId: body.model_id ?? body.base_model ?? '',
        projectId,
        messages: (body.messages ?? []).map((m) => ({ role: m.role, content: flatten(m.content) })),
        temperature: body.temperature ?? 1,
        topP: body.top_p ?? 1,
        maxTokens: body.max_tokens ?? 128,
        stop: typeof body.stop === 'string' ? [body.stop] : (body.stop ?? []),
        seed: body.seed ?? 0,
      },
      controller.signal,
    );
    const iterator = pieces[Symbol.asyncIterator]();
    // The first piece arrives before any byte is written, so errors (404, 409, 402) keep their status.
    let next = await iterator.next();
    if (!body.stream) {
      let text = '';
      for (; !next.done; next = await iterator.next()) {
        const piece = next.value;
        if ('text' in piece) text += piece.text;
        else return { result: { text }, ...piece.done };
      }
      return { result: { text } };
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    try {
      for (; !next.done; next = await iterator.next()) res.write(`data: ${JSON.stringify(next.value)}\n\n`);
    } catch (err) {
      res.write(
        `event: error\ndata: ${JSON.stringify({ detail: err instanceof AppError ? err.message : 'generation was interrupted' })}\n\n`,
      );
    }
    res.end('data: [DONE]\n\n');
    return undefined;
  };

  api.route(
    {
      method: 'get',
      path: '/v1/base-models',
      summary: 'List built-in and upstream base models with flags, training bounds and prices',
      tag: 'Models',
      auth: 'key-or-session',
    },
    async ({ res }) => {
      const data = await inference.listBaseModels(authOf(res).principal);
      return { object: 'list', data, count: data.length };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/models',
      summary: 'Model ids callable by this team (OpenAI list shape)',
      tag: 'Models',
      auth: 'key-or-session',
    },
    async ({ res }) => ({
      object: 'list',
      data: await inference.listModels(authOf(res).principal),
    }),
  );

  api.route(
    {
      method: 'post',
      path: '/inference',
      summary: 'Native extraction on a base model or a training job (GLiNER2 result shapes)',
      tag: 'Inference',
      auth: 'key-or-session',
      body: InferenceBody,
    },
    async ({ req, res, body }) => {
      if (body.task === 'generate') return generate(req, res, body);
      const out = await inference.infer(authOf(res).principal, {
        modelId: body.model_id ?? body.base_model ?? '',
        projectId: '',
        texts: body.inputs ?? [body.text!],
        schema: body.schema,
        threshold: body.threshold ?? 0,
        includeConfidence: body.include_confidence ?? false,
        includeSpans: body.include_spans ?? false,
        task: body.task ?? 'extract',
      });
      return { ...(body.inputs ? { results: out.results } : { result: out.results[0] }), ...meta(out) };
    },
  );

  const gliner = async (
    principal: Parameters<Inference['infer']>[0],
    task: GlinerTask,
    body: z.infer<typeof GlinerTaskBody>,
  ) => {
    const out = await inference.infer(principal, {
      modelId: body.model_id ?? 'whetstone-extract-base',
      projectId: '',
      texts: body.inputs ?? [body.text!],
      schema: glinerSchema(task, body.schema as Record<string, unknown> | unknown[]),
      threshold: body.threshold ?? 0,
      includeConfidence: body.include_confidence ?? false,
      includeSpans: body.include_spans ?? false,
      task: TASK_LABEL[task],
    });
    return { result: body.inputs ? out.results : out.results[0], ...meta(out) };
  };

  api.route(
    {
      method: 'post',
      path: '/gliner-2',
      summary: 'GLiNER2-style call: task is extract_entities, classify_text, extract_json, extract_relations or schema',
      tag: 'GLiNER2',
      auth: 'key-or-session',
      body: GlinerBody,
    },
    ({ res, body }) => gliner(authOf(res).principal, body.task, body),
  );
  for (const task of GLINER_TASKS) {
    api.route(
      {
        method: 'post',
        path: `/gliner-2/${task.replace(/_/g, '-')}`,
        summary: `GLiNER2 ${task}; text, or inputs with 1 to 1,000 strings`,
        tag: 'GLiNER2',
        auth: 'key-or-session',
        body: GlinerTaskBody,
      },
      ({ res, body }) => gliner(authOf(res).principal, task, body),
    );
  }

  api.route(
    {
      method: 'post',
      path: '/v1/systemone',
      summary: 'Decision route: choose one of the given options for a text, with per-option scores',
      tag: 'Inference',
      auth: 'key-or-session',
      body: SystemOneBody,
    },
    async ({ res, body }) => {
      const ids = body.options.map((o) => (typeof o === 'string' ? o : o.id));
      // Descriptions are scored with their option: the label the model sees is "id description".
      const labels = body.options.map((o) =>
        typeof o === 'string' ? o : [o.id, o.description].filter(Boolean).join(' '),
      );
      const text = body.rubric ? `${body.text}\n${body.rubric}` : body.text;
      const out = await inference.infer(authOf(res).principal, {
        modelId: body.model_id ?? 'whetstone-extract-base',
        projectId: '',
        texts: [text],
        schema: { classifications: [{ task: 'decision', labels, multi_label: true }] },
        threshold: 0.0001,
        includeConfidence: true,
        includeSpans: false,
        task: 'systemone',
      });
      const scored = ((out.results[0]?.decision ?? []) as { label: string; confidence: number }[]).map((s) => ({
        option: ids[labels.indexOf(s.label)] ?? s.label,
        score: s.confidence,
      }));
      // Independent per-option scores, normalised to sum to 1 so they read as a distribution.
      const raw = ids.map((id) => ({ option: id, score: scored.find((s) => s.option === id)?.score ?? 0 }));
      const total = raw.reduce((n, s) => n + s.score, 0) || 1;
      const scores = raw
        .map((s) => ({ option: s.option, score: Number((s.score / total).toFixed(4)) }))
        .sort((a, b) => b.score - a.score);
      return { choice: scores[0]!.option, confidence: scores[0]!.score, scores, ...meta(out) };
    },
  );

  api.route(
    { method: 'get', path: '/projects', summary: 'List the team’s projects', tag: 'Projects', auth: 'key-or-session' },
    async ({ res }) => ({
      projects: await inference.listProjects(authOf(res).principal),
    }),
  );

  api.route(
    {
      method: 'post',
      path: '/projects',
      summary: 'Create a project (names are unique per team)',
      tag: 'Projects',
      auth: 'key-or-session',
      body: CreateProjectBody,
      response: { status: 201, description: 'The project' },
    },
    async ({ res, body }) => {
      const p = await inference.createProject(authOf(res).principal, body.name);
      return { id: p.id, name: p.name, created_at: p.created_at };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/projects/:project_id',
      summary: 'Delete a project and its deployment history; its endpoint stops at once',
      tag: 'Projects',
      auth: 'key-or-session',
      response: { status: 204, description: 'Deleted' },
    },
    async ({ req, res }) => {
      await inference.deleteProject(authOf(res).principal, pathId(req.params.project_id, 'project_id'));
      return undefined;
    },
  );

  api.route(
    {
      method: 'post',
      path: '/projects/:project_id/deployments',
      summary: 'Deploy a complete training job; deploying → active once warm',
      tag: 'Projects',
      auth: 'key-or-session',
      body: CreateDeploymentBody,
      response: { status: 201, description: 'The deployment' },
    },
    async ({ req, res, body }) => {
      const d = await inference.createDeployment(
        authOf(res).principal,
        pathId(req.params.project_id, 'project_id'),
        body.training_job_id,
      );
      return d;
    },
  );

  api.route(
    {
      method: 'get',
      path: '/projects/:project_id/deployments',
      summary: 'Deployment history, newest first',
      tag: 'Projects',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const deployments = await inference.listDeployments(
        authOf(res).principal,
        pathId(req.params.project_id, 'project_id'),
      );
      return { project_id: req.params.project_id, count: deployments.length, deployments };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/training-jobs/:job_id/deployments',
      summary: 'Deployments of one training job across projects, newest first',
      tag: 'Projects',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const deployments = await inference.listJobDeployments(
        authOf(res).principal,
        pathId(req.params.job_id, 'job_id'),
      );
      return { training_job_id: req.params.job_id, count: deployments.length, deployments };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/projects/:project_id/inference',
      summary: 'Run on the project’s active deployment (schema optional: the trained schema is used)',
      tag: 'Projects',
      auth: 'key-or-session',
      body: ProjectInferenceBody,
    },
    async ({ req, res, body }) => {
      if (body.messages)
        return generate(req, res, { ...body, task: 'generate' }, pathId(req.params.project_id, 'project_id'));
      const out = await inference.infer(authOf(res).principal, {
        modelId: '',
        projectId: pathId(req.params.project_id, 'project_id'),
        texts: body.inputs ?? [body.text!],
        schema: body.schema,
        threshold: body.threshold ?? 0,
        includeConfidence: body.include_confidence ?? false,
        includeSpans: body.include_spans ?? false,
        task: 'project',
      });
      return {
        ...(body.inputs ? { results: out.results } : { result: out.results[0] }),
        project_id: req.params.project_id,
        ...meta(out),
      };
    },
  );
}
