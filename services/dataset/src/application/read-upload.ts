/** Reading an uploaded file as lines of canonical JSONL: streamed for JSONL, converted in memory for CSV and CoNLL. */
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { readAll } from '@whetstone/blobs';
import { conllToJsonl, csvToJsonl, decodeUtf8 } from '@whetstone/ml';
import { DATASETS_BUCKET } from '../domain/dataset';
import type { RowProblem } from '../domain/report';
import type { DatasetDeps, VersionRow } from './ports';

const DEFAULT_MAX_CONVERT_BYTES = 100 * 1024 * 1024;

/** The file's lines in batches, or why the file cannot be read as rows at all. */
export type UploadSource = { lines: AsyncIterable<string[]> } | { failure: { problems: RowProblem[]; reason: string } };

export async function readUpload(deps: DatasetDeps, version: VersionRow): Promise<UploadSource> {
  if (version.format === 'jsonl') return { lines: readLines(await deps.blobs.get(DATASETS_BUCKET, version.uploadKey)) };
  const format = version.format.toUpperCase();
  const max = deps.maxConvertBytes ?? DEFAULT_MAX_CONVERT_BYTES;
  const stat = await deps.blobs.stat(DATASETS_BUCKET, version.uploadKey);
  if (stat && stat.size > max) {
    const reason = `${format} files are converted in memory and must be at most ${Math.round(max / 1024 / 1024)} MB; upload JSONL for larger files`;
    return { failure: { problems: [{ line: 0, field: '(file)', reason }], reason: 'file too large to convert' } };
  }
  const decoded = decodeUtf8(await readAll(deps.blobs, DATASETS_BUCKET, version.uploadKey));
  if (decoded.error) return { failure: { problems: [decoded.error], reason: 'the file is not valid UTF-8' } };
  // The converters report bad rows with line numbers (never throw); those reports are meant for the team.
  const converted = version.format === 'csv' ? csvToJsonl(decoded.text) : conllToJsonl(decoded.text);
  if (converted.errors.length)
    return { failure: { problems: converted.errors, reason: `the ${format} file has errors` } };
  return {
    lines: (async function* () {
      yield converted.jsonl.split('\n');
    })(),
  };
}

/** Lines of a UTF-8 stream, a chunk's worth at a time (invalid bytes become U+FFFD, reported by the caller). */
async function* readLines(stream: Readable): AsyncIterable<string[]> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of stream) {
    const lines = (rest + decoder.write(chunk as Buffer)).split('\n');
    rest = lines.pop()!;
    yield lines;
  }
  rest += decoder.end();
  if (rest) yield [rest];
}
