import { create } from '@bufbuild/protobuf';
import { loadDecoder, PrefixCache } from '@whetstone/ml';
import {
  ChatRole,
  FinishReason,
  GenerateRequestSchema,
  ModelServerService,
  type GenerateResponse,
} from '@whetstone/proto/inference/v1';
import { closeRpcChannels, createRpcClient, createRpcServer, type RpcServer } from '@whetstone/rpc';
import { createServiceMetrics } from '@whetstone/telemetry';
import { registerPrefixCacheMetrics } from '../../src/adapters/prefix-cache-metrics';
import { buildApp } from '../../src/app';

const logger = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
  fatal() {},
  child() {
    return this;
  },
} as never;

const SYSTEM_PROMPT = 'You answer in one short line, politely.';

let server: RpcServer;
let client: ReturnType<typeof createRpcClient<typeof ModelServerService>>;
const prefixCache = new PrefixCache({ maxBytes: 8 << 20, defaultTtlSeconds: 300, minPrefixTokens: 16 });
const metrics = createServiceMetrics('model-server');
registerPrefixCacheMetrics(metrics.registry, prefixCache);

beforeAll(async () => {
  const app = buildApp({
    bundles: { read: async () => new Uint8Array() },
    loader: { builtin: () => undefined, fromBundle: () => undefined as never, decoder: (bytes) => loadDecoder(bytes) },
    logger,
    budgetBytes: 64 << 20,
    batching: { windowMs: 1, maxTexts: 256 },
    prefixCache,
  });
  server = await createRpcServer({
    name: 'model-server',
    port: 0,
    host: '127.0.0.1',
    logger,
    register: (r) => app.registerRoutes(r),
  });
  client = createRpcClient(ModelServerService, {
    addr: `127.0.0.1:${server.port}`,
    caller: 'model-server-test',
    timeoutMs: 10_000,
  });
});

afterAll(async () => {
  closeRpcChannels();
  await server.close();
});

async function generate(user: string, breakpoints: { turn: number; chars: number }[]) {
  const pieces: GenerateResponse[] = [];
  const request = create(GenerateRequestSchema, {
    model: { modelId: 'whetstone-decoder-base' },
    messages: [
      { role: ChatRole.SYSTEM, content: SYSTEM_PROMPT },
      { role: ChatRole.USER, content: user },
    ],
    sampling: { temperature: 0, maxTokens: 12 },
    cacheBreakpoints: breakpoints,
  });
  for await (const piece of client.generate(request)) pieces.push(piece);
  return { text: pieces.map((p) => p.text).join(''), pieces, last: pieces[pieces.length - 1]! };
}

describe('Generate with cache breakpoints', () => {
  it('when the same prefix comes twice, then the first call writes it, the second reads it, and the reply is the same', async () => {
    const at = [{ turn: 0, chars: SYSTEM_PROMPT.length }];
    const first = await generate('hi', at);
    const second = await generate('hi', at);
    const uncached = await generate('hi', []);

    expect(first.last).toMatchObject({ inputTokens: 41n, cacheReadTokens: 0n, cacheWriteTokens: 39n });
    expect(second.last).toMatchObject({ inputTokens: 41n, cacheReadTokens: 39n, cacheWriteTokens: 0n });
    expect(uncached.last).toMatchObject({ cacheReadTokens: 0n, cacheWriteTokens: 0n });
    expect(second.last.finishReason).not.toBe(FinishReason.UNSPECIFIED);
    expect(second.text).toBe(first.text);
    expect(uncached.text).toBe(first.text);
    // Counts travel on the last piece only.
    for (const p of second.pieces.slice(0, -1)) expect(p.cacheReadTokens).toBe(0n);

    const scraped = await metrics.registry.metrics();
    expect(scraped).toMatch(/^model_server_prefix_cache_hits_total 1$/m);
    expect(scraped).toMatch(/^model_server_prefix_cache_misses_total 1$/m);
    expect(scraped).toMatch(/^model_server_prefix_cache_entries 1$/m);
    expect(Number(/^model_server_prefix_cache_bytes (\d+)$/m.exec(scraped)?.[1])).toBe(prefixCache.stats().bytes);
    expect(prefixCache.stats().bytes).toBeGreaterThan(0);
  });

  it('when a call sets more than 4 breakpoints, then it fails as an invalid argument', async () => {
    const five = [1, 2, 3, 4, 5].map((chars) => ({ turn: 0, chars }));
    await expect(generate('hi', five)).rejects.toMatchObject({ kind: 'InvalidArgument' });
  });
});
