import { createInMemoryDatasetStore } from '../../test/fakes/in-memory-dataset-store';
import { createInMemoryFileStore } from '../../test/fakes/in-memory-file-store';
import { MemoryBlobStore } from '../../test/fakes/memory-blob-store';
import { recordingLogger } from '../../test/fakes/recording-logger';
import { getFileContent, sweepExpiredFiles, uploadFile, type UploadFileInput } from './files';
import type { FileDeps } from './ports';

const TEAM = 'team-1';

function setup() {
  const blobs = new MemoryBlobStore();
  const files = createInMemoryFileStore();
  const deps: FileDeps = {
    store: createInMemoryDatasetStore(),
    blobs,
    files,
    logger: recordingLogger(),
    maxUploadBytes: 1 << 20,
  };
  return { deps, blobs, files };
}

const input = (over: Partial<UploadFileInput> = {}): UploadFileInput => ({
  teamId: TEAM,
  filename: 'in.jsonl',
  purpose: 'batch',
  content: Buffer.from('{}\n'),
  expiresAfterSeconds: 0,
  ...over,
});

describe('Files API use cases on in-memory ports', () => {
  it('when the record cannot be written, then the upload fails and its bytes are deleted too', async () => {
    const { deps, blobs, files } = setup();
    files.create = () => Promise.reject(new Error('connection reset'));
    await expect(uploadFile(deps, input())).rejects.toThrow('connection reset');
    expect(blobs.objects.size).toBe(0);
  });

  it('when the bytes of a file are gone, then its content is NotFound FILE_NOT_FOUND', async () => {
    const { deps, blobs } = setup();
    const file = await uploadFile(deps, input());
    blobs.objects.clear();
    await expect(getFileContent(deps, TEAM, file.id)).rejects.toMatchObject({ reason: 'FILE_NOT_FOUND' });
  });

  it('when deleting the bytes of an expired file fails, then its record stays for the next sweep', async () => {
    const { deps, blobs, files } = setup();
    const file = await uploadFile(deps, input({ expiresAfterSeconds: 3600 }));
    const later = new Date(Date.now() + 3601_000);
    const remove = blobs.delete.bind(blobs);
    blobs.delete = () => Promise.reject(new Error('storage down'));
    await expect(sweepExpiredFiles(deps, later)).rejects.toThrow('storage down');
    expect(files.rows.has(file.id)).toBe(true);
    blobs.delete = remove;
    expect(await sweepExpiredFiles(deps, later)).toBe(1);
    expect([files.rows.size, blobs.objects.size]).toEqual([0, 0]);
  });

  it('when more files expired than one batch holds, then one sweep deletes them all', async () => {
    const { deps, blobs, files } = setup();
    for (let i = 0; i < 450; i++) await uploadFile(deps, input({ expiresAfterSeconds: 3600 }));
    await uploadFile(deps, input());
    expect(await sweepExpiredFiles(deps, new Date(Date.now() + 3601_000))).toBe(450);
    expect([files.rows.size, blobs.objects.size]).toEqual([1, 1]);
  });
});
