/**
 * The bench's server process: a real key-billing (fresh test schema), a gateway
 * with Redis rate limits and a warm auth cache, and a bare express app, all on
 * port 0. Prints their URLs and a valid key as one JSON line, then serves.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createKey, signUp, startGateway, startKeyBilling } from '../../services/gateway/test/integration/harness';

async function main(): Promise<void> {
  const kb = await startKeyBilling();
  const gw = await startGateway(kb, {
    redis: process.env.BENCH_REDIS !== '0',
    redisPrefix: `bench:${Date.now()}:`,
    rateLimits: { ipPerMinute: 100_000_000, ipPerHour: 100_000_000, edgePerMinute: 100_000_000 },
    extraRoutes: (app, _api, chain) => {
      // Auth (cache hit after the first call) + per-IP rate limit in Redis + JSON response: the gateway's own overhead.
      app.get('/bench/ping', ...chain('key'), (_req, res) => void res.json({ ok: true }));
    },
  });
  const user = await signUp(gw.url);
  const key = await createKey(gw.url, user, 'bench');

  const bare = express();
  bare.get('/bench/ping', (_req, res) => void res.json({ ok: true }));
  const bareServer = http.createServer(bare);
  await new Promise<void>((resolve) => bareServer.listen(0, '127.0.0.1', resolve));

  process.stdout.write(
    `${JSON.stringify({ gateway: gw.url, bare: `http://127.0.0.1:${(bareServer.address() as AddressInfo).port}`, key: key.secret_key })}\n`,
  );
  process.on('SIGTERM', async () => {
    bareServer.close();
    await gw.close();
    await kb.close();
    process.exit(0);
  });
}

void main();
