import type { z } from 'zod';
import type { Inference, InferenceTask, InferResult, Principal } from '../../../../application/ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';
import { respondGenerate } from './generate';
import {
  GLINER_TASKS,
  GlinerBody,
  GlinerTaskBody,
  InferenceBody,
  MAX_INPUTS,
  SystemOneBody,
  type GlinerTask,
} from './schemas';
import { invalidBody } from '../../validate';

const DEFAULT_EXTRACTION_MODEL = 'whetstone-extract-base';

/** GLiNER2's per-task schema shapes, mapped to the native schema. */
function glinerSchema(task: GlinerTask, schema: Record<string, unknown> | unknown[]): Record<string, unknown> {
  const wrap = (key: string) => (Array.isArray(schema) || !(key in schema) ? { [key]: schema } : schema);
  switch (task) {
    case 'extract_entities':
      return wrap('entities');
    case 'classify_text':
      return wrap('classifications');
    case 'extract_json':
      return wrap('structures');
    case 'extract_relations':
      return wrap('relations');
    case 'schema':
      if (Array.isArray(schema)) throw invalidBody('schema', 'must be an object for task schema');
      return schema;
  }
}

const GLINER_TASK_LABEL: Record<GlinerTask, InferenceTask> = {
  extract_entities: 'ner',
  classify_text: 'classification',
  extract_json: 'json',
  extract_relations: 'relations',
  schema: 'schema',
};

export function meta(out: InferResult) {
  return { inference_id: out.inferenceId, model: out.model, latency_ms: out.latencyMs, usage: out.usage };
}

const defaults = (b: {
  threshold?: number | undefined;
  include_confidence?: boolean | undefined;
  include_spans?: boolean | undefined;
}) => ({
  threshold: b.threshold ?? 0,
  includeConfidence: b.include_confidence ?? false,
  includeSpans: b.include_spans ?? false,
});

async function gliner(
  inference: Inference,
  principal: Principal,
  task: GlinerTask,
  body: z.infer<typeof GlinerTaskBody>,
) {
  const out = await inference.infer(principal, {
    modelId: body.model_id ?? DEFAULT_EXTRACTION_MODEL,
    projectId: '',
    texts: body.inputs ?? [body.text!],
    schema: glinerSchema(task, body.schema as Record<string, unknown> | unknown[]),
    ...defaults(body),
    task: GLINER_TASK_LABEL[task],
  });
  return { result: body.inputs ? out.results : out.results[0], ...meta(out) };
}

/** Native /inference: extraction, or a decoder reply with task "generate". */
function registerNativeRoute(api: Api, inference: Inference): void {
  api.route(
    {
      method: 'post',
      path: '/inference',
      summary: 'Native extraction on a base model or a training job (GLiNER2 result shapes)',
      tag: 'Inference',
      auth: 'key-or-session',
      body: InferenceBody,
    },
    async ({ res, body }) => {
      if (body.task === 'generate') return respondGenerate(inference, res, body);
      const out = await inference.infer(authOf(res).principal, {
        modelId: body.model_id ?? body.base_model ?? '',
        projectId: '',
        texts: body.inputs ?? [body.text!],
        schema: body.schema,
        ...defaults(body),
        // History files a native call under what its schema asks for; the surface stays native.
        task: 'extract',
      });
      return { ...(body.inputs ? { results: out.results } : { result: out.results[0] }), ...meta(out) };
    },
  );
}

function registerGlinerRoutes(api: Api, inference: Inference): void {
  api.route(
    {
      method: 'post',
      path: '/gliner-2',
      summary: 'GLiNER2-style call: task is extract_entities, classify_text, extract_json, extract_relations or schema',
      tag: 'GLiNER2',
      auth: 'key-or-session',
      body: GlinerBody,
    },
    ({ res, body }) => gliner(inference, authOf(res).principal, body.task, body),
  );
  for (const task of GLINER_TASKS) {
    api.route(
      {
        method: 'post',
        path: `/gliner-2/${task.replace(/_/g, '-')}`,
        summary: `GLiNER2 ${task}; text, or inputs with 1 to ${MAX_INPUTS.toLocaleString('en-US')} strings`,
        tag: 'GLiNER2',
        auth: 'key-or-session',
        body: GlinerTaskBody,
      },
      ({ res, body }) => gliner(inference, authOf(res).principal, task, body),
    );
  }
}

/** Independent per-option scores, normalised to sum to 1 so they read as a distribution, best first. */
function scoresOf(ids: string[], labels: string[], out: InferResult) {
  const scored = ((out.results[0]?.decision ?? []) as { label: string; confidence: number }[]).map((s) => ({
    option: ids[labels.indexOf(s.label)] ?? s.label,
    score: s.confidence,
  }));
  const raw = ids.map((id) => ({ option: id, score: scored.find((s) => s.option === id)?.score ?? 0 }));
  const total = raw.reduce((n, s) => n + s.score, 0) || 1;
  return raw
    .map((s) => ({ option: s.option, score: Number((s.score / total).toFixed(4)) }))
    .sort((a, b) => b.score - a.score);
}

function registerSystemOneRoute(api: Api, inference: Inference): void {
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
      const out = await inference.infer(authOf(res).principal, {
        modelId: body.model_id ?? DEFAULT_EXTRACTION_MODEL,
        projectId: '',
        texts: [body.rubric ? `${body.text}\n${body.rubric}` : body.text],
        schema: { classifications: [{ task: 'decision', labels, multi_label: true }] },
        threshold: 0.0001,
        includeConfidence: true,
        includeSpans: false,
        task: 'systemone',
      });
      const scores = scoresOf(ids, labels, out);
      return { choice: scores[0]!.option, confidence: scores[0]!.score, scores, ...meta(out) };
    },
  );
}

/** Extraction surfaces: native /inference, the GLiNER2 routes and the decision route. */
export function registerExtractionRoutes(api: Api, inference: Inference): void {
  registerNativeRoute(api, inference);
  registerGlinerRoutes(api, inference);
  registerSystemOneRoute(api, inference);
}
