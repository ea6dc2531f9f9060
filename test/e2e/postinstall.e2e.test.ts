import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT = path.resolve(__dirname, '..', '..', 'scripts', 'postinstall.ts');

/** A workspace laid out as this one is, whose packages' scripts succeed or fail as told. */
function workspace(scripts: Record<string, Record<string, string>>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'postinstall-'));
  writeFileSync(path.join(root, 'pnpm-workspace.yaml'), 'packages:\n  - packages/*\n  - services/*\n');
  writeFileSync(path.join(root, 'package.json'), '{"name":"ws","private":true}');
  for (const [dir, s] of Object.entries(scripts)) {
    mkdirSync(path.join(root, dir), { recursive: true });
    writeFileSync(
      path.join(root, dir, 'package.json'),
      JSON.stringify({ name: `@whetstone/${path.basename(dir)}`, scripts: s }),
    );
  }
  return root;
}

/** The root package.json's postinstall (its first two steps), run in `root` as `pnpm install` runs it there. */
async function postinstall(root: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const steps = ['prisma:generate', '@whetstone/ml build:assets --glove-if-missing'];
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--require', require.resolve('tsx/cjs'), SCRIPT, ...steps],
      {
        cwd: root,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('the install step (pnpm install runs scripts/postinstall.ts)', () => {
  const roots: string[] = [];
  afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

  it('when one package fails to generate its client, then the install fails naming the package, the step and the command that reruns it', async () => {
    const root = workspace({
      'services/dataset': { 'prisma:generate': 'echo generated' },
      'services/key-billing': { 'prisma:generate': 'echo "schema.prisma: error P1012" >&2; exit 3' },
      'packages/ml': { 'build:assets': 'echo assets' },
    });
    roots.push(root);
    const { code, stdout, stderr } = await postinstall(root);
    expect(code).toBe(1);
    expect(stderr).toContain('services/key-billing prisma:generate| schema.prisma: error P1012');
    expect(stderr).toContain(
      'postinstall: prisma:generate failed in @whetstone/key-billing (services/key-billing, exit code 3).\n' +
        '  Rerun it from the repository root with: pnpm --filter @whetstone/key-billing run prisma:generate\n',
    );
    // The other steps still ran: one failure does not hide another.
    expect(stdout).toMatch(/services\/dataset prisma:generate: done/);
    expect(stdout).toMatch(/packages\/ml build:assets: done/);
  });

  it('when the ML assets fail to build, then the message names @whetstone/ml and the build:assets command', async () => {
    const root = workspace({
      'services/dataset': { 'prisma:generate': 'echo generated' },
      'packages/ml': { 'build:assets': 'exit 2' },
    });
    roots.push(root);
    const { code, stderr } = await postinstall(root);
    expect(code).toBe(1);
    expect(stderr).toContain(
      '  Rerun it from the repository root with: pnpm --filter @whetstone/ml run build:assets --glove-if-missing\n',
    );
  });

  it('when every step succeeds, then it exits 0 with one line per step', async () => {
    const root = workspace({
      'services/dataset': { 'prisma:generate': 'echo generated' },
      'packages/ml': { 'build:assets': 'echo assets' },
    });
    roots.push(root);
    const { code, stdout, stderr } = await postinstall(root);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/^services\/dataset prisma:generate: done in \d+\.\d s$/),
      expect.stringMatching(/^packages\/ml build:assets: done in \d+\.\d s$/),
    ]);
  });
});
