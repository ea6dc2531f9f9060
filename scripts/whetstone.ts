/**
 * `pnpm whetstone <area> …`: the one entry point for human-facing CLIs.
 * Each area lives with the code it drives and exports a `run…Cli(argv)`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEPLOYABLES } from './lib/deployables';

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
  const args = areaName === 'admin' ? targetRunningSystem(rest) : rest;
  const file = path.join(ROOT, area.module);
  if (!existsSync(file)) {
    process.stderr.write(`error: the '${areaName}' CLI is not part of this build yet (${area.module} is missing)\n`);
    return 2;
  }
  // require, not import(): entry points run with `node --require tsx/cjs` (see docs/architecture.md), whose hook serves require.
  const mod = require(file) as Record<string, (args: string[]) => Promise<number>>;
  const run = mod[area.entry];
  if (typeof run !== 'function') throw new Error(`${area.module} does not export ${area.entry}`);
  return run(args);
}

/**
 * The admin CLI talks to the system `pnpm start` runs from the same data dir (`--data-dir`, default .data),
 * whatever its port offset: start.ts writes `<data-dir>/run.json` with the addresses, and the admin token is in
 * `<data-dir>/secrets.json`. KEY_BILLING_ADDR, ADMIN_TOKEN or `--addr` still win. Without a running system,
 * `--port-offset` (or WHETSTONE_PORT_OFFSET) picks the address. Returns the arguments left for the CLI.
 */
function targetRunningSystem(argv: string[]): string[] {
  const { values, tokens } = parseArgs({
    args: argv,
    options: { 'data-dir': { type: 'string' }, 'port-offset': { type: 'string' } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  // Drop our two options (and their separate values) from what the admin CLI parses.
  const dropped = new Set<number>();
  for (const t of tokens)
    if (t.kind === 'option' && (t.name === 'data-dir' || t.name === 'port-offset')) {
      dropped.add(t.index);
      if (t.inlineValue === false) dropped.add(t.index + 1);
    }
  const rest = argv.filter((_, i) => !dropped.has(i));
  const dataDir = path.resolve(ROOT, typeof values['data-dir'] === 'string' ? values['data-dir'] : '.data');
  const run = readJson<{ pid?: number; addrs?: Record<string, string> }>(path.join(dataDir, 'run.json'));
  const secrets = readJson<{ ADMIN_TOKEN?: string }>(path.join(dataDir, 'secrets.json'));
  const offset = Number(values['port-offset'] ?? process.env.WHETSTONE_PORT_OFFSET ?? 0);
  const running = run?.pid !== undefined && isAlive(run.pid) ? run.addrs?.KEY_BILLING_ADDR : undefined;
  const keyBilling = DEPLOYABLES.find((d) => d.name === 'key-billing')!.port;
  process.env.KEY_BILLING_ADDR ??= running ?? `127.0.0.1:${keyBilling + (Number.isInteger(offset) ? offset : 0)}`;
  if (secrets?.ADMIN_TOKEN) process.env.ADMIN_TOKEN ??= secrets.ADMIN_TOKEN;
  return rest;
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
