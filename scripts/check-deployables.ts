/**
 * `pnpm test` step: the chart's values and the dev values agree with
 * deploy/deployables.json, the one list of deployables (the Tiltfile and
 * `pnpm start` read it directly). Prints every mismatch, exits 1 on any.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { DEPLOYABLES, type Deployable } from './lib/deployables';

const ROOT = path.resolve(__dirname, '..');

interface ServiceValues {
  kind?: string;
  port?: number;
  metricsPort?: number;
  schema?: string;
  migrate?: boolean;
}

function servicesIn(file: string): Record<string, ServiceValues> {
  const values = parse(readFileSync(path.join(ROOT, file), 'utf8')) as { services?: Record<string, ServiceValues> };
  return values.services ?? {};
}

function mismatches(file: string, d: Deployable, v: ServiceValues): string[] {
  const out: string[] = [];
  const expect = (field: keyof ServiceValues, want: unknown) => {
    if (v[field] !== undefined && v[field] !== want)
      out.push(
        `${file}: services.${d.name}.${field} is ${String(v[field])}, deploy/deployables.json says ${String(want)}`,
      );
  };
  expect('kind', d.kind);
  if (d.kind !== 'worker') expect('port', d.port);
  expect('metricsPort', d.metricsPort);
  expect('schema', d.schema);
  expect('migrate', d.schema !== undefined);
  return out;
}

function check(): string[] {
  const present = DEPLOYABLES.filter((d) => existsSync(path.join(ROOT, 'services', d.name, 'src', 'main.ts')));
  const problems: string[] = [];
  const chart = servicesIn('charts/whetstone/values.yaml');
  for (const d of present) {
    if (!chart[d.name]) problems.push(`charts/whetstone/values.yaml: no services.${d.name} entry`);
    else if (!chart[d.name]!.kind) problems.push(`charts/whetstone/values.yaml: services.${d.name}.kind is missing`);
  }
  for (const name of Object.keys(chart)) {
    if (!present.some((d) => d.name === name))
      problems.push(
        `charts/whetstone/values.yaml: services.${name} is not a built deployable in deploy/deployables.json`,
      );
  }
  for (const file of ['charts/whetstone/values.yaml', 'deploy/dev/values-dev.yaml']) {
    const services = servicesIn(file);
    for (const d of present) if (services[d.name]) problems.push(...mismatches(file, d, services[d.name]!));
    for (const name of Object.keys(services)) {
      if (file !== 'charts/whetstone/values.yaml' && !present.some((d) => d.name === name))
        problems.push(`${file}: services.${name} is not a built deployable`);
    }
  }
  return problems;
}

const problems = check();
if (problems.length) {
  process.stderr.write(`${problems.join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(`chart values agree with deploy/deployables.json (${DEPLOYABLES.length} deployables)\n`);
