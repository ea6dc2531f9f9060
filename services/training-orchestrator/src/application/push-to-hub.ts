import { readAll } from '@whetstone/blobs';
import { errors, type FieldError } from '@whetstone/errors';
import { REPO_ID } from '../domain/hub';
import { ARTIFACTS_BUCKET, hasModel } from '../domain/job';
import { invalid } from '../domain/job-spec';
import { modelCard } from '../domain/model-card';
import { TrainingReasons as R } from '../domain/reasons';
import type { UseCaseDeps } from './deps';
import { note, requireJob } from './get-job';
import type { Caller } from './ports';

export interface PushInput {
  repoId: string;
  token: string;
  private: boolean;
}

function assertPushInput(input: PushInput): void {
  const problems: FieldError[] = [];
  if (!REPO_ID.test(input.repoId))
    problems.push({ field: 'repo_id', message: 'must be "owner/name" (letters, digits, ".", "_" or "-")' });
  if (!input.token || input.token.length < 8 || /\s/.test(input.token))
    problems.push({ field: 'hub_token', message: 'is required: a hub access token with write access' });
  if (problems.length) throw invalid('Invalid push to hub', problems);
}

/**
 * Uploads a complete job's bundle, manifest and model card; the token is used
 * for this call only. The manifest is the JSON the trainer stored next to the
 * bundle at completion, so the orchestrator never opens (or loads) the model.
 */
export async function pushToHub(
  deps: UseCaseDeps,
  caller: Caller,
  jobId: string,
  input: PushInput,
): Promise<{ repoId: string; url: string; commit: string; files: string[] }> {
  const job = await requireJob(deps, caller, jobId);
  assertPushInput(input);
  if (!hasModel(job))
    throw errors.precondition(R.JOB_NOT_COMPLETE, `Job '${jobId}' is ${job.status}; push it once it is complete.`);
  if (!deps.hub)
    throw errors.precondition(R.HUB_NOT_CONFIGURED, 'No model hub is configured on this installation (HUB_BASE_URL).');
  if (!job.manifestKey)
    throw errors.precondition(R.MANIFEST_MISSING, `Job '${jobId}' has no stored manifest; train it again to push it.`);
  const [bundle, manifest] = await Promise.all([
    readAll(deps.blobs, ARTIFACTS_BUCKET, job.artifactKey),
    readAll(deps.blobs, ARTIFACTS_BUCKET, job.manifestKey),
  ]);
  const files = [
    { path: 'model.whetstone-bundle', bytes: bundle },
    { path: 'whetstone_manifest.json', bytes: manifest },
    { path: 'README.md', bytes: new Uint8Array(Buffer.from(modelCard(job))) },
  ];
  const out = await deps.hub.push({
    repoId: input.repoId,
    token: input.token,
    private: input.private,
    files,
    message: `Upload ${job.modelName} from Whetstone`,
  });
  await note(deps, job.id, 'info', `pushed to the hub as ${input.repoId}`);
  return { repoId: input.repoId, url: out.url, commit: out.commit, files: files.map((f) => f.path) };
}
