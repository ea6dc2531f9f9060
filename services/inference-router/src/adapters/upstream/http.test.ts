import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardHost, postStream, type HttpOptions } from './http';

/** A local server that records every request and answers with `reply`. */
async function server(reply: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: string[] = [];
  const s = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => reply(req, res));
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  return { port, seen, close: () => new Promise<void>((r) => s.close(() => r())) };
}

const sse = (_req: http.IncomingMessage, res: http.ServerResponse) =>
  void res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: {"ok":true}\n\n');

const options = (allowPrivateHosts: string[]): HttpOptions => ({
  allowPrivateHosts,
  idleTimeoutMs: 5_000,
  logger: { warn: () => undefined } as unknown as HttpOptions['logger'],
});

async function drain(url: string, opts: HttpOptions) {
  const out: string[] = [];
  for await (const event of postStream(url, {}, { model: 'm' }, { modelId: 'm', signal: undefined }, opts))
    out.push(event.data);
  return out;
}

describe('the upstream address guard', () => {
  const classes: Record<string, string> = {
    'loopback v4': '127.0.0.1',
    'loopback v6': '[::1]',
    'private 10/8': '10.0.0.7',
    'private 172.16/12': '172.20.1.1',
    'private 192.168/16': '192.168.0.10',
    'link-local': '169.254.1.1',
    'cloud metadata': '169.254.169.254',
    'carrier-grade NAT': '100.100.100.200',
    'unique-local v6': '[fd12::1]',
    'v4-mapped v6': '[::ffff:10.0.0.1]',
    'a DNS name resolving to loopback': 'localhost',
  };

  it.each(Object.entries(classes))(
    'when the provider is at %s (%s), then the call is refused before any connection',
    async (_c, host) => {
      await expect(guardHost(`http://${host}:9/`, 'm', options([]))).rejects.toMatchObject({
        kind: 'FailedPrecondition',
        reason: 'UPSTREAM_ADDRESS_FORBIDDEN',
      });
    },
  );

  it('when the operator allows the host, then the same address is served', async () => {
    await expect(guardHost('http://localhost:9/', 'm', options(['localhost']))).resolves.toBeUndefined();
    await expect(guardHost('http://10.0.0.7:9/', 'm', options(['*']))).resolves.toBeUndefined();
  });

  it('when a name passes the first check but resolves to loopback at connect time, then the connection is refused', async () => {
    // postStream is what runs after guardHost's 30 s of trust: its own connections check their addresses.
    const target = await server(sse);
    try {
      await expect(drain(`http://localhost:${target.port}/v1/chat/completions`, options([]))).rejects.toMatchObject({
        reason: 'UPSTREAM_ADDRESS_FORBIDDEN',
      });
      expect(target.seen).toEqual([]);
      expect(await drain(`http://localhost:${target.port}/v1/chat/completions`, options(['localhost']))).toEqual([
        '{"ok":true}',
      ]);
    } finally {
      await target.close();
    }
  });

  it('when an allowed provider redirects to another address, then the redirect is not followed', async () => {
    const inner = await server(sse);
    const redirector = await server(
      (_req, res) => void res.writeHead(307, { location: `http://localhost:${inner.port}/v1/chat/completions` }).end(),
    );
    try {
      await expect(
        drain(`http://127.0.0.1:${redirector.port}/v1/chat/completions`, options(['127.0.0.1'])),
      ).rejects.toMatchObject({ kind: 'Unavailable' });
      expect(redirector.seen).toEqual(['POST /v1/chat/completions']);
      expect(inner.seen).toEqual([]);
    } finally {
      await inner.close();
      await redirector.close();
    }
  });
});
