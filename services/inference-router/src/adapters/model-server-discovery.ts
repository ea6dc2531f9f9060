import { lookup } from 'node:dns/promises';
import type { Logger } from '@whetstone/telemetry';

/** Every address a host name resolves to (A and AAAA records). */
export type ResolveAll = (host: string) => Promise<string[]>;

const resolveAll: ResolveAll = async (host) => (await lookup(host, { all: true })).map((a) => a.address);

/**
 * The model-server replicas named by MODEL_SERVER_ADDRS: a `host:port` entry is one replica as written; a
 * `dns:///host:port` entry is one replica per address the name resolves to (a Kubernetes headless Service
 * returns one per ready pod). A name that does not resolve contributes nothing (the Service may have no ready
 * pod yet). The result is sorted and free of duplicates, so an unchanged fleet compares equal.
 */
export async function resolveModelServers(targets: string[], resolve: ResolveAll = resolveAll): Promise<string[]> {
  const out = new Set<string>();
  for (const target of targets) {
    const m = /^dns:\/\/\/(.+):(\d+)$/.exec(target);
    if (!m) {
      out.add(target);
      continue;
    }
    const [, host, port] = m as unknown as [string, string, string];
    const addresses = await resolve(host).catch(() => [] as string[]);
    for (const a of addresses) out.add(a.includes(':') ? `[${a}]:${port}` : `${a}:${port}`);
  }
  return [...out].sort();
}

/**
 * Resolve the targets again every `intervalMs` and call `onChange` when the set of replicas changed (only
 * `dns:///` targets can change). Failures keep the last known set.
 */
export function watchModelServers(
  targets: string[],
  current: string[],
  onChange: (addrs: string[]) => void,
  options: { intervalMs: number; logger: Logger; resolve?: ResolveAll },
): { stop(): void } {
  if (!targets.some((t) => t.startsWith('dns:///'))) return { stop: () => undefined };
  let known = current.join(',');
  const timer = setInterval(() => {
    void resolveModelServers(targets, options.resolve).then((addrs) => {
      if (addrs.join(',') === known || addrs.length === 0) return;
      options.logger.info({ model_servers: addrs }, 'model-server replicas changed');
      known = addrs.join(',');
      onChange(addrs);
    });
  }, options.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
