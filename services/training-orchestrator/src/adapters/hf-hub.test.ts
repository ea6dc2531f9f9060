import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hfHub } from './hf-hub';

/** A real HTTP server speaking the two hub calls the adapter makes. */
function startHub() {
  const seen: { path: string; auth: string | undefined; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', auth: req.headers.authorization, body });
      if (req.headers.authorization !== 'Bearer hf_good_token') return void res.writeHead(401).end();
      if (req.url === '/api/repos/create')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ commitOid: 'abc123', commitUrl: 'x' }));
    });
  });
  return new Promise<{ url: string; seen: typeof seen; close: () => Promise<void> }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        seen,
        close: () => new Promise((r) => server.close(() => r())),
      }),
    ),
  );
}

describe('hfHub against a local hub server', () => {
  const files = [{ path: 'model.whetstone-bundle', bytes: new Uint8Array([1, 2, 3]) }];

  it('refuses a loopback hub unless the operator allows private networks, without calling it', async () => {
    const hub = await startHub();
    try {
      await expect(
        hfHub({ baseUrl: hub.url, allowPrivateNetworks: false }).push({
          repoId: 'acme/ner',
          token: 'hf_good_token',
          private: false,
          files,
          message: 'm',
        }),
      ).rejects.toMatchObject({ reason: 'HUB_TARGET_FORBIDDEN' });
      expect(hub.seen).toEqual([]);
    } finally {
      await hub.close();
    }
  });

  it('creates the repo and commits the files with the token as a bearer header when allowed', async () => {
    const hub = await startHub();
    try {
      const out = await hfHub({ baseUrl: hub.url, allowPrivateNetworks: true }).push({
        repoId: 'acme/ner',
        token: 'hf_good_token',
        private: true,
        files,
        message: 'upload',
      });
      expect(out).toEqual({ url: `${hub.url}/acme/ner`, commit: 'abc123' });
      expect(hub.seen.map((s) => s.path)).toEqual(['/api/repos/create', '/api/models/acme/ner/commit/main']);
      expect(JSON.parse(hub.seen[0]!.body)).toEqual({
        type: 'model',
        name: 'ner',
        organization: 'acme',
        private: true,
      });
      const lines = hub.seen[1]!.body.trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { key: string; value: { path?: string; content?: string } });
      expect(lines[1]).toEqual({
        key: 'file',
        value: { path: 'model.whetstone-bundle', encoding: 'base64', content: 'AQID' },
      });
      await expect(
        hfHub({ baseUrl: hub.url, allowPrivateNetworks: true }).push({
          repoId: 'acme/ner',
          token: 'hf_bad_token',
          private: false,
          files,
          message: 'm',
        }),
      ).rejects.toMatchObject({ fieldErrors: [expect.objectContaining({ field: 'hub_token' })] });
    } finally {
      await hub.close();
    }
  });

  const push = (baseUrl: string, allowPrivateNetworks = false) =>
    hfHub({ baseUrl, allowPrivateNetworks }).push({
      repoId: 'acme/ner',
      token: 'hf_good_token',
      private: false,
      files,
      message: 'm',
    });

  it.each([
    ['loopback v6', 'http://[::1]:9'],
    ['private 10/8', 'http://10.0.0.7:9'],
    ['private 172.16/12', 'http://172.20.1.1:9'],
    ['private 192.168/16', 'http://192.168.0.10:9'],
    ['link-local', 'http://169.254.1.1:9'],
    ['cloud metadata', 'http://169.254.169.254'],
    ['carrier-grade NAT', 'http://100.100.100.200:9'],
    ['unique-local v6', 'http://[fd12::1]:9'],
    ['v4-mapped v6', 'http://[::ffff:10.0.0.1]:9'],
    ['a DNS name resolving to loopback', 'http://localhost:9'],
  ])('when the hub is at %s, then the push is refused before any connection', async (_c, url) => {
    await expect(push(url)).rejects.toMatchObject({ kind: 'PermissionDenied', reason: 'HUB_TARGET_FORBIDDEN' });
  });

  it('when an allowed hub redirects to another address, then the redirect is not followed and the token goes nowhere else', async () => {
    const inner = await startHub();
    const redirector = http.createServer((req, res) => {
      req.resume();
      res.writeHead(307, { location: `${inner.url.replace('127.0.0.1', 'localhost')}/api/repos/create` }).end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
      await expect(push(url, true)).rejects.toMatchObject({ reason: 'HUB_TARGET_FORBIDDEN' });
      expect(inner.seen).toEqual([]);
    } finally {
      await new Promise<void>((r) => redirector.close(() => r()));
      await inner.close();
    }
  });
});
