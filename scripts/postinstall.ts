/**
 * `pnpm install`'s last step (the root package.json's postinstall). Each argument is one step, run in order:
 * `<script> [args…]` runs that script in every workspace package that has it, four at a time (the Prisma
 * clients); `<package> <script> [args…]` in that package alone (the ML assets). Each runs as `pnpm run` in its
 * package. A step that fails prints its output, then one line naming the package, the script and the command
 * that reruns it; the others still run, and the install fails.
 *
 *   node --require tsx/cjs scripts/postinstall.ts prisma:generate '@whetstone/ml build:assets --glove-if-missing'
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

interface Step {
  /** The package's name, e.g. `@whetstone/dataset`. */
  name: string;
  dir: string;
  script: string;
  args: string[];
}

const ROOT = process.cwd();
const CONCURRENCY = 4;

/** The workspace's package directories: pnpm-workspace.yaml's `packages:` entries (`dir/*` or `dir`). */
function workspaceDirs(): string[] {
  const lines = readFileSync(path.join(ROOT, 'pnpm-workspace.yaml'), 'utf8').split('\n');
  const start = lines.findIndex((l) => /^packages:\s*$/.test(l));
  const entries: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^\s+-\s+["']?([^"'#\s]+)["']?/.exec(line);
    if (!m) break;
    entries.push(m[1]!);
  }
  return entries.flatMap((entry) => {
    if (!entry.endsWith('/*')) return [path.join(ROOT, entry)];
    const parent = path.join(ROOT, entry.slice(0, -2));
    if (!existsSync(parent)) return [];
    return readdirSync(parent, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => path.join(parent, d.name));
  });
}

/** Every package that has `script`, optionally only the one named `only`. */
function stepsFor(script: string, args: string[], only?: string): Step[] {
  return workspaceDirs().flatMap((dir) => {
    const file = path.join(dir, 'package.json');
    if (!existsSync(file)) return [];
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; scripts?: Record<string, string> };
    if (!pkg.scripts?.[script] || (only && pkg.name !== only)) return [];
    return [{ name: pkg.name ?? path.relative(ROOT, dir), dir, script, args }];
  });
}

/** The command that reruns one step from the repository root. */
const rerun = (step: Step) => ['pnpm', '--filter', step.name, 'run', step.script, ...step.args].join(' ');

/** Runs `pnpm run <script>` in the step's package; resolves with its exit code and everything it printed. */
function run(step: Step): Promise<{ code: number; output: string }> {
  // pnpm sets npm_execpath to itself while it runs lifecycle scripts; `pnpm` from PATH otherwise.
  const pnpm = process.env.npm_execpath;
  const [command, prefix] = pnpm && /\.c?js$/.test(pnpm) ? [process.execPath, [pnpm]] : ['pnpm', []];
  return new Promise((resolve) => {
    const child = spawn(command, [...prefix, 'run', step.script, ...step.args], { cwd: step.dir });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    child.once('error', (err) => resolve({ code: 127, output: `${output}${err.message}\n` }));
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), output }));
  });
}

/** Runs the steps, `limit` at a time; returns the ones that failed. */
async function runAll(steps: Step[], limit: number): Promise<Step[]> {
  const failed: Step[] = [];
  const queue = [...steps];
  const worker = async () => {
    for (let step = queue.shift(); step; step = queue.shift()) {
      const t0 = Date.now();
      const { code, output } = await run(step);
      const where = path.relative(ROOT, step.dir) || '.';
      if (code === 0) {
        process.stdout.write(`${where} ${step.script}: done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
        continue;
      }
      failed.push(step);
      process.stderr.write(output.replace(/^(?=.)/gm, `${where} ${step.script}| `));
      process.stderr.write(
        `\npostinstall: ${step.script} failed in ${step.name} (${where}, exit code ${code}).\n` +
          `  Rerun it from the repository root with: ${rerun(step)}\n\n`,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, steps.length) }, worker));
  return failed;
}

/** One command-line step: `<script> [args…]` (every package that has it) or `<@scope/package> <script> [args…]`. */
function parseStep(arg: string): { only?: string; script: string; args: string[] } {
  const [first, ...rest] = arg.trim().split(/\s+/);
  if (first?.startsWith('@') && rest.length) return { only: first, script: rest[0]!, args: rest.slice(1) };
  return { script: first!, args: rest };
}

async function main(argv: string[]): Promise<number> {
  const failed: Step[] = [];
  for (const { only, script, args } of argv.map(parseStep)) {
    const steps = stepsFor(script, args, only);
    if (only && steps.length === 0) {
      process.stderr.write(`postinstall: no workspace package ${only} has a ${script} script\n`);
      return 1;
    }
    failed.push(...(await runAll(steps, only ? 1 : CONCURRENCY)));
  }
  if (failed.length === 0) return 0;
  process.stderr.write(
    `postinstall: ${failed.length} step(s) failed: ${failed.map((s) => `${s.name} ${s.script}`).join(', ')}.\n` +
      '  Fix the cause shown above, then rerun each with the command given, or run `pnpm install` again.\n',
  );
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`postinstall failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
