import { readFileSync } from 'node:fs';
import { datasetFile, eventually } from '@whetstone/testing';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

/**
 * Issue 4's "done when", tried as a new user would through `pnpm start`: real
 * files uploaded through the presigned URL, processing to ready or failed,
 * generation, deletion, and another team's view.
 */
describe('datasets, end to end through pnpm start', () => {
  let system: RunningSystem;
  let base: string;
  let key: string;
  const headers = () => ({ 'content-type': 'application/json', 'x-api-key': key });
  const post = (p: string, body: unknown, k = key) =>
    fetch(`${base}${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': k },
      body: JSON.stringify(body),
    });
  const get = (p: string, k = key) => fetch(`${base}${p}`, { headers: { 'x-api-key': k } });

  async function upload(name: string, type: string, format: string, body: Buffer | string) {
    const url = await post('/core/datasets/upload/url', {
      dataset_name: name,
      dataset_type: type,
      format,
      filename: `file.${format}`,
    });
    expect(url.status).toBe(200);
    const { upload_url, version_number } = (await url.json()) as { upload_url: string; version_number: string };
    const put = await fetch(upload_url, { method: 'PUT', body });
    return { put, version_number };
  }
  async function processAndWait(name: string, version: string | number) {
    const started = await post('/core/datasets/upload/process', { dataset_name: name, version_number: version });
    expect(started.status).toBe(202);
    return eventually(async () => {
      const v = (await (await get(`/core/datasets/${name}/${version}`)).json()) as {
        version_number: string;
        status: string;
        size: number;
        report: { issues: { line: number; field: string; reason: string }[]; failure_reason: string };
      };
      return v.status === 'ready' || v.status === 'failed' ? v : null;
    }, 30_000);
  }

  beforeAll(async () => {
    system = await startSystem({ env: { DATASET_MAX_UPLOAD_BYTES: String(2 * 1024 * 1024) } });
    base = system.baseUrl;
    ({ key } = await signUpWithKey(base, 'datasets'));
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
  }, 30_000);

  it('takes the shared NER and classification files through the presigned URL to ready with the right size', async () => {
    const ner = await upload('wikigold', 'extraction', 'jsonl', readFileSync(datasetFile('wikigold/train.jsonl')));
    expect(ner.put.status).toBe(200);
    const nerVersion = await processAndWait('wikigold', ner.version_number);
    expect(nerVersion).toMatchObject({ status: 'ready', size: 1355 });

    const banking = readFileSync(datasetFile('banking77/test.jsonl'));
    const clf = await upload('banking77', 'classification', 'jsonl', banking);
    expect((await processAndWait('banking77', clf.version_number)).status).toBe('ready');
    const rows = banking.toString('utf8').trim().split('\n').length;
    expect(((await (await get('/core/datasets/banking77/1')).json()) as { size: number }).size).toBe(rows);

    // Uploading again under the same name makes version 2, listed newest first.
    const again = await upload('wikigold', 'extraction', 'jsonl', readFileSync(datasetFile('wikigold/dev.jsonl')));
    // Every answer writes version_number as a string, as the spec types it; the process call takes either.
    expect(again.version_number).toBe('2');
    expect(await processAndWait('wikigold', 2)).toMatchObject({ version_number: '2', status: 'ready' });
    const versions = (await (await get('/core/datasets/wikigold')).json()) as {
      count: number;
      versions: { version_number: string; size: number; status: string }[];
    };
    expect(versions.versions.map((v) => v.version_number)).toEqual(['2', '1']);
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as {
      components: { schemas: Record<string, { properties: Record<string, { type?: string }> }> };
    };
    expect(doc.components.schemas.DatasetVersion!.properties.version_number!.type).toBe('string');
    const list = (await (await get('/core/datasets')).json()) as {
      success: boolean;
      count: number;
      datasets: { dataset_name: string; status: string; version_number: string }[];
    };
    expect(list).toMatchObject({ success: true, count: 2 });
    expect(list.datasets).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          dataset_name: 'wikigold',
          status: 'ready',
          version_number: '2',
          latest_ready_version: '2',
        }),
      ]),
    );
  }, 90_000);

  it('converts CSV and CoNLL uploads', async () => {
    const csv = [
      'text,label',
      ...Array.from({ length: 12 }, (_, i) => `"order ${i} never arrived, where is it",shipping`),
      ...Array.from({ length: 12 }, (_, i) => `charged twice on invoice ${i},billing`),
    ].join('\n');
    const c = await upload('tickets-csv', 'classification', 'csv', csv);
    expect(await processAndWait('tickets-csv', c.version_number)).toMatchObject({ status: 'ready', size: 24 });
    const conll = Array.from(
      { length: 12 },
      (_, i) => `Ada B-person\nLovelace I-person\nvisited O\nLondon B-location\n${i} O\n`,
    ).join('\n');
    const n = await upload('names-conll', 'extraction', 'conll', conll);
    expect(await processAndWait('names-conll', n.version_number)).toMatchObject({ status: 'ready', size: 12 });
  }, 60_000);

  it('fails a broken file with a report that names the bad lines', async () => {
    const good = readFileSync(datasetFile('wikigold/test.jsonl'), 'utf8').trim().split('\n').slice(0, 20);
    good.splice(3, 0, '{"text": "Paris is nice", "entities": [{"start": 0, "end": 50, "label": "location"}]}');
    good.splice(7, 0, 'not json at all');
    const broken = await upload('broken', 'extraction', 'jsonl', good.join('\n'));
    const v = await processAndWait('broken', broken.version_number);
    expect(v.status).toBe('failed');
    expect(v.report.issues.map((i) => i.line)).toEqual(expect.arrayContaining([4, 8]));
    expect(v.report.failure_reason).toMatch(/line 4/);
  }, 60_000);

  it('refuses a body over the limit with 413, and an upload never processed stays out of training', async () => {
    const big = await upload('too-big', 'extraction', 'jsonl', Buffer.alloc(2 * 1024 * 1024 + 10, 'a'));
    expect(big.put.status).toBe(413);
    expect(((await big.put.json()) as { detail: string }).detail).toBeTruthy();
    const early = await post('/core/datasets/upload/process', { dataset_name: 'too-big' });
    expect(early.status).toBe(409);
  });

  it('generates a dataset offline that reaches ready, and deletes datasets so they are gone', async () => {
    const started = await post('/generate', {
      dataset_name: 'synthetic-ner',
      schema: { entities: ['person', 'company', 'drug'] },
      domain: 'pharmacy',
      count: 300,
      seed: 7,
    });
    expect(started.status).toBe(202);
    const { job_id } = (await started.json()) as { job_id: string };
    const job = await eventually(async () => {
      const j = (await (await get(`/generate/jobs/${job_id}`)).json()) as {
        status: string;
        dataset_name: string;
        progress: { generated: number; requested: number };
      };
      return j.status === 'ready' || j.status === 'failed' ? j : null;
    }, 30_000);
    expect(job).toMatchObject({
      status: 'ready',
      dataset_name: 'synthetic-ner',
      progress: { generated: 300, requested: 300 },
    });
    expect(((await (await get('/core/datasets/synthetic-ner/1')).json()) as { size: number }).size).toBe(300);

    const other = await signUpWithKey(base, 'other-team');
    expect((await get('/core/datasets/synthetic-ner', other.key)).status).toBe(404);
    expect((await get(`/generate/jobs/${job_id}`, other.key)).status).toBe(404);

    const deleted = await fetch(`${base}/core/datasets/synthetic-ner`, { method: 'DELETE', headers: headers() });
    expect(deleted.status).toBe(200);
    expect(await deleted.text()).toBe('');
    expect((await get('/core/datasets/synthetic-ner')).status).toBe(404);
  }, 60_000);
});
