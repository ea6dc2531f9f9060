import { Registry } from 'prom-client';
import { startMetricsServer } from '../src';

describe('startMetricsServer, the address it listens on', () => {
  it('when no host is given, then it listens on loopback only and serves /metrics there', async () => {
    const server = await startMetricsServer(new Registry(), 0);
    try {
      expect(server.address).toBe('127.0.0.1');
      expect((await fetch(`http://127.0.0.1:${server.port}/metrics`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('when the host is 0.0.0.0 (as the chart sets for a pod), then it listens on every interface', async () => {
    const server = await startMetricsServer(new Registry(), 0, '0.0.0.0');
    try {
      expect(server.address).toBe('0.0.0.0');
      expect((await fetch(`http://127.0.0.2:${server.port}/metrics`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
