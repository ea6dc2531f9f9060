import { create } from '@bufbuild/protobuf';
import { EchoService, EchoResponseSchema } from '@whetstone/proto/testing/v1';
import { createLogger } from '@whetstone/telemetry';
import { Registry } from 'prom-client';
import { closeRpcChannels, createRpcClient, createRpcServer, type RpcServer } from '../src';

const logger = createLogger({ service: 'rpc-balancing-test', level: 'error', destination: { write: () => undefined } });

/** An echo server that answers with its own name, so a test sees which replica served a call. */
const replica = (name: string) =>
  createRpcServer({
    name,
    port: 0,
    host: '127.0.0.1',
    logger,
    metrics: new Registry(),
    register: (router) =>
      router.service(EchoService, { echo: async () => create(EchoResponseSchema, { message: name }) }),
  });

describe('client balancing over several replicas', () => {
  let servers: RpcServer[] = [];

  beforeAll(async () => {
    servers = [await replica('a'), await replica('b')];
  });

  afterAll(async () => {
    closeRpcChannels();
    await Promise.all(servers.map((s) => s.close()));
  });

  it('when the address is a target naming two replicas, then calls go round-robin to both', async () => {
    const addr = `ipv4:${servers.map((s) => `127.0.0.1:${s.port}`).join(',')}`;
    const client = createRpcClient(EchoService, { addr, caller: 'test' });
    const served: string[] = [];
    for (let i = 0; i < 20; i++) served.push((await client.echo({ message: 'x' })).message);
    // The first calls may all go to whichever connection was ready first; after that they alternate.
    expect(served.filter((n) => n === 'a').length).toBeGreaterThanOrEqual(6);
    expect(served.filter((n) => n === 'b').length).toBeGreaterThanOrEqual(6);
    expect(new Set(served.slice(-4))).toEqual(new Set(['a', 'b']));
  });

  it('when the address is a dns:/// target, then it resolves and calls succeed', async () => {
    const client = createRpcClient(EchoService, { addr: `dns:///localhost:${servers[0]!.port}`, caller: 'test' });
    expect((await client.echo({ message: 'x' })).message).toBe('a');
  });

  it('when the address is a plain host:port, then every call goes to that one server', async () => {
    const client = createRpcClient(EchoService, { addr: `127.0.0.1:${servers[1]!.port}`, caller: 'test' });
    const served = new Set<string>();
    for (let i = 0; i < 4; i++) served.add((await client.echo({ message: 'x' })).message);
    expect([...served]).toEqual(['b']);
  });
});
