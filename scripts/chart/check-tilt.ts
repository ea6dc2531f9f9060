/**
 * `scripts/check-chart.sh` step: the Tiltfile and the image build cover what
 * the chart runs. Arguments: the default render, then the render with
 * deploy/dev/values-dev.yaml. Runs the Tiltfile with stubbed built-ins
 * (tilt-dry-run.py) and `deploy/build-images.sh --print`, then checks, printing
 * every problem:
 *
 * - Tilt's workloads are exactly the deployables, their migration Jobs and the
 *   dev infrastructure; every Deployment and Job of the dev render has one;
 * - every image of the dev render is built by the Tiltfile, every image of the
 *   default render by deploy/build-images.sh;
 * - Tilt overrides no command (the Jobs keep theirs), loads no extension, and
 *   live-updates only into folders the dev render mounts writable;
 * - no host port is forwarded twice or also mapped by the kind config; the
 *   gateway and MinIO are forwarded;
 * - the dev infrastructure images are pinned by digest, as in images.env.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { DEPLOYABLES } from '../lib/deployables';

const ROOT = path.resolve(__dirname, '../..');
const INFRA = ['postgres', 'redis', 'kafka', 'minio'];

interface TiltImage {
  ref: string;
  target: string;
  build_args: Record<string, string>;
  live_update: ({ sync: [string, string] } | { fall_back_on: string[] } | { run: string })[];
  entrypoint: unknown;
  options: string[];
}
interface Declared {
  images: TiltImage[];
  resources: { name: string; resource_deps: string[]; port_forwards: string[] }[];
  local_resources: { name: string }[];
  k8s_yaml: unknown[];
  helm: { chart: string; values: string[]; set: string[] }[];
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  volumeMounts?: { name: string; mountPath: string }[];
}
interface Workload {
  kind: string;
  metadata: { name: string };
  spec?: { template?: { spec?: { containers?: Container[]; initContainers?: Container[] } } };
}

const built = DEPLOYABLES.filter((d) => existsSync(path.join(ROOT, 'services', d.name, 'src', 'main.ts')));
const migrating = built.filter((d) => d.schema !== undefined);
const same = (a: string[], b: string[]) => [...a].sort().join('\n') === [...b].sort().join('\n');
const diff = (what: string, got: string[], want: string[]) =>
  `${what}: missing [${want.filter((x) => !got.includes(x)).join(', ')}], unexpected [${got.filter((x) => !want.includes(x)).join(', ')}]`;
const repoOf = (image: string) => image.replace(/@sha256:.*$/, '').replace(/:[^/:]*$/, '');

function workloads(file: string): Workload[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJSON() as Workload | null)
    .filter((m): m is Workload => m !== null && (m.kind === 'Deployment' || m.kind === 'Job'));
}
const containersOf = (w: Workload) => [
  ...(w.spec?.template?.spec?.initContainers ?? []),
  ...(w.spec?.template?.spec?.containers ?? []),
];

/** Tilt's workloads are the deployables, their migration Jobs and the infrastructure, and cover the dev render. */
function checkWorkloads(tilt: Declared, dev: Workload[], problems: string[]): void {
  const expected = [
    ...built.map((d) => `whetstone-${d.name}`),
    ...migrating.map((d) => `whetstone-${d.name}-migrate`),
    ...INFRA,
  ];
  const declared = tilt.resources.map((r) => r.name);
  if (!same(declared, expected)) problems.push(diff("Tiltfile's k8s_resources", declared, expected));
  for (const w of dev)
    if (!declared.includes(w.metadata.name))
      problems.push(`Tiltfile: no k8s_resource for ${w.kind}/${w.metadata.name} of the dev render`);
  for (const r of tilt.resources)
    for (const dep of r.resource_deps)
      if (!declared.includes(dep) && !tilt.local_resources.some((l) => l.name === dep))
        problems.push(`Tiltfile: ${r.name} waits for ${dep}, which is not a resource`);
}

/** Tilt builds what the dev render runs; build-images.sh what the default render runs. Returns the image count. */
function checkImages(tilt: Declared, dev: Workload[], defaultRender: string, problems: string[]): number {
  const tiltRefs = tilt.images.map((i) => i.ref);
  const wantTilt = [...built.map((d) => `whetstone/${d.name}`), 'whetstone/migrate'];
  if (!same(tiltRefs, wantTilt)) problems.push(diff("Tiltfile's docker_builds", tiltRefs, wantTilt));
  for (const w of dev)
    for (const c of containersOf(w))
      if (!tiltRefs.includes(repoOf(c.image)))
        problems.push(`Tiltfile: ${w.kind}/${w.metadata.name} runs ${c.image}, which Tilt does not build`);
  const imageBuild = execFileSync('bash', ['deploy/build-images.sh', '--print'], { cwd: ROOT, encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => /-t (\S+)/.exec(line)?.[1] ?? line);
  for (const w of workloads(defaultRender))
    for (const c of containersOf(w))
      if (!imageBuild.includes(c.image))
        problems.push(`deploy/build-images.sh: ${w.kind}/${w.metadata.name} runs ${c.image}, which is not built`);
  return imageBuild.length;
}

/** Tilt keeps the chart's commands, and live-updates only into writable folders. */
function checkLiveUpdate(tilt: Declared, dev: Workload[], problems: string[]): void {
  for (const image of tilt.images) {
    if (image.entrypoint !== null || image.options.includes('entrypoint'))
      problems.push(`Tiltfile: ${image.ref} overrides the entrypoint, which Tilt applies to the migration Jobs too`);
    const wantTarget = image.ref === 'whetstone/migrate' ? 'migrate' : 'dev';
    if (image.target !== wantTarget) problems.push(`Tiltfile: ${image.ref} builds target ${image.target}`);
    const workload = dev.find(
      (w) => w.kind === 'Deployment' && w.metadata.name === `whetstone-${image.build_args.SERVICE}`,
    );
    const writable = (workload?.spec?.template?.spec?.containers ?? []).flatMap((c) =>
      (c.volumeMounts ?? []).map((m) => m.mountPath),
    );
    for (const step of image.live_update)
      if ('sync' in step && !writable.some((m) => step.sync[1] === m || step.sync[1].startsWith(`${m}/`)))
        problems.push(
          `Tiltfile: ${image.ref} syncs into ${step.sync[1]}, which the dev render does not mount writable`,
        );
  }
  for (const job of dev.filter((w) => w.kind === 'Job'))
    if (!job.spec?.template?.spec?.containers?.every((c) => c.command && c.command.length > 0))
      problems.push(`dev render: Job/${job.metadata.name} has no command of its own`);
  if (tilt.helm.length !== 1 || !same(tilt.helm[0]!.values, ['deploy/dev/values-dev.yaml']))
    problems.push('Tiltfile: the chart must be rendered once, with deploy/dev/values-dev.yaml (the file checked here)');
}

/** No host port twice, none also mapped by kind; the gateway and MinIO are forwarded. */
function checkPorts(tilt: Declared, problems: string[]): void {
  const forwards = tilt.resources.flatMap((r) => r.port_forwards.map((f) => ({ r: r.name, host: f.split(':')[0]! })));
  const kind = parse(readFileSync(path.join(ROOT, 'deploy/dev/kind-config.yaml'), 'utf8')) as {
    nodes?: { extraPortMappings?: { hostPort: number }[] }[];
  };
  const mapped = (kind.nodes ?? []).flatMap((n) => (n.extraPortMappings ?? []).map((m) => String(m.hostPort)));
  const seen = new Map<string, string>();
  for (const f of forwards) {
    if (seen.has(f.host)) problems.push(`Tiltfile: host port ${f.host} forwarded by ${seen.get(f.host)} and ${f.r}`);
    if (mapped.includes(f.host)) problems.push(`kind-config.yaml maps host port ${f.host}, which ${f.r} forwards`);
    seen.set(f.host, f.r);
  }
  const gateway = built.find((d) => d.kind === 'http');
  if (gateway && !forwards.some((f) => f.r === `whetstone-${gateway.name}` && f.host === String(gateway.port)))
    problems.push(`Tiltfile: the gateway is not forwarded to localhost:${gateway.port}`);
  if (!forwards.some((f) => f.r === 'minio' && f.host === '9000'))
    problems.push('Tiltfile: MinIO is not forwarded to localhost:9000 (presigned URLs name it)');
}

/** Dev infrastructure pinned by digest, the same as images.env lists. */
function checkInfra(problems: string[]): void {
  const pinned = readFileSync(path.join(ROOT, 'deploy/dev/images.env'), 'utf8')
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => l.slice(l.indexOf('=') + 1));
  const infraImages = workloads(path.join(ROOT, 'deploy/dev/infra.yaml')).flatMap((w) =>
    containersOf(w).map((c) => c.image),
  );
  for (const image of infraImages)
    if (!/@sha256:[0-9a-f]{64}$/.test(image)) problems.push(`deploy/dev/infra.yaml: ${image} is not pinned by digest`);
  if (!same(infraImages, pinned))
    problems.push(diff('deploy/dev/infra.yaml images against images.env', infraImages, pinned));
}

function main(defaultRender: string, devRender: string): number {
  const problems: string[] = [];
  const tilt = JSON.parse(
    execFileSync('python3', [path.join(__dirname, 'tilt-dry-run.py'), 'Tiltfile'], { cwd: ROOT, encoding: 'utf8' }),
  ) as Declared;
  const dev = workloads(devRender);
  checkWorkloads(tilt, dev, problems);
  const imageCount = checkImages(tilt, dev, defaultRender, problems);
  checkLiveUpdate(tilt, dev, problems);
  checkPorts(tilt, problems);
  checkInfra(problems);
  if (problems.length > 0) {
    process.stderr.write(`Tilt and image build check failed:\n${problems.map((p) => `  - ${p}`).join('\n')}\n`);
    return 1;
  }
  process.stdout.write(
    `Tiltfile: ${tilt.resources.length} resources and ${tilt.images.length} images match the deployables and the dev ` +
      `render; deploy/build-images.sh builds all ${imageCount} images of the default render\n`,
  );
  return 0;
}

const [defaultRender, devRender] = process.argv.slice(2);
if (!defaultRender || !devRender) throw new Error('usage: check-tilt.ts <default render> <dev render>');
process.exit(main(defaultRender, devRender));
