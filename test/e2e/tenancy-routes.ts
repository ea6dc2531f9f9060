import { ANTHROPIC_MODEL, OPENAI_MODEL } from './compat-helpers';

/** The tenancy suite's table of id-bearing routes: what of team A's each path parameter names, and valid bodies. */

/** Parameterised routes deliberately not tried with another team's ids, with reasons (others resolve by PARAMETERS). */
export const EXEMPT: Record<string, string> = {};

/** Everything team A owns; each id-bearing route is filled with these. */
export interface Owned {
  teamId: string;
  dataset: string;
  jobId: string;
  checkpoint: { kind: string; name: string };
  evaluationId: string;
  generationJobId: string;
  projectId: string;
  inferenceId: string;
  adaptationId: string;
  batchId: string;
  openAi: { fileId: string; batchId: string; fineTuningJobId: string };
  conversation: { id: string; itemId: string };
}

/** Which of team A's objects each path parameter names, by route family; the first match wins. */
export const PARAMETERS: [RegExp, (a: Owned) => Record<string, string>][] = [
  [
    /^\/projects\/\{project_id\}\/adaptations\/\{adaptation_id\}$/,
    (a) => ({ project_id: a.projectId, adaptation_id: a.adaptationId }),
  ],
  [/^\/projects\/\{project_id\}(\/|$)/, (a) => ({ project_id: a.projectId })],
  [/^\/core\/datasets\/\{name\}(\/\{version\})?$/, (a) => ({ name: a.dataset, version: '1' })],
  [/^\/generate\/jobs\/\{job_id\}$/, (a) => ({ job_id: a.generationJobId })],
  [
    /^\/v1\/training\/jobs\/\{job_id\}\/checkpoints\/\{kind\}\/\{name\}\/download$/,
    (a) => ({ job_id: a.jobId, kind: a.checkpoint.kind, name: a.checkpoint.name }),
  ],
  [/^\/(core|v1)\/training(-jobs|\/jobs)\/\{(id|job_id)\}(\/|$)/, (a) => ({ id: a.jobId, job_id: a.jobId })],
  [/^\/core\/evaluations\/\{id\}$/, (a) => ({ id: a.evaluationId })],
  [/^\/inferences\/\{id\}(\/|$)/, (a) => ({ id: a.inferenceId })],
  [/^\/v1\/models\/\{model_id\}$/, (a) => ({ model_id: a.jobId })],
  [/^\/v1\/responses\/\{response_id\}(\/|$)/, (a) => ({ response_id: `resp_${a.inferenceId}` })], // OpenAI envelope
  [/^\/v1\/chat\/completions\/\{completion_id\}(\/|$)/, (a) => ({ completion_id: `chatcmpl-${a.inferenceId}` })],
  [/^\/v1\/messages\/batches\/\{message_batch_id\}(\/|$)/, (a) => ({ message_batch_id: a.batchId })], // Anthropic's
  [/^\/v1\/files\/\{file_id\}(\/|$)/, (a) => ({ file_id: a.openAi.fileId })],
  [/^\/v1\/batches\/\{batch_id\}(\/|$)/, (a) => ({ batch_id: a.openAi.batchId })],
  [/^\/v1\/fine_tuning\/jobs\/\{fine_tuning_job_id\}(\/|$)/, (a) => ({ fine_tuning_job_id: a.openAi.fineTuningJobId })],
  [
    /^\/v1\/conversations\/\{conversation_id\}(\/|$)/,
    (a) => ({ conversation_id: a.conversation.id, item_id: a.conversation.itemId }),
  ],
];

export const HUB_TOKEN = 'hf_bola_secret_token_0123456789';

/** Valid bodies, so that what answers is the ownership check and not validation. */
export function bodyFor(method: string, template: string, a: Owned): unknown {
  const bodies: Record<string, unknown> = {
    'post /projects/{project_id}/deployments': { training_job_id: a.jobId },
    'post /projects/{project_id}/inference': { text: 'Grace Hopper visited Boston.' },
    'put /projects/{project_id}/router': { candidates: [OPENAI_MODEL], reference_model: ANTHROPIC_MODEL },
    'post /v1/training-jobs/{job_id}/push-to-hub': { repo_id: 'mallory/stolen-model', hub_token: HUB_TOKEN },
    'post /inferences/{id}/feedback': { verdict: 'correct', notes: 'overwritten by another team' },
    'post /v1/chat/completions/{completion_id}': { metadata: { stolen: 'by another team' } },
    'put /projects/{project_id}/judge': { enabled: true, sample_rate: 1 },
    'put /projects/{project_id}/adaptive': { enabled: true, min_corrections: 1 },
    'post /v1/conversations/{conversation_id}': { metadata: { stolen: 'by another team' } },
    'post /v1/conversations/{conversation_id}/items': { items: [{ role: 'user', content: 'planted' }] },
  };
  return bodies[`${method} ${template}`] ?? (method === 'get' || method === 'delete' ? undefined : {});
}
