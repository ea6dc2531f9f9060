/** The Training routes' request bodies and query, and the documented shapes of a job and an evaluation. */
import { z } from 'zod';
import { INT32_MAX } from '../validate';

export const CreateJobBody = z
  .object({
    base_model: z.string({ error: 'is required' }).trim().min(1, 'is required').max(200),
    datasets: z
      .array(z.object({ name: z.string().trim().min(1, 'is required').max(100) }))
      .min(1, 'give at least one dataset')
      .max(10),
    model_name: z.string().trim().max(200).optional(),
    training_type: z.enum(['lora', 'full']).default('lora'),
    nr_epochs: z.number().int().positive().max(INT32_MAX).optional(), // the base model's bounds are the orchestrator's
    learning_rate: z.number().positive().optional(),
    project_id: z.string().trim().max(100).optional(),
    out_of_scope_label: z.string().trim().min(1, 'must not be empty').max(100).optional(), // classification rejection
  })
  .openapi('CreateTrainingJobRequest');
export const ListQuery = z.object({
  status: z.enum(['requested', 'running', 'complete', 'deployed', 'failed', 'cancelled']).optional(),
  project_id: z.string().max(100).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(200),
  offset: z.coerce.number().int().min(0).max(INT32_MAX).default(0),
});
export const EvaluationBody = z
  .object({
    training_job_id: z.string().trim().min(1, 'is required').max(100),
    dataset_name: z.string().trim().min(1, 'is required').max(100),
  })
  .openapi('CreateEvaluationRequest');
/** A string that must be given: "is required" when absent or empty (after trimming), else what is wrong with its length. */
const requiredString = (min: number, max: number, trim = false) => {
  const text = z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') });
  return (trim ? text.trim() : text)
    .min(1, { message: 'is required', abort: true })
    .min(min, `must be at least ${min} characters`)
    .max(max, `must be at most ${max} characters`);
};
export const PushBody = z
  .object({
    repo_id: requiredString(3, 200, true).openapi({ example: 'acme/wikigold-ner' }),
    hub_token: requiredString(8, 500).openapi({ description: 'The hub’s access token (8–500 characters)' }),
    private: z.boolean().default(false),
  })
  .openapi('PushToHubRequest');

const Num = z.number().nullable();

/** The spec's training-job states. */
const JobStatus = z.enum(['requested', 'running', 'complete', 'failed', 'deployed', 'cancelled']).openapi({
  description:
    '`deployed` while an active deployment of the job serves a project; `complete` again once none does (replaced, or its project deleted)',
});

/** A complete (or deployed) job's held-out figures: every job has f1, precision and recall; decoders add loss. */
const JobMetrics = z
  .object({
    f1: z.number().openapi({
      description:
        'Extraction: micro F1 of the headline figure. Decoders: mean token-overlap F1 (SQuAD) of greedy replies on at most 32 held-out rows, 64 tokens each',
    }),
    precision: z.number(),
    recall: z.number(),
    per_label: z.record(z.string(), z.unknown()).optional().openapi({ description: 'Extraction jobs' }),
    loss: z.number().optional().openapi({ description: 'Decoders: held-out cross-entropy (nats per byte)' }),
    perplexity: z.number().optional().openapi({ description: 'Decoders: exp(loss)' }),
    token_accuracy: z.number().optional(),
    base_loss: z.number().optional(),
    base_perplexity: z.number().optional(),
    base_token_accuracy: z.number().optional(),
    generation_examples: z.number().optional().openapi({ description: 'Decoders: held-out rows generated and scored' }),
    generation_max_tokens: z
      .number()
      .optional()
      .openapi({ description: 'Decoders: the most tokens generated per row' }),
  })
  .loose()
  .openapi('TrainingJobMetrics');

export const TrainingJobResponse = z
  .object({
    id: z.string(),
    status: JobStatus,
    base_model: z.string(),
    root_base_model: z.string(),
    datasets: z.array(z.object({ name: z.string(), version_number: z.string(), size: z.number() })),
    model_name: z.string(),
    training_type: z.enum(['lora', 'full']),
    nr_epochs: z.number(),
    learning_rate: z.number(),
    metrics: JobMetrics.optional().openapi({ description: 'Present once the job is complete (and while deployed)' }),
  })
  .loose()
  .openapi('TrainingJob');

export const TrainingJobListResponse = z
  .object({
    success: z.boolean(),
    count: z.number(),
    total: z.number(),
    limit: z.number(),
    offset: z.number(),
    jobs: z.array(TrainingJobResponse),
  })
  .openapi('TrainingJobList');

export const EvaluationResponse = z
  .object({
    id: z.string(),
    training_job_id: z.string(),
    dataset_name: z.string(),
    status: z.enum(['running', 'complete', 'failed']),
    f1: Num,
    precision: Num,
    recall: Num,
    per_label: z.record(z.string(), z.unknown()).nullable(),
    examples: Num,
    loss: Num.optional().openapi({ description: 'Decoder evaluations: held-out loss' }),
    perplexity: Num.optional().openapi({ description: 'Decoder evaluations' }),
    generation_examples: Num.optional().openapi({
      description: 'Decoder evaluations: rows generated and scored for F1',
    }),
    error: z.string().nullable(),
    created_at: z.string().nullable(),
  })
  .openapi('Evaluation');
