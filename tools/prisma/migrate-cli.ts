/**
 * The chart's migration Jobs: `node migrate.js <migrations dir>` brings the schema named by DATABASE_URL's
 * `schema` parameter up to date, with the runner `pnpm start` uses (migrate.ts). deploy/image/build-migrate.mjs
 * bundles this file with pg into the `migrate` image, beside every service's migrations.
 */
import { deployMigrations } from './migrate';

const HELP = `Usage: node migrate.js <migrations dir>

Applies the Prisma migrations in <migrations dir> (one folder per migration, each with a migration.sql, in name
order) to the schema named by DATABASE_URL's schema parameter, and records them in _prisma_migrations exactly as
\`prisma migrate deploy\` does. Exits 0 when the schema is up to date, 1 when a migration failed (it says which).

Environment:
  DATABASE_URL   postgresql://user:password@host:5432/db?schema=<schema> (sslmode and the other parameters kept)
`;

async function main(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(HELP);
    return 0;
  }
  const [dir] = argv;
  const url = process.env.DATABASE_URL;
  if (!dir || !url) {
    process.stderr.write(`${!dir ? 'missing <migrations dir>' : 'DATABASE_URL is not set'}\n\n${HELP}`);
    return 2;
  }
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? 'public';
  parsed.searchParams.delete('schema');
  try {
    const [outcome] = await deployMigrations(parsed.toString(), [{ schema, migrationsDir: dir }]);
    const applied = outcome!.applied;
    process.stdout.write(
      applied.length
        ? `schema ${schema}: applied ${applied.length} migration(s): ${applied.join(', ')}\n`
        : `schema ${schema}: up to date, no pending migrations\n`,
    );
    return 0;
  } catch (err) {
    // The message names the schema and migration; never the URL (it may hold a password).
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

void main(process.argv.slice(2)).then((code) => process.exit(code));
