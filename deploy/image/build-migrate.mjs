// The `migrate` image's contents, run by the Dockerfile's `migrate-build` stage:
//
//   node deploy/image/build-migrate.mjs <out>
//
// <out>/migrate.js is tools/prisma/migrate-cli.ts bundled with pg (esbuild, one CommonJS file); <out>/migrations/
// <service> holds each service's prisma/migrations. The chart's migration Job for a service runs
// `node migrate.js migrations/<service>` with that service's DATABASE_URL. No Prisma CLI, no workspace.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const [outArg] = process.argv.slice(2);
if (!outArg || outArg === '--help' || outArg === '-h') {
  process.stdout.write('usage: node deploy/image/build-migrate.mjs <out>\n');
  process.exit(outArg ? 0 : 2);
}
const root = path.resolve(import.meta.dirname, '../..');
const out = path.resolve(outArg);
rmSync(out, { recursive: true, force: true });
mkdirSync(path.join(out, 'migrations'), { recursive: true });

await build({
  entryPoints: [path.join(root, 'tools/prisma/migrate-cli.ts')],
  outfile: path.join(out, 'migrate.js'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  // pg loads its optional native binding only when asked to; it is never installed.
  external: ['pg-native'],
  sourcemap: 'inline',
  logLevel: 'warning',
});

const { deployables } = JSON.parse(readFileSync(path.join(root, 'deploy/deployables.json'), 'utf8'));
for (const d of deployables.filter((d) => d.schema)) {
  const dir = path.join(root, 'services', d.name, 'prisma', 'migrations');
  if (!existsSync(dir)) throw new Error(`${d.name} has a schema but no ${path.relative(root, dir)}`);
  cpSync(dir, path.join(out, 'migrations', d.name), { recursive: true });
}
