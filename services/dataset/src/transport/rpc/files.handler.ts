import type { ServiceImpl } from '@connectrpc/connect';
import type { FileService } from '@whetstone/proto/dataset/v1';
import { requireCaller } from '@whetstone/rpc';
import { deleteFile, getFile, getFileContent, listFiles, uploadFile } from '../../application/files';
import type { FileDeps } from '../../application/ports';
import { fileToPb } from './files.mapper';

/** FileService: proto in, use case, proto out. File content is passed through, never logged. */
export function filesHandler(ctx: FileDeps): ServiceImpl<typeof FileService> {
  return {
    async uploadFile(req) {
      const file = await uploadFile(ctx, {
        teamId: requireCaller(req.caller).teamId,
        filename: req.filename,
        purpose: req.purpose,
        content: req.content,
        expiresAfterSeconds: Number(req.expiresAfterSeconds),
      });
      return { file: fileToPb(file) };
    },
    async getFile(req) {
      return { file: fileToPb(await getFile(ctx, requireCaller(req.caller).teamId, req.fileId)) };
    },
    async listFiles(req) {
      const page = await listFiles(ctx, {
        teamId: requireCaller(req.caller).teamId,
        purpose: req.purpose,
        limit: req.limit,
        afterId: req.afterId,
        ascending: req.ascending,
      });
      return { files: page.files.map(fileToPb), hasMore: page.hasMore };
    },
    async getFileContent(req) {
      const out = await getFileContent(ctx, requireCaller(req.caller).teamId, req.fileId);
      return { file: fileToPb(out.file), content: out.content };
    },
    async deleteFile(req) {
      const file = await deleteFile(ctx, requireCaller(req.caller).teamId, req.fileId);
      return { fileId: file.id };
    },
  };
}
