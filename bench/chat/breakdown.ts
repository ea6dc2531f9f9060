/**
 * Where a gateway call's time goes, from the services' own Prometheus histograms read before and after a run: the
 * mean time the gateway spent on `/v1/chat/completions`, and one metering group commit of the router (the outbox
 * INSERT a call waits for before its last piece). The router's `Chat` is a streaming RPC, for which packages/rpc
 * records no duration, so the rest is the gateway, the gRPC hop, the router and the upstream call together.
 */
const GATEWAY_PORT = 8080;
const ROUTER_METRICS_PORT = 9454;

interface Series {
  sum: number;
  count: number;
}

/** Sum and count of a histogram's series whose labels match `labels`, added over the rest. */
function histogram(text: string, name: string, labels: RegExp): Series {
  const out = { sum: 0, count: 0 };
  for (const m of text.matchAll(new RegExp(`^${name}_(sum|count)(\\{[^}]*\\})? (\\S+)$`, 'gm'))) {
    if (!labels.test(m[2] ?? '')) continue;
    out[m[1] as 'sum' | 'count'] += Number(m[3]);
  }
  return out;
}

async function sample(portOffset: number) {
  const get = (port: number) =>
    fetch(`http://127.0.0.1:${port + portOffset}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
  const [gateway, router] = await Promise.all([get(GATEWAY_PORT), get(ROUTER_METRICS_PORT)]);
  return {
    gateway: histogram(gateway, 'whetstone_gateway_http_request_duration_seconds', /chat\/completions".*status="200"/),
    commit: histogram(router, 'inference_router_metering_commit_seconds', /.*/),
  };
}

export interface Breakdown {
  /** Mean ms per call inside the gateway (request in to response finished). */
  gatewayMs: number;
  /** Mean ms of one metering group commit, and commits per call. */
  commitMs: number;
  commitsPerCall: number;
}

/** Runs `run` and reports the mean time per call in each layer over it. */
export async function breakdownOf<T>(
  portOffset: number,
  run: () => Promise<T>,
): Promise<{ result: T; breakdown: Breakdown }> {
  const before = await sample(portOffset);
  const result = await run();
  const after = await sample(portOffset);
  const mean = (k: keyof typeof before) =>
    ((after[k].sum - before[k].sum) * 1000) / Math.max(1, after[k].count - before[k].count);
  const calls = Math.max(1, after.gateway.count - before.gateway.count);
  return {
    result,
    breakdown: {
      gatewayMs: mean('gateway'),
      commitMs: mean('commit'),
      commitsPerCall: (after.commit.count - before.commit.count) / calls,
    },
  };
}
