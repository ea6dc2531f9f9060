import { createInMemoryDatasetStore } from '../../test/fakes/in-memory-dataset-store';
import { createInMemoryFileStore } from '../../test/fakes/in-memory-file-store';
import { MemoryBlobStore } from '../../test/fakes/memory-blob-store';
import { recordingLogger } from '../../test/fakes/recording-logger';
import { createDatasetContext } from './context';
import { uploadFile } from './files';
import { importFiles } from './import-files';

const TEAM = 'team-1';

function setup() {
  const blobs = new MemoryBlobStore();
  const files = createInMemoryFileStore();
  const ctx = createDatasetContext({
    store: createInMemoryDatasetStore(),
    blobs,
    files,
    logger: recordingLogger(),
    maxUploadBytes: 1 << 20,
    instance: 'test',
  });
  const upload = async (text: string, expiresAfterSeconds = 0) =>
    (
      await uploadFile(
        { ...ctx, files },
        { teamId: TEAM, filename: 'chat.jsonl', purpose: 'fine-tune', content: Buffer.from(text), expiresAfterSeconds },
      )
    ).id;
  const uploaded = async (key: string) => (await blobs.get('datasets', key)).toArray();
  return { ctx, files, upload, uploaded };
}

const chat = (i: number) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: `question ${i}` },
      { role: 'assistant', content: `answer ${i}` },
    ],
  });
const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => chat(from + i));

describe('importFiles on in-memory ports', () => {
  it('when the files have a BOM, CRLF endings, blank lines and no final newline, then every row keeps its file and line', async () => {
    const { ctx, upload } = setup();
    const training = `\uFEFF${rows(6).join('\r\n')}\r\n\r\n${rows(6, 10).join('\r\n')}`;
    const validation = `\uFEFF${chat(100)}\n\n${chat(101)}\n{"messages": []}\n`;
    const out = await importFiles(ctx, {
      teamId: TEAM,
      datasetName: 'ft',
      trainingFileId: await upload(training),
      validationFileId: await upload(validation),
    });
    expect(out.trainingLines).toBe(13);
    expect(out.version.status).toBe('failed');
    expect(out.version.report!.issues.map((i) => [i.line, i.field])).toEqual([[17, 'messages']]);
    expect(out.version.report).toMatchObject({ total_rows: 15, valid_rows: 14, train_rows: 12, heldout_rows: 2 });
  });

  it('when there is no validation file, then the training file is the upload byte for byte', async () => {
    const { ctx, upload, uploaded } = setup();
    const training = `${rows(12).join('\n')}\n`;
    const out = await importFiles(ctx, {
      teamId: TEAM,
      datasetName: 'ft',
      trainingFileId: await upload(training),
      validationFileId: '',
    });
    expect(out).toMatchObject({ trainingLines: 12, version: { status: 'ready', size: 12, filename: 'chat.jsonl' } });
    expect(Buffer.concat(await uploaded(out.version.uploadKey)).toString()).toBe(training);
  });

  it('when a file has expired, then it is NotFound FILE_NOT_FOUND and no version is made', async () => {
    const { ctx, files, upload } = setup();
    const id = await upload(`${rows(12).join('\n')}\n`, 3600);
    files.rows.get(id)!.expiresAt = new Date(Date.now() - 1000);
    await expect(
      importFiles(ctx, { teamId: TEAM, datasetName: 'ft', trainingFileId: id, validationFileId: '' }),
    ).rejects.toMatchObject({ kind: 'NotFound', reason: 'FILE_NOT_FOUND' });
    expect(await ctx.store.listDatasets(TEAM)).toEqual([]);
  });
});
