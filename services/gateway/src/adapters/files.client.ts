import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import type { FileService, StoredFile } from '@whetstone/proto/dataset/v1';
import type { FilesPort, StoredFileView } from '../application/ports';
import { callerOf } from './caller';

function fileView(file: StoredFile | undefined): StoredFileView {
  return {
    id: file?.id ?? '',
    filename: file?.filename ?? '',
    purpose: file?.purpose ?? '',
    bytes: Number(file?.bytes ?? 0),
    createdAt: file?.createdAt ? timestampDate(file.createdAt) : new Date(0),
    expiresAt: file?.expiresAt ? timestampDate(file.expiresAt) : null,
  };
}

/** The dataset service's FileService over gRPC, in the gateway's plain shapes. */
export function filesOverRpc(client: Client<typeof FileService>): FilesPort {
  return {
    async upload(principal, file) {
      const res = await client.uploadFile({
        caller: callerOf(principal),
        filename: file.filename,
        purpose: file.purpose,
        content: file.content,
        expiresAfterSeconds: BigInt(file.expiresAfterSeconds ?? 0),
      });
      return fileView(res.file);
    },
    async get(principal, fileId) {
      return fileView((await client.getFile({ caller: callerOf(principal), fileId })).file);
    },
    async list(principal, page) {
      const res = await client.listFiles({
        caller: callerOf(principal),
        purpose: page.purpose ?? '',
        limit: page.limit,
        afterId: page.afterId ?? '',
        ascending: page.ascending,
      });
      return { files: res.files.map(fileView), hasMore: res.hasMore };
    },
    async content(principal, fileId) {
      const res = await client.getFileContent({ caller: callerOf(principal), fileId });
      return { file: fileView(res.file), content: res.content };
    },
    async delete(principal, fileId) {
      return (await client.deleteFile({ caller: callerOf(principal), fileId })).fileId;
    },
  };
}
