/**
 * Validates rendered manifests against the Kubernetes OpenAPI schemas bundled
 * in kubernetes-models. Those schemas do not reject unknown fields, so the
 * hardening this chart promises is asserted explicitly as well.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

type Manifest = { apiVersion: string; kind: string; metadata?: { name?: string }; spec?: Record<string, unknown> };

async function validator(apiVersion: string, kind: string): Promise<(obj: Manifest) => void> {
  const mod = (await import(`kubernetes-models/${apiVersion}/${kind}`)) as Record<
    string,
    new (o: Manifest) => { validate(): void }
  >;
  const Model = mod[kind] ?? mod.default;
  if (!Model) throw new Error(`no schema for ${apiVersion} ${kind}`);
  return (obj) => new Model(obj).validate();
}

function assertHardened(m: Manifest, problems: string[]): void {
  const podSpec = (
    m.kind === 'Deployment' || m.kind === 'Job'
      ? (m.spec?.template as { spec?: Record<string, unknown> })?.spec
      : undefined
  ) as
    | {
        securityContext?: { runAsNonRoot?: boolean };
        containers?: {
          name: string;
          securityContext?: {
            readOnlyRootFilesystem?: boolean;
            allowPrivilegeEscalation?: boolean;
            capabilities?: { drop?: string[] };
          };
        }[];
      }
    | undefined;
  if (!podSpec) return;
  const where = `${m.kind}/${m.metadata?.name}`;
  if (podSpec.securityContext?.runAsNonRoot !== true) problems.push(`${where}: pod must set runAsNonRoot`);
  for (const c of podSpec.containers ?? []) {
    const sc = c.securityContext ?? {};
    if (sc.readOnlyRootFilesystem !== true) problems.push(`${where}/${c.name}: readOnlyRootFilesystem must be true`);
    if (sc.allowPrivilegeEscalation !== false)
      problems.push(`${where}/${c.name}: allowPrivilegeEscalation must be false`);
    if (!sc.capabilities?.drop?.includes('ALL')) problems.push(`${where}/${c.name}: capabilities must drop ALL`);
  }
}

/** Files after `--schema-only` are third-party dev infrastructure: schema checks, no hardening rules. */
async function main(args: string[]): Promise<number> {
  const split = args.indexOf('--schema-only');
  const ours = split === -1 ? args : args.slice(0, split);
  const files = split === -1 ? args : [...ours, ...args.slice(split + 1)];
  const problems: string[] = [];
  let count = 0;
  for (const file of files) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const m = doc.toJSON() as Manifest | null;
      if (!m) continue;
      count++;
      try {
        (await validator(m.apiVersion, m.kind))(m);
      } catch (err) {
        problems.push(`${file}: ${m.kind}/${m.metadata?.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (ours.includes(file)) assertHardened(m, problems);
    }
  }
  if (problems.length > 0) {
    process.stderr.write(`manifest validation failed:\n${problems.map((p) => `  - ${p}`).join('\n')}\n`);
    return 1;
  }
  process.stdout.write(`validated ${count} manifests against the Kubernetes schemas\n`);
  return 0;
}

main(process.argv.slice(2)).then((code) => process.exit(code));
