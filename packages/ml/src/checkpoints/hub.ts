import { createHash } from 'node:crypto';
import {
  createReadStream,
  existsSync,
  mkdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  openSync,
  closeSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { CheckpointError } from './safetensors';

/** One file of a checkpoint with what it must be: its size in bytes and sha256 (hex). */
export interface PinnedFile {
  name: string;
  sha256: string;
  size: number;
}

/** Progress of a download or a copy: bytes of `file` done out of `total` (null when unknown). */
export type FetchProgress = (event: { file: string; done: number; total: number | null; source: string }) => void;

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Checks a file on disk against its pin; the error names the file, what was found and what was expected. */
export async function verifyFile(path: string, pin: PinnedFile): Promise<void> {
  if (!existsSync(path))
    throw new CheckpointError(`${pin.name}: missing (expected ${pin.size} bytes, sha256 ${pin.sha256})`);
  const size = statSync(path).size;
  if (size !== pin.size)
    throw new CheckpointError(
      `${pin.name}: ${size < pin.size ? 'truncated' : 'too long'}: ${size} bytes, expected ${pin.size} (sha256 ${pin.sha256})`,
    );
  const got = await sha256File(path);
  if (got !== pin.sha256) throw new CheckpointError(`${pin.name}: sha256 ${got}, expected ${pin.sha256}`);
}

export interface HubSource {
  /** e.g. `sentence-transformers/all-MiniLM-L6-v2`. */
  repo: string;
  /** A branch, tag or commit. */
  revision: string;
  /** The hub's base URL (the operator's mirror, or the public hub). */
  endpoint: string;
  /** Sent as `Authorization: Bearer` when given (gated or private repos). */
  token?: string;
}

/** `<endpoint>/<repo>/resolve/<revision>/<file>`, the hub's file URL. */
export function hubFileUrl(src: HubSource, file: string): string {
  const base = src.endpoint.replace(/\/+$/, '');
  return `${base}/${src.repo}/resolve/${encodeURIComponent(src.revision)}/${file.split('/').map(encodeURIComponent).join('/')}`;
}

/** The sha256 the hub reports for a file: `X-Linked-Etag` (LFS files) or `ETag`, when it is a sha256. */
function reportedSha256(headers: Headers): string | null {
  for (const h of ['x-linked-etag', 'etag']) {
    const v = headers.get(h)?.replace(/^W\//, '').replace(/"/g, '');
    if (v && /^[0-9a-f]{64}$/.test(v)) return v;
  }
  return null;
}

/**
 * Downloads one file from the hub into `dest`, through `dest.part`: a partial file left by an interrupted run is
 * resumed with a Range request (a server that answers 200 instead restarts it). The result must match the pin
 * (size and sha256) and, when the hub reports one, the hub's own sha256; otherwise the partial file is removed and
 * the error names the file and what was expected.
 */
export async function downloadHubFile(
  src: HubSource,
  pin: PinnedFile,
  dest: string,
  progress?: FetchProgress,
  fetchImpl: typeof fetch = fetch,
): Promise<void> {
  const url = hubFileUrl(src, pin.name);
  const part = `${dest}.part`;
  mkdirSync(dirname(dest), { recursive: true });
  let have = existsSync(part) ? statSync(part).size : 0;
  if (have > pin.size) {
    rmSync(part);
    have = 0;
  }
  const headers: Record<string, string> = {};
  if (src.token) headers.authorization = `Bearer ${src.token}`;
  if (have > 0) headers.range = `bytes=${have}-`;
  let res: Response;
  try {
    res = await fetchImpl(url, { headers, redirect: 'follow' });
  } catch (e) {
    throw new CheckpointError(`${pin.name}: could not reach ${url} (${(e as Error).message})`);
  }
  if (res.status === 416 && have === pin.size) {
    /* the partial file is already whole: verify it below */
  } else if (res.status !== 200 && res.status !== 206)
    throw new CheckpointError(`${pin.name}: ${url} answered HTTP ${res.status}, expected the file (${pin.size} bytes)`);
  const reported = reportedSha256(res.headers);
  if (reported && reported !== pin.sha256)
    throw new CheckpointError(`${pin.name}: the hub reports sha256 ${reported}, expected ${pin.sha256} (pinned)`);
  if (res.status === 200) have = 0;
  const fd = openSync(part, have > 0 ? 'a' : 'w');
  try {
    if (res.body && res.status !== 416) {
      const reader = res.body.getReader();
      let lastReport = 0;
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (e) {
          throw new CheckpointError(
            `${pin.name}: the download broke off at ${have} of ${pin.size} bytes (${(e as Error).message}); run again to resume`,
          );
        }
        if (chunk.done) break;
        writeSync(fd, chunk.value);
        have += chunk.value.length;
        if (progress && (have - lastReport > 1 << 20 || have === pin.size)) {
          lastReport = have;
          progress({ file: pin.name, done: have, total: pin.size, source: url });
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  if (have < pin.size)
    throw new CheckpointError(
      `${pin.name}: truncated: ${have} bytes received, expected ${pin.size}; run again to resume from byte ${have}`,
    );
  try {
    await verifyFile(part, pin);
  } catch (e) {
    rmSync(part, { force: true });
    throw e;
  }
  renameSync(part, dest);
}

/** Writes `bytes` into `dest` atomically (through a temporary file). */
export function writeAtomic(dest: string, bytes: Uint8Array): void {
  mkdirSync(dirname(dest), { recursive: true });
  const tmp = join(dirname(dest), `.${Date.now()}.${process.pid}.tmp`);
  writeFileSync(tmp, bytes);
  renameSync(tmp, dest);
}
