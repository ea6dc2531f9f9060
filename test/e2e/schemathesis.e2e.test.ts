/**
 * schemathesis (PyPI, pinned in tools/schemathesis/requirements.txt, installed into a virtualenv outside the
 * repository by tools/schemathesis/install.sh) against /openapi.json of the system started as `pnpm start` starts
 * it: every operation, authenticated with an API key made through the API, a fixed seed and a time bound. No answer
 * may be a 5xx (not_a_server_error) or break the schema the document gives for its status
 * (response_schema_conformance). It joins fuzz.e2e.test.ts, which checks each surface's error envelope.
 * SCHEMATHESIS_SEED and SCHEMATHESIS_MAX_TIME override the seed and the bound; the figures go to
 * docs/reliability.md ("schemathesis").
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually } from '@whetstone/testing';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

const ROOT = path.resolve(__dirname, '..', '..');
const SEED = process.env.SCHEMATHESIS_SEED ?? '1337';
/** Seconds schemathesis may spend generating and sending; it stops there and reports what it ran. */
const MAX_TIME = Number(process.env.SCHEMATHESIS_MAX_TIME ?? 240);
const RATE_LIMITS = Object.fromEntries(
  ['EDGE', 'IP', 'INFERENCE', 'CHAT', 'GLINER', 'GENERATE', 'TRAINING_JOBS'].map((k) => [
    `RATE_LIMIT_${k}_PER_MINUTE`,
    '10000000',
  ]),
);

interface Report {
  seed: number;
  running_time: number;
  stop_reason: string;
  operations: { total: number; selected: number; tested: number; errored: number };
  test_cases: { generated: number; with_failures: number; unique_failures: number; errored: number };
  failures: { code: string; title: string; count: number; operations: string[] }[];
  errors: { title: string; count: number }[];
}

/** Runs `command` in `cwd` (schemathesis keeps its cache in `.schemathesis/` there, not in the repository). */
function run(
  command: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('schemathesis against /openapi.json of the running system', () => {
  let system: RunningSystem;
  let key: string;
  let schemathesis: string;
  let dir: string;

  beforeAll(async () => {
    schemathesis = execFileSync('bash', [path.join(ROOT, 'tools', 'schemathesis', 'install.sh')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
    dir = mkdtempSync(path.join(os.tmpdir(), 'whetstone-schemathesis-'));
    system = await startSystem({ env: RATE_LIMITS });
    ({ key } = await eventually(() => signUpWithKey(system.baseUrl, 'schemathesis').catch(() => null), 60_000, 2_000));
  }, 600_000);

  afterAll(async () => {
    await system?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('when every operation is called with generated requests, then none answers 5xx and every answer fits its documented schema', async () => {
    const reportPath = path.join(dir, 'report.json');
    const { code, output } = await run(
      schemathesis,
      [
        'run',
        `${system.baseUrl}/openapi.json`,
        '--header',
        `X-API-Key: ${key}`,
        '--seed',
        SEED,
        '--checks',
        'not_a_server_error,response_schema_conformance',
        '--phases',
        'examples,coverage,fuzzing',
        '--max-examples',
        '10',
        '--max-time',
        String(MAX_TIME),
        // One worker: Hypothesis's source inspection is not thread-safe on CPython 3.11 (a spurious runtime error).
        '--workers',
        '1',
        '--request-timeout',
        '30',
        '--no-shrink',
        '--report',
        'json',
        '--report-json-path',
        reportPath,
      ],
      dir,
      (MAX_TIME + 180) * 1000,
    );
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
    const summary = {
      seed: report.seed,
      seconds: Math.round(report.running_time),
      stop: report.stop_reason,
      operations: report.operations,
      cases: report.test_cases.generated,
      casesWithFailures: report.test_cases.with_failures,
      failures: report.failures.map((f) => ({
        code: f.code,
        title: f.title,
        count: f.count,
        operations: f.operations,
      })),
      errors: report.errors,
    };
    process.stdout.write(`schemathesis: ${JSON.stringify(summary)}\n`);
    if (report.failures.length || report.errors.length) process.stdout.write(output.slice(-20_000));
    expect(summary.failures).toEqual([]);
    expect(summary.errors).toEqual([]);
    expect(report.operations.tested).toBe(report.operations.total);
    expect(code).toBe(0);
  }, 1_200_000);
});
