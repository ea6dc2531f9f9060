// Production build of one deployable, run by the Dockerfile's `build` stage inside a throwaway copy of the workspace
// (it rewrites package.json files there):
//
//   node deploy/image/build-service.mjs <service> <out>
//
// 1. Compiles every workspace package's src/**/*.ts to dist/**/*.js (esbuild, one file per file, CommonJS), so
//    paths relative to __dirname (ML assets, the dashboard's public/, the trainer's worker thread) still resolve,
//    and points each package's main/exports at dist.
// 2. `pnpm deploy --prod`: the service with its runtime dependencies only (workspace packages copied in).
// 3. Leaves the model runtime (onnxruntime-node) and the ML assets only in the images of deployables marked
//    `"models": true` in deploy/deployables.json; elsewhere @whetstone/ml loads its JavaScript kernels lazily and
//    never reads those files.
// 4. Splits the result into <out>/deps (the third-party packages, a layer that survives source edits) and <out>/app
//    (everything else, small), in one layout: copied over one another they form the deployed tree.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const [service, outArg] = process.argv.slice(2);
if (!service || !outArg) throw new Error('usage: build-service.mjs <service> <out>');
const root = path.resolve(import.meta.dirname, '../..');
const out = path.resolve(outArg);
const deployable = JSON.parse(readFileSync(path.join(root, 'deploy/deployables.json'), 'utf8')).deployables.find(
  (d) => d.name === service,
);
if (!deployable) throw new Error(`${service} is not in deploy/deployables.json`);

const workspaceDirs = ['packages', 'services'].flatMap((dir) =>
  readdirSync(path.join(root, dir))
    .map((name) => path.join(root, dir, name))
    .filter((d) => existsSync(path.join(d, 'package.json')) && existsSync(path.join(d, 'src'))),
);

function tsFiles(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

const toDist = (p) => p.replace(/^(\.\/)?src\/(.*)\.ts$/, (_m, dot, rest) => `${dot ?? ''}dist/${rest}.js`);
function pointAtDist(value) {
  if (typeof value === 'string') return toDist(value);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, pointAtDist(v)]));
  return value;
}

for (const dir of workspaceDirs) {
  await build({
    entryPoints: tsFiles(path.join(dir, 'src')),
    outdir: path.join(dir, 'dist'),
    outbase: path.join(dir, 'src'),
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  const file = path.join(dir, 'package.json');
  const pkg = JSON.parse(readFileSync(file, 'utf8'));
  for (const field of ['main', 'types', 'exports']) if (pkg[field]) pkg[field] = pointAtDist(pkg[field]);
  // What the deployed copy keeps: compiled code and the data files read at run time, never sources or tests.
  pkg.files = ['dist', 'public', 'assets', 'prisma'].filter((f) => existsSync(path.join(dir, f)));
  writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
}

rmSync(out, { recursive: true, force: true });
const staging = `${out}.staging`;
rmSync(staging, { recursive: true, force: true });
execFileSync('pnpm', ['--filter', `@whetstone/${service}`, 'deploy', '--prod', '--legacy', staging], {
  cwd: root,
  stdio: ['ignore', 'inherit', 'inherit'],
  env: { ...process.env, npm_config_ignore_scripts: 'true' },
});

const modules = path.join(staging, 'node_modules');
const store = path.join(modules, '.pnpm');
const drop = (dir) => rmSync(dir, { recursive: true, force: true });
const entries = (re) =>
  readdirSync(store)
    .filter((e) => re.test(e))
    .map((e) => path.join(store, e));
const pkgDir = (entry, name) => path.join(entry, 'node_modules', name);

// Peer dependencies pnpm installs for @prisma/client that only the Prisma CLI uses (the `migrate` image has it).
for (const entry of entries(/^(prisma|typescript)@/)) drop(entry);
// @prisma/client's runtime for the one engine and database used here: the query compiler for PostgreSQL.
for (const entry of entries(/^@prisma\+client@/)) {
  const runtime = pkgDir(entry, '@prisma/client/runtime');
  for (const f of readdirSync(runtime))
    if (!/^(client\.(js|d\.ts)|query_compiler_bg\.postgresql\.(js|wasm-base64\.js))$/.test(f))
      drop(path.join(runtime, f));
}
// The model runtime: in model images only, and only for the platform being built.
for (const entry of entries(/^onnxruntime-node@/)) {
  if (!deployable.models) {
    drop(entry);
    continue;
  }
  const bin = pkgDir(entry, 'onnxruntime-node/bin');
  for (const napi of readdirSync(bin))
    for (const platform of readdirSync(path.join(bin, napi)))
      if (platform !== process.platform) drop(path.join(bin, napi, platform));
      else
        for (const arch of readdirSync(path.join(bin, napi, platform)))
          if (arch !== process.arch) drop(path.join(bin, napi, platform, arch));
}
// Source maps of dependencies are not read in production.
for (const f of readdirSync(store, { recursive: true, withFileTypes: true }))
  if (f.isFile() && f.name.endsWith('.js.map') && !f.parentPath.includes('@whetstone'))
    rmSync(path.join(f.parentPath, f.name));

// What is left unreachable from the deployable and the workspace packages (dependencies of what was dropped) goes.
const reached = new Set();
const visit = (linkDir) => {
  if (!existsSync(linkDir)) return;
  for (const e of readdirSync(linkDir, { withFileTypes: true })) {
    const at = path.join(linkDir, e.name);
    if (e.name.startsWith('@') && e.isDirectory() && !e.isSymbolicLink()) {
      visit(at);
      continue;
    }
    if (!e.isSymbolicLink()) continue;
    const target = path.relative(store, path.resolve(linkDir, readlinkSync(at))).split(path.sep)[0];
    if (!target || target.startsWith('..') || reached.has(target)) continue;
    reached.add(target);
    visit(path.join(store, target, 'node_modules'));
  }
};
visit(modules);
for (const e of readdirSync(store)) {
  if (!e.startsWith('@whetstone+')) continue;
  reached.add(e);
  visit(path.join(store, e, 'node_modules'));
}
for (const e of readdirSync(store, { withFileTypes: true }))
  if (e.isDirectory() && e.name !== 'node_modules' && !reached.has(e.name)) drop(path.join(store, e.name));

// Links to the workspace sources outside the deployed tree (the deployable itself, hoisted) or to what was dropped.
for (const link of readdirSync(modules, { recursive: true, withFileTypes: true })) {
  if (!link.isSymbolicLink()) continue;
  const at = path.join(link.parentPath, link.name);
  const target = path.resolve(link.parentPath, readlinkSync(at));
  if (!target.startsWith(staging) || !existsSync(target)) rmSync(at);
}

// Two layers: <out>/deps holds the third-party packages of node_modules/.pnpm, unchanged by a source edit;
// <out>/app holds the rest (the deployable, its dist, the injected workspace packages and the links). Both keep the
// repository's layout (services/<name>, tools/prisma), so relative imports between them resolve as in the workspace;
// copied over one another they form the deployed tree.
const home = path.join('services', service);
mkdirSync(path.join(out, 'deps', home, 'node_modules', '.pnpm'), { recursive: true });
for (const entry of readdirSync(store, { withFileTypes: true })) {
  if (!entry.isDirectory() || entry.name === 'node_modules' || entry.name.startsWith('@whetstone+')) continue;
  renameSync(path.join(store, entry.name), path.join(out, 'deps', home, 'node_modules', '.pnpm', entry.name));
}
if (!deployable.models) for (const entry of entries(/^@whetstone\+ml@/)) drop(pkgDir(entry, '@whetstone/ml/assets'));
mkdirSync(path.join(out, 'app', 'services'), { recursive: true });
renameSync(staging, path.join(out, 'app', home));
// The services' Prisma adapters import tools/prisma/connection (the one URL → pool recipe) by a relative path.
await build({
  entryPoints: [path.join(root, 'tools/prisma/connection.ts')],
  outdir: path.join(out, 'app', 'tools', 'prisma'),
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
});
process.stdout.write(`built ${service} into ${out} (models: ${Boolean(deployable.models)})\n`);
