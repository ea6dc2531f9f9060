import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { datasetFile, eventually } from '@whetstone/testing';
import { signUpWithKey, startSystem, type RunningSystem } from './system';
import { apiClient } from './training-helpers';

/**
 * Issue 21: a trainer killed mid-run always resumes, even on a saturated
 * machine. A busy loop keeps a core at 100 % (beside the jest workers) while, for each failpoint
 * (TRAINER_FAILPOINT_FILE), the trainer kills itself at that exact point of a
 * job: mid-epoch, while a checkpoint is being stored, and during the final
 * evaluation. Every job must still complete, resumed by the restarted trainer
 * from its newest checkpoint, without using up its attempts.
 */
describe('a trainer killed at any point of a run resumes and completes, beside a CPU hog', () => {
  let system: RunningSystem;
  let base: string;
  let key: string;
  const { post, get, until } = apiClient(
    () => base,
    () => key,
  );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'whetstone-failpoints-'));
  const failpoint = path.join(dir, 'failpoint');
  const hogs: ChildProcess[] = [];

  beforeAll(async () => {
    system = await startSystem({ env: { TRAINER_LEASE_SECONDS: '5', TRAINER_FAILPOINT_FILE: failpoint } });
    base = system.baseUrl;
    ({ key } = await signUpWithKey(base, 'resume'));
    const url = (await (
      await post('/core/datasets/upload/url', {
        dataset_name: 'wikigold-small',
        dataset_type: 'extraction',
        format: 'jsonl',
        filename: 'train.jsonl',
      })
    ).json()) as { upload_url: string };
    const rows = readFileSync(datasetFile('wikigold/train.jsonl'), 'utf8').split('\n').slice(0, 200).join('\n');
    expect((await fetch(url.upload_url, { method: 'PUT', body: rows })).status).toBe(200);
    expect((await post('/core/datasets/upload/process', { dataset_name: 'wikigold-small' })).status).toBe(202);
    await eventually(
      async () =>
        ((await (await get('/core/datasets/wikigold-small/1')).json()) as { status: string }).status === 'ready',
      60_000,
    );
    hogs.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  }, 300_000);

  afterAll(async () => {
    for (const hog of hogs) hog.kill('SIGKILL');
    await system?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it.each([
    ['mid-epoch', /resuming from .*weights-\d+/],
    ['checkpoint-write', /resuming from .*weights-\d+/],
    ['final-evaluation', /resuming from .*weights-\d+/],
  ])(
    'when the trainer dies at %s, then the restarted trainer resumes the job from its checkpoint and it completes',
    async (point, resumed) => {
      const [before] = system.pids('trainer');
      writeFileSync(failpoint, point);
      const created = await post('/core/training-jobs', {
        base_model: 'whetstone-extract-base',
        datasets: [{ name: 'wikigold-small' }],
        training_type: 'lora',
        nr_epochs: 3,
      });
      expect(created.status).toBe(200);
      const { id } = (await created.json()) as { id: string };
      await eventually(async () => !existsSync(failpoint), 240_000, 100);
      await eventually(async () => (system.pids('trainer')[0] ?? before) !== before, 30_000, 100);

      const done = await until(id, ['complete', 'failed'], 300_000);
      const logs = ((await (await get(`/v1/training-jobs/${id}/logs`)).json()) as { logs: { message: string }[] }).logs;
      const messages = logs.map((l) => l.message);
      expect({ status: done.status, messages }).toEqual({ status: 'complete', messages: expect.any(Array) });
      expect(messages.some((m) => /lease expired \(attempt 1\)/.test(m))).toBe(true);
      expect(messages.some((m) => /leased by trainer .*\(attempt 2/.test(m) && resumed.test(m))).toBe(true);
      expect(messages.some((m) => /attempt 3/.test(m))).toBe(false);
      if (point === 'final-evaluation') expect(messages).toContain('resuming from epoch 3');
    },
    420_000,
  );
});
