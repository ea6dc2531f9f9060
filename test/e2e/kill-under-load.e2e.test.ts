/**
 * Issue 19, suite item 1: kill -9 under load. While eight clients send inferences and a small
 * training job runs, every service is SIGKILLed in turn and `pnpm start`'s supervisor restarts it.
 * Afterwards every inference that got a 2xx has exactly one history record and exactly one debit,
 * the ledger holds no inference id twice, and the training job completes, resumed from its
 * checkpoint. The figures go to docs/reliability.md ("Kill -9 under load").
 */
import { readFileSync } from 'node:fs';
import { datasetFile, eventually, withClient } from '@whetstone/testing';
import { signUpWithKey, startSystem, type RunningSystem } from './system';
import { apiClient } from './training-helpers';

/** Every service, killed in this order after the trainer, which goes first once the job has a checkpoint. */
const SERVICES = [
  'gateway',
  'inference-router',
  'model-server',
  'key-billing',
  'inference-history',
  'dataset',
  'training-orchestrator',
  'trainer',
];
const CONCURRENCY = 8;
/** Requests the load generator aims for; it also keeps going until the last restart has settled. */
const TARGET_REQUESTS = 2_500;
/**
 * How long the load may go on for TARGET_REQUESTS, so the file stays within a few minutes on a loaded 2-core machine;
 * it always goes on until TAIL_MS after the last restart (on a loaded machine the kills can outlast this bound).
 */
const MAX_LOAD_MS = 150_000;
/** After a restarted service is ready again, let it serve a little before the next kill. */
const SETTLE_MS = 2_000;
/** Load keeps going this long after the last restart, to see the system serve again. */
const TAIL_MS = 10_000;

interface Outcome {
  sentAt: number;
  doneAt: number;
  /** 0: the connection failed (the gateway was down or was killed mid-request). */
  status: number;
  inferenceId?: string;
  error?: string;
}

describe('kill -9 of every service under load (pnpm start)', () => {
  let system: RunningSystem;
  let key: string;
  let teamId: string;
  const { post, get, until } = apiClient(
    () => system.baseUrl,
    () => key,
  );

  beforeAll(async () => {
    // A 5 s lease: the killed trainer's job is leased again soon. Rate limits far above the load.
    system = await startSystem({
      env: { TRAINER_LEASE_SECONDS: '5', RATE_LIMIT_INFERENCE_PER_MINUTE: '1000000' },
    });
    // The shared test Postgres is busy with other suites: a 503 at sign-up is retried, not a failure here.
    ({ key, teamId } = await eventually(() => signUpWithKey(system.baseUrl, 'kill9').catch(() => null), 60_000, 2_000));
    const rows = readFileSync(datasetFile('wikigold/train.jsonl'), 'utf8').split('\n').slice(0, 120).join('\n');
    const url = (await (
      await post('/core/datasets/upload/url', {
        dataset_name: 'kill9-train',
        dataset_type: 'extraction',
        format: 'jsonl',
        filename: 'train.jsonl',
      })
    ).json()) as { upload_url: string };
    expect((await fetch(url.upload_url, { method: 'PUT', body: rows })).status).toBe(200);
    expect((await post('/core/datasets/upload/process', { dataset_name: 'kill9-train' })).status).toBe(202);
    await eventually(
      async () => ((await (await get('/core/datasets/kill9-train/1')).json()) as { status: string }).status === 'ready',
      60_000,
    );
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
  }, 60_000);

  const infer = async (): Promise<Outcome> => {
    const sentAt = Date.now();
    try {
      const res = await fetch(`${system.baseUrl}/inference`, {
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
      const inferenceId =
        res.status >= 200 && res.status < 300 ? (JSON.parse(body) as { inference_id: string }).inference_id : undefined;
      return { sentAt, doneAt: Date.now(), status: res.status, ...(inferenceId ? { inferenceId } : {}) };
    } catch (err) {
      return { sentAt, doneAt: Date.now(), status: 0, error: String(err) };
    }
  };

  it('when each service is SIGKILLed in turn under load, then no acknowledged inference is lost or debited twice and the training job completes from its checkpoint', async () => {
    expect((await infer()).status).toBe(200); // warm: the first extraction loads the model
    const created = await post('/core/training-jobs', {
      base_model: 'whetstone-extract-base',
      datasets: [{ name: 'kill9-train' }],
      training_type: 'lora',
      nr_epochs: 3,
    });
    expect(created.status).toBe(200);
    const { id: jobId } = (await created.json()) as { id: string };

    const outcomes: Outcome[] = [];
    const loadStartedAt = Date.now();
    let killsDone = 0;
    const worker = async () => {
      while (
        killsDone === 0 ||
        Date.now() < killsDone + TAIL_MS ||
        (outcomes.length < TARGET_REQUESTS && Date.now() - loadStartedAt < MAX_LOAD_MS)
      ) {
        const o = await infer();
        outcomes.push(o);
        // A refused connection returns at once: don't spin while the gateway restarts.
        if (o.status === 0) await new Promise((r) => setTimeout(r, 100));
      }
    };
    const workers = Array.from({ length: CONCURRENCY }, worker);

    const hasCheckpoint = async () => {
      const res = await get(`/core/training-jobs/${jobId}/checkpoints`).catch(() => undefined);
      return res?.status === 200 && ((await res.json()) as { count: number }).count > 0;
    };
    // Ready with every back end answering (a 200 may list back ends still down under `degraded`).
    const ready = async () => {
      const res = await fetch(`${system.baseUrl}/readyz`, { signal: AbortSignal.timeout(5_000) }).catch(
        () => undefined,
      );
      return res?.status === 200 && !((await res.json().catch(() => ({}))) as { degraded?: string[] }).degraded;
    };
    const kills: { service: string; at: number; restartedAfterMs: number; readyAfterMs: number }[] = [];
    // The trainer goes first, as soon as the job has its first checkpoint (a quiet machine can finish the whole
    // job during the other kills' restarts, and then there would be nothing to resume).
    const pending = ['trainer', ...SERVICES.filter((s) => s !== 'trainer')];
    let windowStart = 0;
    // However the kills end (a failed expectation included), the load stops TAIL_MS after them.
    try {
      await new Promise((r) => setTimeout(r, 3_000));
      await eventually(hasCheckpoint, 120_000, 200);
      windowStart = Date.now();
      while (pending.length) {
        const trainerNow = pending.includes('trainer') && pending[0] !== 'trainer' && (await hasCheckpoint());
        const service = trainerNow ? 'trainer' : pending[0]!;
        if (service === 'trainer' && !trainerNow)
          // Its turn came before any checkpoint: wait for one, so the restart has something to resume from.
          await eventually(hasCheckpoint, 120_000, 500);
        pending.splice(pending.indexOf(service), 1);
        const before = system.pids(service);
        expect({ service, running: before.length > 0 }).toEqual({ service, running: true });
        const at = Date.now();
        for (const pid of before) process.kill(pid, 'SIGKILL');
        await eventually(async () => system.pids(service).some((p) => !before.includes(p)), 60_000, 100);
        const restartedAfterMs = Date.now() - at;
        // Ready again (the gateway listens and every backend's health check passes) before the next kill, so
        // each kill's failures are its own. The trainer has no probe: its new process is enough.
        if (service !== 'trainer') await eventually(ready, 60_000, 100);
        kills.push({ service, at, restartedAfterMs, readyAfterMs: Date.now() - at });
        await new Promise((r) => setTimeout(r, SETTLE_MS));
      }
    } finally {
      killsDone = Date.now();
    }
    await Promise.all(workers);
    const windowEnd = killsDone + TAIL_MS;

    const count = (f: (o: Outcome) => boolean) => outcomes.filter(f).length;
    const statuses = outcomes.reduce<Record<number, number>>(
      (n, o) => ({ ...n, [o.status]: (n[o.status] ?? 0) + 1 }),
      {},
    );
    const acknowledged = outcomes.flatMap((o) => (o.inferenceId ? [o.inferenceId] : []));
    const inWindow = (o: Outcome) => o.doneAt >= windowStart && o.sentAt <= windowEnd;

    // Records and debits arrive through the outboxes; wait (bounded) until they have caught up.
    const db = system.databaseUrl!;
    const check = () =>
      withClient(db, async (c) => {
        const recorded = await c.query<{ n: string }>(
          'SELECT count(*) AS n FROM history.inference_records WHERE id = ANY($1::uuid[])',
          [acknowledged],
        );
        const debited = await c.query<{ n: string }>(
          "SELECT count(*) AS n FROM key_billing.ledger_entries WHERE kind = 'usage' AND usage_id = ANY($1::text[])",
          [acknowledged],
        );
        const duplicateDebits = await c.query<{ n: string }>(
          "SELECT count(*) AS n FROM (SELECT usage_id FROM key_billing.ledger_entries WHERE team_id = $1 AND kind = 'usage' GROUP BY usage_id HAVING count(*) > 1) d",
          [teamId],
        );
        const duplicateRecords = await c.query<{ n: string }>(
          'SELECT count(*) - count(DISTINCT id) AS n FROM history.inference_records WHERE team_id = $1',
          [teamId],
        );
        return {
          records: Number(recorded.rows[0]!.n),
          debits: Number(debited.rows[0]!.n),
          duplicates: Number(duplicateDebits.rows[0]!.n) + Number(duplicateRecords.rows[0]!.n),
        };
      });
    let rows = await check();
    const convergeDeadline = Date.now() + 90_000;
    while ((rows.records < acknowledged.length || rows.debits < acknowledged.length) && Date.now() < convergeDeadline) {
      await new Promise((r) => setTimeout(r, 1_000));
      rows = await check();
    }

    // When something is missing, say where it stopped: in the event log or after it (the consumers' offsets).
    const missing = await withClient(db, async (c) => {
      const noDebit = await c.query<{ id: string }>(
        "SELECT a.id FROM unnest($1::text[]) a(id) WHERE NOT EXISTS (SELECT 1 FROM key_billing.ledger_entries l WHERE l.usage_id = a.id AND l.kind = 'usage')",
        [acknowledged],
      );
      const noRecord = await c.query<{ id: string }>(
        'SELECT a.id FROM unnest($1::uuid[]) a(id) WHERE NOT EXISTS (SELECT 1 FROM history.inference_records r WHERE r.id = a.id)',
        [acknowledged],
      );
      if (!noDebit.rowCount && !noRecord.rowCount) return undefined;
      const ids = [...noDebit.rows, ...noRecord.rows].map((r) => r.id);
      const inLog = await c.query(
        "SELECT seq, topic, type, created_at FROM whetstone_events.log WHERE topic IN ('billing.usage.v1', 'inferences.v1') AND payload::text LIKE ANY (SELECT '%' || encode(convert_to(x, 'UTF8'), 'hex') || '%' FROM unnest($1::text[]) x)",
        [ids],
      );
      const offsets = await c.query('SELECT grp, topic, seq FROM whetstone_events.consumer_offsets');
      return { noDebit: noDebit.rows, noRecord: noRecord.rows, inLog: inLog.rows, offsets: offsets.rows };
    });
    if (missing) process.stdout.write(`kill -9 under load, missing: ${JSON.stringify(missing)}\n`);

    const job = await until(jobId, ['complete', 'failed'], 240_000);
    const logs = ((await (await get(`/v1/training-jobs/${jobId}/logs`)).json()) as { logs: { message: string }[] })
      .logs;
    const messages = logs.map((l) => l.message);

    const report = {
      sent: outcomes.length,
      ok2xx: count((o) => o.status >= 200 && o.status < 300),
      status5xxInWindow: count((o) => o.status >= 500 && inWindow(o)),
      status5xxOutsideWindow: count((o) => o.status >= 500 && !inWindow(o)),
      connectionErrors: count((o) => o.status === 0),
      statuses,
      records: rows.records,
      debits: rows.debits,
      duplicates: rows.duplicates,
      lost: acknowledged.length - Math.min(rows.records, rows.debits),
      // Per kill: its new process seen after N s, /readyz 200 after M s, and the 5xx and connection errors
      // answered until the next kill.
      kills: kills.map((k, i) => {
        const until = kills[i + 1]?.at ?? windowEnd;
        const answered = outcomes.filter((o) => o.doneAt >= k.at && o.doneAt < until);
        const s = (ms: number) => (ms / 1000).toFixed(1);
        return `${k.service} pid ${s(k.restartedAfterMs)}s ready ${s(k.readyAfterMs)}s 5xx=${answered.filter((o) => o.status >= 500).length} conn=${answered.filter((o) => o.status === 0).length} of ${answered.length}`;
      }),
      loadRequestsPerSecond: Math.round(
        outcomes.length / ((Math.max(...outcomes.map((o) => o.doneAt)) - loadStartedAt) / 1000),
      ),
      loadSeconds: Math.round((Date.now() - loadStartedAt) / 1000),
      job: job.status,
    };
    process.stdout.write(`kill -9 under load: ${JSON.stringify(report)}\n`);

    expect(kills.map((k) => k.service).sort()).toEqual([...SERVICES].sort());
    // Exactly one record and one debit per acknowledged inference, no id twice.
    expect({ records: rows.records, debits: rows.debits, duplicates: rows.duplicates, report }).toEqual({
      records: acknowledged.length,
      debits: acknowledged.length,
      duplicates: 0,
      report,
    });
    // Every answer is a success, the outage answer 503, or a 502/504 from a hop that died mid-call; never 500.
    expect(outcomes.filter((o) => o.status === 500 || (o.status >= 400 && o.status < 500))).toEqual([]);
    // Serving again after the last restart: the tail's requests are answered 2xx.
    const tail = outcomes.filter((o) => o.sentAt > killsDone + 5_000);
    expect({ tailSent: tail.length > 0, tailFailed: tail.filter((o) => o.status !== 200).length }).toEqual({
      tailSent: true,
      tailFailed: 0,
    });
    // The job completed, and the restarted trainer resumed it from a checkpoint.
    expect({ status: job.status, messages }).toEqual({ status: 'complete', messages: expect.any(Array) });
    expect(messages.some((m) => /resuming from .*weights-\d+/.test(m))).toBe(true);
  }, 600_000);
});
