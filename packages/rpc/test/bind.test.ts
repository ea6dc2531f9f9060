import net from 'node:net';
import { createLogger } from '@whetstone/telemetry';
import { createRpcServer, type RpcServer } from '../src';

const logger = createLogger({ service: 'rpc-bind-test', level: 'error', destination: { write: () => undefined } });

/**
 * Whether a TCP connection to `host:port` is accepted. 127.0.0.2 is a loopback address too (Linux routes
 * all of 127.0.0.0/8 to lo) but not 127.0.0.1: a server bound to 127.0.0.1 refuses it, one bound to every
 * interface (0.0.0.0) accepts it, so it stands in for another machine's address without needing one.
 */
const accepts = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('createRpcServer, the address it listens on', () => {
  const servers: RpcServer[] = [];
  const start = async (host?: string) => {
    const server = await createRpcServer({
      name: 'bind',
      port: 0,
      ...(host ? { host } : {}),
      logger,
      register: () => undefined,
    });
    servers.push(server);
    return server;
  };

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it('when no host is given, then it listens on loopback only', async () => {
    const { port } = await start();
    expect({ loopback: await accepts('127.0.0.1', port), other: await accepts('127.0.0.2', port) }).toEqual({
      loopback: true,
      other: false,
    });
  });

  it('when the host is 0.0.0.0 (as the chart sets for a pod), then it listens on every interface', async () => {
    const { port } = await start('0.0.0.0');
    expect({ loopback: await accepts('127.0.0.1', port), other: await accepts('127.0.0.2', port) }).toEqual({
      loopback: true,
      other: true,
    });
  });
});
