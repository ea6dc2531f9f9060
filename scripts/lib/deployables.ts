/**
 * Every deployable, as declared once in deploy/deployables.json (the Tiltfile
 * reads the same file; pnpm test checks the chart values against it). Entries
 * whose `services/<name>/src/main.ts` does not exist yet are skipped.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface Deployable {
  /** Folder under services/ and the prefix of its log lines. */
  name: string;
  /** Workspace package name, for `pnpm --filter`. */
  pkg: string;
  /** grpc: a gRPC server; http: the public gateway; worker: a gRPC client only (trainers). */
  kind: 'grpc' | 'http' | 'worker';
  /** Its own Postgres schema, when it owns one; migrations run before start. */
  schema?: string;
  /** Listening port (HTTP for the gateway, gRPC otherwise); 0 for pure clients. */
  port: number;
  /** Prometheus port for gRPC services and workers (the gateway serves /metrics itself). */
  metricsPort?: number;
  /** The `<SVC>_ADDR` variable other services use to reach it. */
  addrVar?: string;
}

export const DEPLOYABLES_FILE = path.resolve(__dirname, '../../deploy/deployables.json');

export const DEPLOYABLES: Deployable[] = (
  JSON.parse(readFileSync(DEPLOYABLES_FILE, 'utf8')) as { deployables: Omit<Deployable, 'pkg'>[] }
).deployables.map((d) => ({ ...d, pkg: `@whetstone/${d.name}` }));
