/** Proto ⇄ domain for FileService: the file record as its owner sees it. No rules live here. */
import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { StoredFileSchema } from '@whetstone/proto/dataset/v1';
import type { FileRow } from '../../application/ports';

/** The proto StoredFile; `expires_at` stays unset for a file kept until deleted. */
export function fileToPb(f: FileRow): MessageInitShape<typeof StoredFileSchema> {
  return {
    id: f.id,
    filename: f.filename,
    purpose: f.purpose,
    bytes: BigInt(f.bytes),
    createdAt: timestampFromDate(f.createdAt),
    ...(f.expiresAt ? { expiresAt: timestampFromDate(f.expiresAt) } : {}),
  };
}
