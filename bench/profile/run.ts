/**
 * Summarises V8 CPU profiles (`pnpm start --cpu-prof <dir>`, or WHETSTONE_CPU_PROF_DIR for the benches that
 * start the system): for each service, where its CPU time went, by package and by function (self time).
 *
 *   pnpm --filter @whetstone/bench bench:profile <dir> [--top 15]
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '15' }, help: { type: 'boolean', short: 'h' } },
});
if (values.help || positionals.length !== 1) {
  console.log('usage: bench:profile <dir with .cpuprofile files, one folder per service> [--top N]');
  process.exit(values.help ? 0 : 2);
}

/** Where a frame's code lives: a package, a service, node's internals, or V8 (GC, idle, program). */
function ownerOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/(services|packages)\/([^/]+)\//.exec(url);
  return own ? `${own[1]}/${own[2]}` : path.basename(url);
}

function summarise(file: string, top: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self]
    .filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)')
    .reduce((a, [, t]) => a + t, 0);
  const busy = total - idle;
  const add = (m: Map<string, number>, k: string, t: number) => m.set(k, (m.get(k) ?? 0) + t);
  const owners = new Map<string, number>();
  const fns = new Map<string, number>();
  for (const [id, t] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    add(owners, ownerOf(url, functionName), t);
    add(fns, `${functionName || '(anonymous)'} ${url ? `${path.basename(url)}:${lineNumber + 1}` : ''}`.trim(), t);
  }
  const pct = (t: number) => `${((100 * t) / Math.max(1, busy)).toFixed(1).padStart(5)} %`;
  const rows = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, t]) => `    ${pct(t)}  ${k}`)
      .join('\n');
  console.log(
    `\n${path.relative(positionals[0]!, file)}: ${(busy / 1e6).toFixed(1)} s on CPU of ${(total / 1e6).toFixed(1)} s`,
  );
  console.log(`  by package (self time, share of CPU time):\n${rows(owners)}`);
  console.log(`  by function:\n${rows(fns)}`);
}

function profilesIn(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? profilesIn(full) : name.endsWith('.cpuprofile') ? [full] : [];
  });
}

for (const file of profilesIn(path.resolve(positionals[0]!))) summarise(file, Number(values.top));
