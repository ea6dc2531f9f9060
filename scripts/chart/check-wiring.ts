/**
 * `scripts/check-chart.sh` step: the rendered chart is wired the way the code
 * is. Reads the rendered manifests given as arguments (the first is the
 * default render) and checks, printing every problem:
 *
 * - each gRPC service's `callers` in deploy/deployables.json are exactly the
 *   deployables whose src/config.ts reads its `<SVC>_ADDR`, and the chart's
 *   values list the same callers;
 * - every Deployment has a NetworkPolicy selecting its pods; only the gateway's
 *   HTTP port is open without a `from`; a gRPC port admits exactly its callers;
 * - no secret reference is optional;
 * - an Ingress routes every public path prefix of the gateway and none of
 *   /livez, /readyz and /metrics.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { DEPLOYABLES } from '../lib/deployables';

const ROOT = path.resolve(__dirname, '../..');
const PROBES = ['/livez', '/readyz', '/metrics'];

type Labels = Record<string, string>;
interface Peer {
  podSelector?: { matchLabels?: Labels };
  namespaceSelector?: unknown;
  ipBlock?: unknown;
}
interface Manifest {
  kind: string;
  metadata: { name: string };
  spec?: {
    podSelector?: { matchLabels?: Labels };
    ingress?: { ports?: { port: string | number }[]; from?: Peer[] }[] | null;
    selector?: { matchLabels?: Labels };
    rules?: { http?: { paths?: { path: string; pathType: string }[] } }[];
    template?: { metadata?: { labels?: Labels }; spec?: unknown };
  };
}

interface DeployableEntry {
  name: string;
  kind: string;
  addrVar?: string;
  callers?: string[];
}

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const built = (name: string) => existsSync(path.join(ROOT, 'services', name, 'src', 'main.ts'));
const sameSet = (a: string[], b: string[]) => a.length === b.length && [...a].sort().join() === [...b].sort().join();

/** Callers derived from the code: the deployables whose config reads the service's address variable. */
function checkCallers(problems: string[]): void {
  const entries = (JSON.parse(read('deploy/deployables.json')) as { deployables: DeployableEntry[] }).deployables;
  const values = parse(read('charts/whetstone/values.yaml')) as { services: Record<string, { callers?: string[] }> };
  for (const svc of entries.filter((d) => d.kind === 'grpc' && built(d.name))) {
    const derived = DEPLOYABLES.filter(
      (c) =>
        c.name !== svc.name &&
        built(c.name) &&
        svc.addrVar !== undefined &&
        new RegExp(`\\b${svc.addrVar}\\b`).test(read(`services/${c.name}/src/config.ts`)),
    ).map((c) => c.name);
    if (!sameSet(svc.callers ?? [], derived))
      problems.push(
        `deploy/deployables.json: ${svc.name}.callers is [${(svc.callers ?? []).join(', ')}], but ${svc.addrVar} is read by [${derived.join(', ')}]`,
      );
    const chart = values.services[svc.name]?.callers ?? [];
    if (!sameSet(chart, svc.callers ?? []))
      problems.push(
        `charts/whetstone/values.yaml: services.${svc.name}.callers [${chart.join(', ')}] differs from deploy/deployables.json`,
      );
  }
}

const selects = (selector: Labels | undefined, labels: Labels | undefined) =>
  selector !== undefined && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

function checkNetworkPolicies(file: string, manifests: Manifest[], problems: string[]): void {
  const policies = manifests.filter((m) => m.kind === 'NetworkPolicy');
  const deployments = manifests.filter((m) => m.kind === 'Deployment');
  const nameOf = (labels: Labels | undefined) => labels?.['app.kubernetes.io/name'] ?? '?';
  const callers = new Map(
    (JSON.parse(read('deploy/deployables.json')) as { deployables: DeployableEntry[] }).deployables.map((d) => [
      d.name,
      d,
    ]),
  );
  for (const dep of deployments) {
    const labels = dep.spec?.template?.metadata?.labels;
    const name = nameOf(labels);
    const mine = policies.filter((p) => selects(p.spec?.podSelector?.matchLabels, labels));
    if (mine.length !== 1) {
      problems.push(`${file}: Deployment/${dep.metadata.name} is selected by ${mine.length} NetworkPolicies, not 1`);
      continue;
    }
    const entry = callers.get(name);
    for (const rule of mine[0]!.spec?.ingress ?? []) {
      const ports = (rule.ports ?? []).map((p) => String(p.port));
      if (ports.length === 0)
        problems.push(`${file}: NetworkPolicy/${mine[0]!.metadata.name} has a rule for every port`);
      if (!rule.from && !(entry?.kind === 'http' && sameSet(ports, ['http'])))
        problems.push(`${file}: NetworkPolicy/${mine[0]!.metadata.name} opens ${ports.join(',')} to every source`);
      if (ports.includes('grpc')) {
        const admitted = (rule.from ?? []).map((peer) => {
          if (!peer.podSelector || peer.namespaceSelector || peer.ipBlock) return '<outside the release>';
          return nameOf(peer.podSelector.matchLabels);
        });
        if (!sameSet(admitted, entry?.callers ?? []))
          problems.push(
            `${file}: NetworkPolicy/${mine[0]!.metadata.name} admits [${admitted.join(', ')}] on grpc, callers are [${(entry?.callers ?? []).join(', ')}]`,
          );
      }
    }
  }
}

function checkSecretsRequired(file: string, text: string, problems: string[]): void {
  if (/^\s*optional: true\s*$/m.test(text)) problems.push(`${file}: a secret reference is optional`);
}

/** The gateway's public path prefixes: the first segment of every route path its HTTP code declares. */
function gatewayPrefixes(): string[] {
  const dir = path.join(ROOT, 'services/gateway/src');
  const files = [
    path.join(dir, 'app.ts'),
    ...readdirSync(path.join(dir, 'transport/http'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => path.join(dir, 'transport/http', f)),
  ];
  const prefixes = new Set<string>();
  for (const f of files)
    for (const m of readFileSync(f, 'utf8').matchAll(/['`](\/[A-Za-z0-9._-]+)/g)) prefixes.add(m[1]!);
  return [...prefixes].filter((p) => !PROBES.includes(p)).sort();
}

function checkIngress(file: string, manifests: Manifest[], problems: string[]): void {
  const public_ = gatewayPrefixes();
  for (const ing of manifests.filter((m) => m.kind === 'Ingress')) {
    const paths = (ing.spec?.rules ?? []).flatMap((r) => r.http?.paths ?? []).map((p) => p.path);
    for (const probe of PROBES)
      if (paths.some((p) => p === probe || p.startsWith(`${probe}/`)))
        problems.push(`${file}: Ingress/${ing.metadata.name} routes ${probe}`);
    for (const prefix of public_)
      if (!paths.includes(prefix)) problems.push(`${file}: Ingress/${ing.metadata.name} does not route ${prefix}`);
  }
}

function main(files: string[]): number {
  const problems: string[] = [];
  checkCallers(problems);
  let ingresses = 0;
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const manifests = parseAllDocuments(text)
      .map((d) => d.toJSON() as Manifest | null)
      .filter((m): m is Manifest => m !== null);
    ingresses += manifests.filter((m) => m.kind === 'Ingress').length;
    checkNetworkPolicies(path.basename(file), manifests, problems);
    checkSecretsRequired(path.basename(file), text, problems);
    checkIngress(path.basename(file), manifests, problems);
  }
  if (ingresses === 0) problems.push('no values file renders an Ingress, so its paths are not checked');
  if (problems.length > 0) {
    process.stderr.write(`chart wiring check failed:\n${problems.map((p) => `  - ${p}`).join('\n')}\n`);
    return 1;
  }
  process.stdout.write(
    'chart wiring: callers match the code, NetworkPolicies cover every Deployment, secrets required, Ingress routes only the public paths\n',
  );
  return 0;
}

process.exit(main(process.argv.slice(2)));
