import { createHandlerContext } from '@connectrpc/connect';
import {
  DatasetFormat,
  DatasetService,
  DatasetType,
  GenerationStatus,
  VersionStatus,
} from '@whetstone/proto/dataset/v1';
import { createInMemoryDatasetStore } from '../../../test/fakes/in-memory-dataset-store';
import { MemoryBlobStore } from '../../../test/fakes/memory-blob-store';
import { recordingLogger } from '../../../test/fakes/recording-logger';
import { createDatasetContext } from '../../application/context';
import { datasetHandler } from './dataset.handler';

const ctx = createHandlerContext({
  service: DatasetService,
  method: DatasetService.method.createUpload,
  protocolName: 'grpc',
  requestMethod: 'POST',
  url: '/',
});

function handler() {
  const blobs = new MemoryBlobStore();
  const context = createDatasetContext({
    store: createInMemoryDatasetStore(),
    blobs,
    logger: recordingLogger(),
    maxUploadBytes: 1024,
  });
  return { impl: datasetHandler(context), blobs, context };
}

describe('DatasetService handler', () => {
  it('when an upload is created, then the version comes back as proto enums with the URL and limit', async () => {
    const { impl } = handler();
    const res = await impl.createUpload(
      {
        $typeName: 'whetstone.dataset.v1.CreateUploadRequest',
        teamId: 't',
        datasetName: 'intents',
        type: DatasetType.CLASSIFICATION,
        format: DatasetFormat.CSV,
        filename: 'x.csv',
      },
      ctx,
    );
    expect(res.version).toMatchObject({
      versionNumber: 1,
      status: VersionStatus.UPLOADING,
      type: DatasetType.CLASSIFICATION,
      format: DatasetFormat.CSV,
    });
    expect(res.uploadUrl).toMatch(/^memory:\/\/datasets\//);
    expect(res.maxBytes).toBe(1024n);
  });

  it('when the type is unspecified or the team is missing, then the call is InvalidArgument naming the field', async () => {
    const { impl } = handler();
    const base = {
      $typeName: 'whetstone.dataset.v1.CreateUploadRequest' as const,
      teamId: 't',
      datasetName: 'x',
      type: DatasetType.UNSPECIFIED,
      format: DatasetFormat.JSONL,
      filename: 'x',
    };
    await expect(impl.createUpload(base, ctx)).rejects.toMatchObject({ fieldErrors: [{ field: 'dataset_type' }] });
    await expect(impl.createUpload({ ...base, teamId: '', type: DatasetType.EXTRACTION }, ctx)).rejects.toMatchObject({
      fieldErrors: [{ field: 'team_id' }],
    });
  });

  it('when a generation job finished, then its status is the GENERATION_STATUS enum and names the dataset', async () => {
    const { impl, context } = handler();
    const { jobId } = await impl.startGeneration(
      {
        $typeName: 'whetstone.dataset.v1.StartGenerationRequest',
        teamId: 't',
        datasetName: 'gen',
        entityTypes: ['person'],
        classifications: [],
        decoderTask: '',
        domain: '',
        count: 20,
        seed: 3n,
      },
      ctx,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    await context.work.idle();
    const job = await impl.getGenerationJob(
      { $typeName: 'whetstone.dataset.v1.GetGenerationJobRequest', teamId: 't', jobId: String(jobId) },
      ctx,
    );
    expect(job).toMatchObject({ status: GenerationStatus.READY, datasetName: 'gen', versionNumber: 1, error: '' });
  });
});
