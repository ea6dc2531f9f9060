/**
 * Runs the Prisma 6.19 CLI for one service with the workarounds it needs here:
 *
 *   pnpm exec tsx tools/prisma/cli.ts <service dir> migrate deploy
 *   pnpm exec tsx tools/prisma/cli.ts <service dir> migrate diff <name>
 *   pnpm exec tsx tools/prisma/cli.ts <service dir> generate
 *
 * `migrate diff <name>` stands in for the broken `migrate dev --create-only`:
 * it writes prisma/migrations/<timestamp>_<name>/migration.sql from the
 * difference between the existing migrations and schema.prisma. Any other
 * arguments are passed to `prisma` unchanged.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const PRELOAD = path.join(__dirname, 'unref-timers.cjs');

/** Commands that parse the schema but never connect. */
const OFFLINE_COMMANDS = new Set(['generate', 'validate', 'format']);

/**
 * The schema engine resolves `env("DATABASE_URL")` while parsing; when that
 * fails the CLI falls back to downloading a native engine. Commands that never
 * connect get a placeholder so they work on a machine with no database set up.
 */
const OFFLINE_PLACEHOLDER_URL = 'postgresql://offline@127.0.0.1:5432/offline';

/** The environment every Prisma CLI invocation gets. */
export function prismaCliEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const preload = `--require ${JSON.stringify(PRELOAD)}`;
  return {
    ...base,
    NODE_OPTIONS: [base.NODE_OPTIONS, preload].filter(Boolean).join(' '),
    // Nothing can be downloaded here; make any engine download attempt fail at once.
    PRISMA_ENGINES_MIRROR: 'http://127.0.0.1:9',
    CHECKPOINT_DISABLE: '1',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
  };
}

export interface PrismaRunResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Run `prisma <args>` in `serviceDir` with the recipe's environment. */
export function runPrisma(
  serviceDir: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  capture = false,
): PrismaRunResult {
  const dir = path.resolve(serviceDir);
  if (OFFLINE_COMMANDS.has(args[0] ?? '') && !env.DATABASE_URL) env = { ...env, DATABASE_URL: OFFLINE_PLACEHOLDER_URL };
  const prismaBin = createRequire(path.join(dir, 'package.json')).resolve('prisma/build/index.js');
  const result = spawnSync(process.execPath, [prismaBin, ...args], {
    cwd: dir,
    env: prismaCliEnv(env),
    stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    encoding: 'utf8',
  });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

function timestamp(now = new Date()): string {
  return now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** Write a new migration folder from the schema diff; returns its path, or null when nothing changed. */
export function createMigration(serviceDir: string, name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const migrations = path.join(path.resolve(serviceDir), 'prisma', 'migrations');
  // The diff reads the connector from the lock file, which only `migrate dev` would write.
  mkdirSync(migrations, { recursive: true });
  const lock = path.join(migrations, 'migration_lock.toml');
  if (!existsSync(lock))
    writeFileSync(lock, '# Written by tools/prisma/cli.ts; keep it in version control.\nprovider = "postgresql"\n');
  const result = runPrisma(
    serviceDir,
    [
      'migrate',
      'diff',
      '--from-migrations',
      'prisma/migrations',
      '--to-schema-datamodel',
      'prisma/schema.prisma',
      '--script',
    ],
    env,
    true,
  );
  if (result.status !== 0) throw new Error(`prisma migrate diff failed:\n${result.stderr}`);
  // The engine names the URL's schema in the script; migrations must stay
  // schema-agnostic (deploy and tests pick the schema via search_path).
  const script = result.stdout.replace(/^-- CreateSchema\r?\nCREATE SCHEMA IF NOT EXISTS "[^"]+";\r?\n\r?\n?/m, '');
  if (!/^\s*(CREATE|ALTER|DROP|INSERT|UPDATE|COMMENT)\b/im.test(script)) return null;
  const folder = path.join(migrations, `${timestamp()}_${name.replace(/[^a-z0-9_]/gi, '_')}`);
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, 'migration.sql'), script);
  return folder;
}

const USAGE = `Usage: tsx tools/prisma/cli.ts <service dir> <command>

Commands:
  migrate deploy        apply pending migrations to DATABASE_URL (with ?schema=)
  migrate diff <name>   write prisma/migrations/<timestamp>_<name>/migration.sql from schema.prisma
  generate              generate the Prisma client
  <anything else>       passed to prisma as is
`;

function main(argv: string[]): number {
  const [serviceDir, ...args] = argv;
  if (!serviceDir || args.length === 0 || serviceDir === '--help') {
    process.stdout.write(USAGE);
    return serviceDir === '--help' ? 0 : 2;
  }
  if (args[0] === 'migrate' && args[1] === 'diff' && args[2] && !args[2].startsWith('-')) {
    const folder = createMigration(serviceDir, args[2]);
    process.stdout.write(
      folder ? `wrote ${path.relative(process.cwd(), folder)}\n` : 'schema matches the migrations; nothing written\n',
    );
    return 0;
  }
  return runPrisma(serviceDir, args).status;
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
