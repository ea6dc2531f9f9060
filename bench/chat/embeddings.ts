/**
 * bench:chat's upstream embeddings figure: one short text to `/v1/embeddings` of the fake provider's embedding model
 * (CATALOG_UPSTREAMS `task: "embedding"`), through the gateway against the fake called directly, c=1, in
 * alternating rounds, after checking both answer the same vector.
 */
import type { Api } from '../lib/api';
import { closedLoop, httpPoster, pct, type LoadResult } from '../serving/load';

/** The catalog id of the fake's embedding model, and its name at the fake. */
export const EMBED_MODEL = 'bench-embed';
export const EMBED_UPSTREAM_MODEL = 'bench-embedder';

const INPUT = 'Embed this short sentence for the benchmark.';

export async function measureEmbeddings(
  api: Api,
  upstream: { url: string; apiKey: string },
  rounds: number,
  seconds: number,
) {
  const direct = {
    url: `${upstream.url}/v1/embeddings`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${upstream.apiKey}` },
    body: JSON.stringify({ model: EMBED_UPSTREAM_MODEL, input: INPUT, encoding_format: 'float' }),
  };
  const viaGateway = {
    url: `${api.base}/v1/embeddings`,
    headers: api.headers,
    body: JSON.stringify({ model: EMBED_MODEL, input: INPUT, encoding_format: 'float' }),
  };
  const vectors: string[] = [];
  for (const t of [direct, viaGateway]) {
    const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body });
    const json = (await res.json()) as { data?: { embedding: number[] }[] };
    // Whetstone carries vectors as float32, so the fake's float64 values are compared at that precision.
    const vector = json.data?.[0]?.embedding.map((x) => Math.fround(x));
    vectors.push(res.status === 200 ? JSON.stringify(vector) : `HTTP ${res.status}`);
  }
  if (vectors[0] !== vectors[1]) throw new Error(`direct and gateway embeddings differ: ${JSON.stringify(vectors)}`);
  process.stderr.write(`embeddings, c=1, ${rounds} rounds of ${seconds} s per target…\n`);
  const directCall = httpPoster(direct.url, direct.headers, direct.body);
  const gatewayCall = httpPoster(viaGateway.url, viaGateway.headers, viaGateway.body);
  const results: { direct: LoadResult; gateway: LoadResult }[] = [];
  for (let r = 0; r < rounds; r++)
    results.push({
      direct: await closedLoop(1, seconds, directCall),
      gateway: await closedLoop(1, seconds, gatewayCall),
    });
  return results;
}

export function reportEmbeddings(results: Awaited<ReturnType<typeof measureEmbeddings>>): void {
  const f = (x: number) => x.toFixed(2);
  const median = (xs: number[]) => pct(xs, 50);
  const added = median(results.map((r) => r.gateway.p50 - r.direct.p50));
  console.log(
    `  upstream embeddings (/v1/embeddings, one short text, c=1 p50, median of ${results.length} alternating rounds): ` +
      `direct ${f(median(results.map((r) => r.direct.p50)))} ms, gateway ${f(median(results.map((r) => r.gateway.p50)))} ms, added ${f(added)} ms`,
  );
}
