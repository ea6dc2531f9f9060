/** Load generation for bench:serving: one closed-loop runner for every target, so the figures compare like with like. */
import http from 'node:http';

export const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? Number.NaN;

export interface LoadResult {
  concurrency: number;
  seconds: number;
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
}

/**
 * `concurrency` workers each call `call` back to back for `seconds` (after a short warm-up); a call that rejects
 * counts as an error. Latencies are per call, in ms.
 */
export async function closedLoop(concurrency: number, seconds: number, call: () => Promise<unknown>) {
  const warmUntil = performance.now() + 500;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < warmUntil) await call().catch(() => undefined);
    }),
  );
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        try {
          await call();
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return {
    concurrency,
    seconds,
    requests: latencies.length,
    errors,
    perSecond: latencies.length / elapsed,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
  } satisfies LoadResult;
}

/** A keep-alive HTTP POST of a fixed JSON body; anything but 200 rejects. */
export function httpPoster(url: string, headers: Record<string, string>, body: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const target = new URL(url);
  const payload = Buffer.from(body);
  return () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(
        target,
        { method: 'POST', agent, headers: { ...headers, 'content-length': String(payload.length) } },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}
