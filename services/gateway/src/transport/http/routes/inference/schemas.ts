import { z } from 'zod';
import { Stop } from '../compat/blocks';

/** The inference surfaces' request bodies: the one place their requests are validated. */

const MAX_TEXT = 100_000;
const Text = z.string().min(1, 'must not be empty').max(MAX_TEXT, `must be at most ${MAX_TEXT} characters`);
/** The batch limit of every extraction surface; checked here only, inner services trust it. */
export const MAX_INPUTS = 1000;
const Inputs = z
  .array(Text)
  .min(1, 'must hold at least 1 string')
  .max(MAX_INPUTS, `must hold at most ${MAX_INPUTS.toLocaleString('en-US')} strings`);
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
export const Message = z.object({
  role: z.enum(['system', 'user', 'assistant']),
  content: z.union([z.string().max(MAX_TEXT), z.array(ContentBlock).min(1).max(100)], {
    error: 'must be a string or a list of 1–100 text blocks ({"type": "text", "text": …})',
  }),
});

export const InferenceBody = z
  .object({
    messages: z.array(Message).min(1).max(200).optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().gt(0).max(1).optional(),
    max_tokens: z.number().int().min(1).max(2048).optional(),
    stop: Stop.optional(),
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

export const GLINER_TASKS = [
  'extract_entities',
  'classify_text',
  'extract_json',
  'extract_relations',
  'schema',
] as const;
export type GlinerTask = (typeof GLINER_TASKS)[number];

const GlinerFields = {
  model_id: z.string().trim().min(1).max(200).optional(),
  text: Text.optional(),
  inputs: Inputs.optional(),
  schema: z.union([SchemaObject, z.array(z.unknown())], {
    error: 'must be a schema object, or a list as the task takes it (for instance entity labels)',
  }),
  ...Options,
};
const oneOfTextOrInputs = (b: { text?: string | undefined; inputs?: string[] | undefined }, ctx: z.RefinementCtx) => {
  if ((b.text === undefined) === (b.inputs === undefined))
    ctx.addIssue({
      code: 'custom',
      path: ['text'],
      message: `give exactly one of text or inputs (1 to ${MAX_INPUTS.toLocaleString('en-US')} strings)`,
    });
};
export const GlinerBody = z
  .object({ task: z.enum(GLINER_TASKS), ...GlinerFields })
  .superRefine(oneOfTextOrInputs)
  .openapi('Gliner2Request');
export const GlinerTaskBody = z.object(GlinerFields).superRefine(oneOfTextOrInputs);

const Option = z.union(
  [
    z.string().trim().min(1).max(200),
    z.object({ id: z.string().trim().min(1).max(200), description: z.string().max(1000).optional() }),
  ],
  { error: 'must be an option id (1–200 characters) or {id, description?}' },
);
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

export const ProjectInferenceBody = z
  .object({
    text: Text.optional(),
    inputs: Inputs.optional(),
    schema: SchemaObject.optional(),
    ...Options,
    messages: z.array(Message).min(1).max(200).optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().gt(0).max(1).optional(),
    max_tokens: z.number().int().min(1).max(2048).optional(),
    stop: Stop.optional(),
    seed: z.number().int().min(0).optional(),
    stream: z.boolean().optional(),
  })
  .superRefine((b, ctx) => (b.messages ? undefined : oneOfTextOrInputs(b, ctx)))
  .openapi('ProjectInferenceRequest');
export const CreateProjectBody = z
  .object({ name: z.string().trim().min(1, 'is required').max(100) })
  .openapi('CreateProjectRequest');
const ModelId = z.string().trim().min(1, 'is required').max(200);
export const ProjectRouterBody = z
  .object({
    candidates: z
      .array(ModelId)
      .min(1, 'must hold at least 1 model id')
      .max(10, 'must hold at most 10 model ids')
      .refine((ids) => new Set(ids).size === ids.length, 'each model id may appear once'),
    reference_model: ModelId,
    rules: z
      .object({ max_prompt_tokens: z.number().int().min(1).max(10_000_000).optional() })
      .optional()
      .openapi({
        description: 'max_prompt_tokens: longest prompt (estimated at 4 characters per token) a candidate may take',
      }),
  })
  .refine((b) => !b.candidates.includes(b.reference_model), {
    message: 'the reference model is the fallback; it cannot also be a candidate',
    path: ['candidates'],
  })
  .openapi('ProjectRouterRequest');
export const CreateDeploymentBody = z
  .object({ training_job_id: z.string().trim().min(1, 'is required').max(100) })
  .openapi('CreateDeploymentRequest');
