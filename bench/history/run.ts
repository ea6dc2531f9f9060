/**
 * Inference-history benchmark (issue 14), on a fresh database of the test server:
 *   - ingest: N InferenceCompleted events (default 100,000) sit in the Postgres event log; the real consumer path
 *     (PgEventLog subscription → handleBatch → the history app → one jsonb_to_recordset INSERT … ON CONFLICT DO NOTHING) drains
 *     them; sustained records/s, then a check that every id landed once (0 lost, 0 duplicated after a redelivery);
 *   - list: the table is grown to 1,000,000 records (generated in SQL), analysed, and filtered ListInferences
 *     (the use case on the Prisma store, as the gRPC handler calls it) is timed per filter: p50 and p95.
 *
 *   pnpm --filter @whetstone/bench bench:history [--events 100000] [--rows 1000000] [--keep]
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Pool } from 'pg';
import { applyMigrations, testDatabaseUrl, withClient } from '@whetstone/testing';
import { PgEventLog, appendOutbox } from '@whetstone/events';
import { createLogger } from '@whetstone/telemetry';
import { inProcessIngestSignal } from '@whetstone/inference-history/src/adapters/ingest-signal';
import { createPrismaClient } from '@whetstone/inference-history/src/adapters/prisma-client';
import { prismaHistoryStore } from '@whetstone/inference-history/src/adapters/prisma-history-store';
import { prismaJudgeStore } from '@whetstone/inference-history/src/adapters/prisma-judge-store';
import { buildApp } from '@whetstone/inference-history/src/app';
import { listInferences } from '@whetstone/inference-history/src/application/list-inferences';
import type { ListFilter } from '@whetstone/inference-history/src/domain/record';
import {
  INFERENCES_CONSUMER,
  INFERENCES_TOPIC,
} from '@whetstone/inference-history/src/transport/events/inference-completed.consumer';
import { completed } from '@whetstone/inference-history/test/factories/events';
import { encodeEvent } from '@whetstone/events';
import { InferenceCompletedSchema } from '@whetstone/proto/inference/v1';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { uuidv7 } from '@whetstone/errors';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const EVENTS = arg('events', 100_000);
const ROWS = arg('rows', 1_000_000);
const TEAM = '5b0f3c1e-0000-4000-8000-00000000b001';
const MODELS = Array.from({ length: 20 }, (_, i) => (i === 0 ? 'whetstone-extract-base' : `model-${i}`));

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const log = (line: string) => process.stdout.write(`${line}\n`);

/** The router's rows, written into the event log as the relay would (one multi-row INSERT per 1,000). */
async function fillLog(pool: Pool, count: number): Promise<string[]> {
  const ids: string[] = [];
  const start = Date.now() - count;
  for (let done = 0; done < count; done += 1000) {
    const rows = Array.from({ length: Math.min(1000, count - done) }, (_, i) => {
      const at = new Date(start + done + i);
      const e = completed({
        inferenceId: uuidv7(at.getTime()),
        teamId: TEAM,
        model: MODELS[(done + i) % MODELS.length]!,
        latencyMs: 5 + ((done + i) % 200),
        startedAt: timestampFromDate(at),
        completedAt: timestampFromDate(at),
      });
      ids.push(e.inferenceId);
      return encodeEvent(INFERENCES_TOPIC, InferenceCompletedSchema, e, e.inferenceId);
    });
    await appendOutbox(pool, 'bench_outbox', rows);
  }
  // Into the log in id order, exactly as the relay ships the outbox.
  await pool.query(`INSERT INTO whetstone_events.log (id, topic, key, type, payload, headers, occurred_at)
    SELECT 'inference/' || id, topic, key, type, payload, headers, created_at FROM bench_outbox.outbox_events ORDER BY id`);
  return ids;
}

async function ingestBench(url: string, pool: Pool) {
  const logger = createLogger({ service: 'bench-history', level: 'warn' });
  const prisma = createPrismaClient(url);
  const app = buildApp({
    store: prismaHistoryStore(prisma),
    judgeStore: prismaJudgeStore(prisma),
    signal: inProcessIngestSignal(),
    now: () => new Date(),
    readWaitMs: 0,
    inFlightWindowMs: 30_000,
    logger,
  });
  const eventLog = new PgEventLog(pool, 'whetstone_events');
  await eventLog.ensureSchema();
  await pool.query('CREATE SCHEMA bench_outbox');
  await pool.query(`CREATE TABLE bench_outbox.outbox_events (id BIGSERIAL PRIMARY KEY, topic TEXT NOT NULL,
    key TEXT NOT NULL, type TEXT NOT NULL, payload BYTEA NOT NULL, headers JSONB NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now(), published_at TIMESTAMPTZ(3))`);
  const ids = await fillLog(pool, EVENTS);

  let stored = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let inHandler = 0;
  const sub = await eventLog.subscribe({
    group: INFERENCES_CONSUMER,
    topics: [INFERENCES_TOPIC],
    logger,
    handler: async (e) => void (stored += await app.onInferenceEvents([e])),
    handleBatch: async (batch) => {
      const h = performance.now();
      stored += await app.onInferenceEvents(batch);
      inHandler += performance.now() - h;
      if (stored >= EVENTS) done();
    },
  });
  await finished;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const profile = {
    nodeCpuMsPer1k: (cpu.user + cpu.system) / EVENTS,
    handlerShare: inHandler / 1000 / seconds,
  };
  await sub.stop();
  // A redelivery of the first 10,000 events: nothing new, nothing duplicated.
  const again = await app.onInferenceEvents(
    (
      await pool.query(
        `SELECT id, topic, key, type, payload, headers, occurred_at FROM whetstone_events.log ORDER BY seq LIMIT 10000`,
      )
    ).rows.map((r) => ({ ...r, payload: new Uint8Array(r.payload), occurredAt: r.occurred_at })),
  );
  const held = await pool.query<{ n: string; distinct_ids: string }>(
    'SELECT count(*) AS n, count(DISTINCT id) AS distinct_ids FROM history.inference_records WHERE id = ANY($1::uuid[])',
    [ids],
  );
  await prisma.$disconnect();
  return {
    profile,
    seconds,
    rate: EVENTS / seconds,
    lost: EVENTS - Number(held.rows[0]!.distinct_ids),
    again,
    rows: Number(held.rows[0]!.n),
  };
}

/**
 * Grows the table to ROWS in SQL: one big team, 20 models, 6 tasks, 50 projects, half the rows judged, a quarter
 * stored chat completions with metadata `{run: r0…r99}`.
 */
async function grow(pool: Pool, have: number) {
  const add = ROWS - have;
  for (let done = 0; done < add; done += 100_000) {
    const n = Math.min(100_000, add - done);
    await pool.query(
      `INSERT INTO history.inference_records (id, team_id, model_id, training_job_id, base_model, task, surface, project_id,
         inputs, schema, outputs, input_tokens, cost_micro_credits, latency_ms, llmaj_score, created_at, completed_at,
         metadata, metadata_pairs)
       SELECT gen_random_uuid(), CASE WHEN g % 10 = 0 THEN gen_random_uuid() ELSE $1::uuid END,
         ($2::text[])[1 + g % 20], NULL, 'whetstone-extract-base',
         (ARRAY['ner','classification','relations','structures','decision','generate'])[1 + g % 6],
         CASE WHEN g % 4 = 1 THEN 'chat-completions' ELSE 'native' END,
         CASE WHEN g % 7 = 0 THEN 'project-' || (g % 50) END,
         '["Ada Lovelace met Charles Babbage in London."]', '{"entities":["person","city"]}',
         '[{"entities":{"person":["Ada Lovelace"],"city":["London"]}}]', 9, 1001,
         random() * 400, CASE WHEN g % 2 = 0 THEN random() END,
         now() - (random() * interval '30 days'), now(),
         CASE WHEN g % 4 = 1 THEN jsonb_build_object('run', 'r' || (g % 100)) ELSE '{}' END,
         CASE WHEN g % 4 = 1 THEN ARRAY[CASE WHEN g % 10 = 0 THEN 'other' ELSE $1::text END || ' ["run","r' || (g % 100) || '"]']
           ELSE '{}' END
       FROM generate_series($3::int, $4::int) g`,
      [TEAM, MODELS, have + done, have + done + n - 1],
    );
  }
  // What autovacuum does to a table of this size soon after: statistics, and the visibility map index-only scans use.
  await pool.query('VACUUM ANALYZE history.inference_records');
}

/** As GET /v1/chat/completions asks: one surface, the first page (offset 0), counted only for has_more. */
const OPENAI_LIST: Partial<ListFilter> = { surface: 'chat-completions', offset: 0, countToPage: true };

async function listBench(url: string) {
  const prisma = createPrismaClient(url);
  const deps = {
    store: prismaHistoryStore(prisma),
    signal: inProcessIngestSignal(),
    now: () => new Date(),
    readWaitMs: 0,
    inFlightWindowMs: 30_000,
  };
  const day = 86_400_000;
  const filters: [string, () => Partial<ListFilter>][] = [
    ['none', () => ({})],
    ['model_id', () => ({ modelId: MODELS[Math.floor(Math.random() * 20)] })],
    ['task', () => ({ task: 'classification' })],
    // project-0, -10, … -40 hold only other teams' rows (grow() gives those ids to g % 10 = 0), so pick among the rest.
    [
      'project_id',
      () => ({
        projectId: `project-${[1, 2, 3, 4, 5, 6, 7, 8, 9][Math.floor(Math.random() * 9)]! + 10 * Math.floor(Math.random() * 5)}`,
      }),
    ],
    ['latency 100–120 ms', () => ({ latencyMin: 100, latencyMax: 120 })],
    ['llmaj_score ≥ 0.9', () => ({ llmajScoreMin: 0.9, llmajScoreMax: 1 })],
    ['since/until (1 day)', () => ({ since: new Date(Date.now() - 3 * day), until: new Date(Date.now() - 2 * day) })],
    ['model_id + since (7 days)', () => ({ modelId: 'model-3', since: new Date(Date.now() - 7 * day) })],
    // OpenAI's list of stored chat completions: one surface, oldest first, first pages (offset 0), by metadata.
    ['surface, oldest first', () => ({ ...OPENAI_LIST, oldestFirst: true })],
    [
      'surface + metadata (1% of them)',
      // Only r1, r5, … r97 are held (g % 4 = 1): 1% of the stored completions each.
      () => ({ ...OPENAI_LIST, metadata: { run: `r${1 + 4 * Math.floor(Math.random() * 25)}` } }),
    ],
    ['surface + metadata (none match)', () => ({ ...OPENAI_LIST, metadata: { run: 'r2' } })],
  ];
  const all: number[] = [];
  log('\nfiltered ListInferences on the big team (limit 50, offsets 0–500), ms:');
  log('| filter | matching rows | p50 | p95 |');
  log('|---|---|---|---|');
  for (const [name, make] of filters) {
    const times: number[] = [];
    let total = '';
    for (let i = 0; i < 60; i++) {
      const t = performance.now();
      const page = await listInferences(deps, TEAM, {
        limit: 50,
        offset: 50 * Math.floor(Math.random() * 10),
        ...make(),
      });
      if (i >= 10) times.push(performance.now() - t);
      total = page.totalCapped ? `> ${page.total.toLocaleString('en-US')}` : page.total.toLocaleString('en-US');
    }
    all.push(...times);
    log(`| ${name} | ${total} | ${pct(times, 50).toFixed(1)} | ${pct(times, 95).toFixed(1)} |`);
  }
  log(`| all filters | | ${pct(all, 50).toFixed(1)} | ${pct(all, 95).toFixed(1)} |`);
  await prisma.$disconnect();
}

const HELP = `Usage: pnpm --filter @whetstone/bench bench:history [--events n] [--rows n] [--keep]

Ingest and list timings of inference history on a fresh database of the test server (TEST_DATABASE_URL).

Options:
  --events <n>  InferenceCompleted events drained through the consumer (default 100000)
  --rows <n>    records the table is grown to before the list timings (default 1000000)
  --keep        keep the database afterwards, for EXPLAIN ANALYZE (drop it by hand)
  -h, --help    show this help
`;

async function main() {
  if (process.argv.includes('--help') || process.argv.includes('-h')) return void process.stdout.write(HELP);
  const server = testDatabaseUrl();
  const db = `whetstone_bench_history_${randomBytes(3).toString('hex')}`;
  await withClient(server, (c) => c.query(`CREATE DATABASE ${db}`));
  const url = new URL(server);
  url.pathname = `/${db}`;
  url.searchParams.set('schema', 'history');
  const pool = new Pool({
    connectionString: new URL(url.toString().replace(/[?&]schema=history/, '')).toString(),
    max: 4,
  });
  try {
    await applyMigrations(url.toString(), `${__dirname}/../../services/inference-history/prisma/migrations`);
    log(`bench:history on a fresh database (${db}); a shared 2-core machine, so figures vary run to run`);
    const load = () =>
      os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' / ');
    log(`load average at start (1/5/15 min): ${load()} on ${os.cpus().length} cores`);
    const ingest = await ingestBench(url.toString(), pool);
    log(`\ningest through the consumer (event log → batch → one INSERT … ON CONFLICT DO NOTHING per batch):`);
    log(
      `  ${EVENTS.toLocaleString('en-US')} events in ${ingest.seconds.toFixed(1)} s = ${Math.round(ingest.rate).toLocaleString('en-US')} records/s`,
    );
    log(
      `  profile: the consumer's process used ${ingest.profile.nodeCpuMsPer1k.toFixed(0)} ms of CPU per 1,000 records; ${Math.round(ingest.profile.handlerShare * 100)}% of the wall time was in the batch handler (decode + one INSERT), the rest in the event log (read, offset commit)`,
    );
    log(
      `  lost: ${ingest.lost}; rows held for them: ${ingest.rows}; new rows from a 10,000-event redelivery: ${ingest.again}`,
    );
    const t = performance.now();
    await grow(pool, EVENTS);
    log(
      `\ngenerated the table up to ${ROWS.toLocaleString('en-US')} rows in ${((performance.now() - t) / 1000).toFixed(0)} s`,
    );
    log(`load average before the list timings: ${load()}`);
    await listBench(url.toString());
  } finally {
    await pool.end();
    // --keep leaves the database for EXPLAIN ANALYZE of a filter's statements (drop it by hand afterwards).
    if (process.argv.includes('--keep')) log(`kept the database ${db}`);
    else await withClient(server, (c) => c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`));
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String(err instanceof Error ? err.stack : err)}\n`);
    process.exit(1);
  },
);
