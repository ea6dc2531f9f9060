/**
 * Dataset benchmark (issue 4): processing throughput of a 50 MB JSONL upload
 * (streamed: memory must stay flat) and offline generation speed.
 *
 *   pnpm --filter @whetstone/bench bench:datasets
 *
 * Processing runs the dataset service's own use case on a real filesystem blob
 * store; the store of rows is in memory here (a handful of writes per version).
 */
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { datasetsDir } from '@whetstone/testing';
import { FsBlobStore } from '@whetstone/blobs';
import { generateExamples } from '@whetstone/ml';
import { createDatasetContext } from '@whetstone/dataset/src/application/context';
import { createUpload } from '@whetstone/dataset/src/application/create-upload';
import { processUpload } from '@whetstone/dataset/src/application/process-upload';
import type { DatasetStore, GenerationRow, VersionRow } from '@whetstone/dataset/src/application/ports';

const DATA = datasetsDir();

function memoryStore(): DatasetStore & { versions: Map<string, VersionRow> } {
  const versions = new Map<string, VersionRow>();
  const jobs = new Map<string, GenerationRow>();
  return {
    versions,
    async createVersion(input) {
      const n = [...versions.values()].filter((v) => v.datasetName === input.name).length + 1;
      const row: VersionRow = {
        id: `v${versions.size + 1}`,
        datasetId: 'd1',
        teamId: input.teamId,
        datasetName: input.name,
        versionNumber: n,
        type: input.type,
        format: input.format,
        filename: input.filename,
        status: 'uploading',
        size: 0,
        uploadKey: input.keyFor('d1', n),
        report: null,
        notes: input.notes ?? [],
        corrections: input.corrections ?? 0,
        failureReason: null,
        createdAt: new Date(),
        updatedAt: new Date(),
      };
      versions.set(row.id, row);
      return row;
    },
    async listDatasets() {
      return [];
    },
    async listVersions(_t, name) {
      return [...versions.values()]
        .filter((v) => v.datasetName === name)
        .sort((a, b) => b.versionNumber - a.versionNumber);
    },
    async getVersion(_t, name, n) {
      return [...versions.values()].find((v) => v.datasetName === name && v.versionNumber === n) ?? null;
    },
    async getVersionById(id) {
      return versions.get(id) ?? null;
    },
    async transition(id, from, to, patch = {}) {
      const v = versions.get(id);
      if (!v || !from.includes(v.status)) return false;
      Object.assign(v, {
        status: to,
        ...(patch.size !== undefined ? { size: patch.size } : {}),
        ...(patch.report ? { report: patch.report } : {}),
      });
      return true;
    },
    async claim() {
      return true;
    },
    async renew() {},
    async abandoned() {
      return [];
    },
    async deleteDataset() {
      return null;
    },
    async createGeneration(row) {
      jobs.set(row.id, row);
    },
    async getGeneration(_t, id) {
      return jobs.get(id) ?? null;
    },
    async updateGeneration(id, patch) {
      Object.assign(jobs.get(id)!, patch);
    },
    async unfinishedGenerations() {
      return [];
    },
  };
}

const quiet = () => undefined;
const logger = { debug: quiet, info: quiet, warn: quiet, error: quiet, child: () => logger };

/** A 50 MB JSONL file in `dir`; returns its path. */
async function writeBigFile(dir: string): Promise<string> {
  // A 50 MB file: wikigold rows repeated (offsets stay valid).
  const rows = readFileSync(path.join(DATA, 'wikigold/train.jsonl'), 'utf8').trim().split('\n');
  const file = path.join(dir, 'big.jsonl');
  const out = createWriteStream(file);
  let bytes = 0;
  for (let i = 0; bytes < 50 * 1024 * 1024; i++) {
    const line = `${rows[i % rows.length]!.slice(0, -1)}, "copy": ${i}}\n`;
    bytes += Buffer.byteLength(line);
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  return file;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-datasets-'));
  try {
    const blobs = new FsBlobStore({
      root: dir,
      publicBaseUrl: 'http://localhost:1',
      signingSecret: 'bench-secret-0123456789',
    });
    const store = memoryStore();
    const datasets = createDatasetContext({ store, blobs, logger, maxUploadBytes: 1 << 30 });

    const file = await writeBigFile(dir);
    const size = statSync(file).size;

    const { version } = await createUpload(datasets, {
      teamId: 't',
      name: 'big',
      type: 'extraction',
      format: 'jsonl',
      filename: 'big.jsonl',
    });
    await blobs.put('datasets', version.uploadKey, (await import('node:fs')).createReadStream(file));
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const t0 = performance.now();
    await processUpload(datasets, 't', 'big', version.versionNumber);
    await datasets.work.idle();
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const done = store.versions.get(version.id)!;
    console.log(
      `dataset processing: ${(size / 1e6).toFixed(1)} MB JSONL, ${done.size.toLocaleString('en-US')} rows → ${done.status} in ${seconds.toFixed(2)} s = ${(size / 1e6 / seconds).toFixed(1)} MB/s (target ≥20); peak RSS growth ${((peak - rssBefore) / 1e6).toFixed(0)} MB for a ${(size / 1e6).toFixed(0)} MB file`,
    );

    for (const [label, req] of [
      [
        'entities (person, company, drug)',
        {
          entityTypes: ['person', 'company', 'drug'],
          classifications: [],
          domain: 'pharmacy sales',
          count: 20_000,
          seed: 1,
        },
      ],
      [
        'classification (3 labels)',
        {
          entityTypes: [],
          classifications: [{ task: 'intent', labels: ['refund', 'cancel_order', 'greeting'], multi_label: false }],
          domain: 'shop',
          count: 20_000,
          seed: 1,
        },
      ],
    ] as const) {
      const t = performance.now();
      let n = 0;
      for (const _row of generateExamples({
        ...req,
        entityTypes: [...req.entityTypes],
        classifications: req.classifications.map((c) => ({ ...c, labels: [...c.labels] })),
      }))
        n++;
      const s = (performance.now() - t) / 1000;
      console.log(
        `generation, ${label}: ${n.toLocaleString('en-US')} examples in ${s.toFixed(2)} s = ${Math.round(n / s).toLocaleString('en-US')} examples/s (target ≥500)`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
