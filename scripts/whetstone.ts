/**
 * `pnpm whetstone <area> …`: the one entry point for human-facing CLIs.
 * Each area lives with the code it drives and exports a `run…Cli(argv)`.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');

interface Area {
  summary: string;
  module: string;
  entry: string;
}

const AREAS: Record<string, Area> = {
  ml: {
    summary: 'train, evaluate and run the built-in models locally (no services needed)',
    module: 'packages/ml/src/cli/main.ts',
    entry: 'runMlCli',
  },
  admin: {
    summary: 'operator tasks over internal gRPC: credits, plans, blocking accounts',
    module: 'services/key-billing/src/cli/admin.ts',
    entry: 'runAdminCli',
  },
};

const HELP = `Usage: pnpm whetstone <area> <command> [options]

Areas:
${Object.entries(AREAS)
  .map(([name, a]) => `  ${name.padEnd(8)} ${a.summary}`)
  .join('\n')}

Run \`pnpm whetstone <area> --help\` for the commands of an area.
`;

async function main(argv: string[]): Promise<number> {
  const [areaName, ...rest] = argv;
  if (!areaName || areaName === '--help' || areaName === '-h' || areaName === 'help') {
    process.stdout.write(HELP);
    return areaName ? 0 : 2;
  }
  const area = AREAS[areaName];
  if (!area) {
    process.stderr.write(`error: unknown area '${areaName}'\n\n${HELP}`);
    return 2;
  }
  const file = path.join(ROOT, area.module);
  if (!existsSync(file)) {
    process.stderr.write(`error: the '${areaName}' CLI is not part of this build yet (${area.module} is missing)\n`);
    return 2;
  }
  // require, not import(): entry points run with `node --require tsx/cjs` (see docs/architecture.md), whose hook serves require.
  const mod = require(file) as Record<string, (args: string[]) => Promise<number>>;
  const run = mod[area.entry];
  if (typeof run !== 'function') throw new Error(`${area.module} does not export ${area.entry}`);
  return run(rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
