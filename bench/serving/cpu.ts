/**
 * Where the CPU of a load run goes: each service's `process_cpu_seconds_total` (prom-client's default metric on its
 * /metrics), every Postgres process's utime + stime from /proc, and the load generator itself, before and after the
 * run, divided by the calls it answered. On a machine whose cores all these processes share, this says which
 * process a call costs the most, and why a path with more processes answers fewer calls per second.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { DEPLOYABLES } from '../../scripts/lib/deployables';

type Sample = Map<string, number>;

const TICKS_PER_SECOND = 100;

/** CPU seconds of every process named `postgres` (the server the system uses; one per connection). */
function postgresSeconds(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
      const fields = stat.slice(close + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
    } catch {
      // the process ended between the listing and the read
    }
  }
  return ticks / TICKS_PER_SECOND;
}

async function sample(portOffset: number): Promise<Sample> {
  const out: Sample = new Map();
  for (const d of DEPLOYABLES) {
    const port = d.metricsPort ?? (d.kind === 'http' ? d.port : 0);
    if (!port) continue;
    const text = await fetch(`http://127.0.0.1:${port + portOffset}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
    const m = /^process_cpu_seconds_total (\S+)/m.exec(text);
    if (m) out.set(d.name, Number(m[1]));
  }
  out.set('postgres', postgresSeconds());
  const own = process.cpuUsage();
  out.set('load generator', (own.user + own.system) / 1e6);
  return out;
}

export interface CpuPerCall {
  /** CPU ms per answered call by process, largest first. */
  byProcess: [string, number][];
  totalMs: number;
}

/** Runs `run` (which returns how many calls it answered) and reports the CPU each process spent per call. */
export async function cpuPerCall<T extends { requests: number }>(
  portOffset: number,
  run: () => Promise<T>,
): Promise<{ result: T; cpu: CpuPerCall }> {
  const before = await sample(portOffset);
  const result = await run();
  const after = await sample(portOffset);
  const byProcess = [...after]
    .map(
      ([name, s]) => [name, ((s - (before.get(name) ?? s)) * 1000) / Math.max(1, result.requests)] as [string, number],
    )
    .filter(([, ms]) => ms >= 0.005)
    .sort((a, b) => b[1] - a[1]);
  return { result, cpu: { byProcess, totalMs: byProcess.reduce((n, [, ms]) => n + ms, 0) } };
}
