import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import type { DatasetService } from '@whetstone/proto/dataset/v1';
import type { DatasetContext } from '../../application/context';
import { versionFeedbackNow } from '../../application/collect-feedback';
import { createUpload } from '../../application/create-upload';
import { deleteDataset } from '../../application/delete-dataset';
import { getDataset, getVersion, listDatasets } from '../../application/get-datasets';
import { importFiles } from '../../application/import-files';
import { processUpload } from '../../application/process-upload';
import { resolveForTraining } from '../../application/resolve-for-training';
import { getGeneration, startGeneration } from '../../application/start-generation';
import { DATASETS_BUCKET } from '../../domain/dataset';
import {
  formatFromPb,
  generationRequestFromPb,
  generationToPb,
  teamFromPb,
  typeFromPb,
  versionStatusToPb,
  versionToPb,
} from './dataset.mapper';

/** DatasetService: proto in, use case, proto out. */
export function datasetHandler(ctx: DatasetContext): ServiceImpl<typeof DatasetService> {
  return {
    async createUpload(req) {
      const out = await createUpload(ctx, {
        teamId: teamFromPb(req.teamId),
        name: req.datasetName,
        type: typeFromPb(req.type),
        format: formatFromPb(req.format),
        filename: req.filename,
      });
      return {
        version: versionToPb(out.version),
        uploadUrl: out.url,
        expiresAt: timestampFromDate(out.expiresAt),
        maxBytes: BigInt(out.maxBytes),
      };
    },
    async processUpload(req) {
      const version = await processUpload(ctx, teamFromPb(req.teamId), req.datasetName, req.versionNumber);
      return { version: versionToPb(version) };
    },
    async listDatasets(req) {
      const rows = await listDatasets(ctx, teamFromPb(req.teamId));
      return {
        datasets: rows.map((d) => ({
          datasetName: d.datasetName,
          status: versionStatusToPb(d.newest.status),
          createdAt: timestampFromDate(d.createdAt),
          versionNumber: d.newest.versionNumber,
          latestReadyVersion: d.latestReadyVersion ?? 0,
        })),
      };
    },
    async getDataset(req) {
      return { versions: (await getDataset(ctx, teamFromPb(req.teamId), req.datasetName)).map(versionToPb) };
    },
    async getVersion(req) {
      return {
        version: versionToPb(await getVersion(ctx, teamFromPb(req.teamId), req.datasetName, req.versionNumber)),
      };
    },
    async deleteDataset(req) {
      await deleteDataset(ctx, teamFromPb(req.teamId), req.datasetName);
      return {};
    },
    async versionFeedback(req) {
      const out = await versionFeedbackNow(ctx, teamFromPb(req.teamId), req.projectId);
      return out ? { version: versionToPb(out.version), cut: out.cut } : {};
    },
    async resolveForTraining(req) {
      const out = await resolveForTraining(ctx, teamFromPb(req.teamId), req.datasetName);
      return {
        version: versionToPb(out.version),
        bucket: DATASETS_BUCKET,
        trainKey: out.train,
        heldoutKey: out.heldout,
      };
    },
    async startGeneration(req) {
      const request = generationRequestFromPb(req);
      return { jobId: await startGeneration(ctx, teamFromPb(req.teamId), req.datasetName, request) };
    },
    async getGenerationJob(req) {
      return generationToPb(await getGeneration(ctx, teamFromPb(req.teamId), req.jobId));
    },
    async importFiles(req) {
      const out = await importFiles(ctx, {
        teamId: teamFromPb(req.teamId),
        datasetName: req.datasetName,
        trainingFileId: req.trainingFileId,
        validationFileId: req.validationFileId,
      });
      return { version: versionToPb(out.version), trainingLines: out.trainingLines };
    },
  };
}
