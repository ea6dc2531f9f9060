import { readFileSync } from 'node:fs';
import { datasetFile, eventually, withClient } from '@whetstone/testing';
import { apiClient } from './training-helpers';

/** One call of a load loop: when it was sent and answered, its status (0: no answer), the inference id of a 2xx. */
export interface Outcome {
  sentAt: number;
  doneAt: number;
  status: number;
  inferenceId?: string;
  error?: string;
}

/** One extraction on the zero-shot base through the public API. */
export async function inferOnce(baseUrl: string, key: string): Promise<Outcome> {
  const sentAt = Date.now();
  try {
    const res = await fetch(`${baseUrl}/inference`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({
        model_id: 'whetstone-extract-base',
        text: 'Ada Lovelace worked with Charles Babbage in London.',
        schema: { entities: ['person', 'city'] },
      }),
      signal: AbortSignal.timeout(20_000),
    });
    const body = await res.text();
    const ok = res.status >= 200 && res.status < 300;
    const inferenceId = ok ? (JSON.parse(body) as { inference_id: string }).inference_id : undefined;
    return { sentAt, doneAt: Date.now(), status: res.status, ...(inferenceId ? { inferenceId } : {}) };
  } catch (err) {
    return { sentAt, doneAt: Date.now(), status: 0, error: String(err) };
  }
}

/** `concurrency` loops of `inferOnce` until `done()` says stop; every outcome lands in `outcomes`. */
export function loadUntil(
  call: () => Promise<Outcome>,
  concurrency: number,
  done: () => boolean,
  outcomes: Outcome[],
): Promise<void> {
  const worker = async () => {
    while (!done()) {
      const o = await call();
      outcomes.push(o);
      if (o.status === 0) await new Promise((r) => setTimeout(r, 100));
    }
  };
  return Promise.all(Array.from({ length: concurrency }, worker)).then(() => undefined);
}

/** Status counts of a list of outcomes, e.g. `{ 200: 310, 503: 2 }`. */
export const statusCounts = (outcomes: Outcome[]) =>
  outcomes.reduce<Record<number, number>>((n, o) => ({ ...n, [o.status]: (n[o.status] ?? 0) + 1 }), {});

export interface Accounting {
  /** Acknowledged inference ids with a history record. */
  records: number;
  /** Acknowledged inference ids with a usage debit. */
  debits: number;
  /** Inference ids of the team debited more than once, plus history records stored twice. */
  duplicates: number;
}

/** How many of `ids` have reached the history and the ledger, and any duplicate, read from the system's database. */
export function accounting(databaseUrl: string, teamId: string, ids: string[]): Promise<Accounting> {
  return withClient(databaseUrl, async (c) => {
    const n = async (sql: string, params: unknown[]) => Number((await c.query<{ n: string }>(sql, params)).rows[0]!.n);
    return {
      records: await n('SELECT count(*) AS n FROM history.inference_records WHERE id = ANY($1::uuid[])', [ids]),
      debits: await n(
        "SELECT count(*) AS n FROM key_billing.ledger_entries WHERE kind = 'usage' AND usage_id = ANY($1::text[])",
        [ids],
      ),
      duplicates:
        (await n(
          "SELECT count(*) AS n FROM (SELECT usage_id FROM key_billing.ledger_entries WHERE team_id = $1 AND kind = 'usage' GROUP BY usage_id HAVING count(*) > 1) d",
          [teamId],
        )) +
        (await n('SELECT count(*) - count(DISTINCT id) AS n FROM history.inference_records WHERE team_id = $1', [
          teamId,
        ])),
    };
  });
}

/** Polls `accounting` until every id has its record and its debit, or `timeoutMs` passes; returns the last reading. */
export async function accountingSettled(
  databaseUrl: string,
  teamId: string,
  ids: string[],
  timeoutMs: number,
): Promise<Accounting & { settledAt: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await accounting(databaseUrl, teamId, ids);
    if ((rows.records >= ids.length && rows.debits >= ids.length) || Date.now() > deadline)
      return { ...rows, settledAt: Date.now() };
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Rows in the Postgres event log (0 when it was never created): a system on Kafka writes none. */
export function eventLogRows(databaseUrl: string): Promise<number> {
  return withClient(databaseUrl, async (c) => {
    const exists = await c.query<{ t: string | null }>("SELECT to_regclass('whetstone_events.log')::text AS t");
    if (!exists.rows[0]!.t) return 0;
    return Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM whetstone_events.log')).rows[0]!.n);
  });
}

/**
 * The short journey every transport and store must carry: upload 120 wikigold rows through a presigned URL,
 * process them, train a one-epoch LoRA job, and return its id once complete.
 */
export async function trainSmallJob(api: ReturnType<typeof apiClient>, dataset: string): Promise<string> {
  const rows = readFileSync(datasetFile('wikigold/train.jsonl'), 'utf8').split('\n').slice(0, 120).join('\n');
  await api.uploadReady(
    { name: dataset, type: 'extraction', format: 'jsonl', filename: 'train.jsonl' },
    Buffer.from(rows),
  );
  const created = await api.post('/core/training-jobs', {
    base_model: 'whetstone-extract-base',
    datasets: [{ name: dataset }],
    training_type: 'lora',
    nr_epochs: 1,
  });
  if (created.status !== 200) throw new Error(`training job refused: ${created.status} ${await created.text()}`);
  const { id } = (await created.json()) as { id: string };
  const job = await api.until(id, ['complete', 'failed'], 240_000);
  if (job.status !== 'complete') throw new Error(`training job ${id} ended ${job.status}`);
  return id;
}

/** Deploys `jobId` to a new project and waits until the deployment is active. */
export async function deployToProject(api: ReturnType<typeof apiClient>, jobId: string, name: string) {
  const project = (await (await api.post('/projects', { name })).json()) as { id: string };
  const res = await api.post(`/projects/${project.id}/deployments`, { training_job_id: jobId });
  if (res.status >= 300) throw new Error(`deploy refused: ${res.status} ${await res.text()}`);
  await eventually(
    async () =>
      ((await (await api.get(`/projects/${project.id}/deployments`)).json()) as { deployments: { status: string }[] })
        .deployments[0]?.status === 'active',
    120_000,
    250,
  );
  return project.id;
}
