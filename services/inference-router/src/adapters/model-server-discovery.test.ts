import { resolveModelServers, watchModelServers } from './model-server-discovery';

const records: Record<string, string[]> = {
  'model-server-headless': ['10.1.0.7', '10.1.0.3'],
  'v6-headless': ['fd00::1'],
};
const resolve = async (host: string) => {
  const found = records[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const logger = { ...silent, child: () => logger };

describe('model-server discovery', () => {
  it('when entries are host:port, then they are used as written', async () => {
    expect(await resolveModelServers(['b:50055', 'a:50055', 'a:50055'], resolve)).toEqual(['a:50055', 'b:50055']);
  });

  it('when an entry is dns:///host:port, then every address it resolves to is a replica', async () => {
    expect(await resolveModelServers(['dns:///model-server-headless:50055', 'dns:///v6-headless:7'], resolve)).toEqual([
      '10.1.0.3:50055',
      '10.1.0.7:50055',
      '[fd00::1]:7',
    ]);
  });

  it('when a dns:/// name does not resolve, then it contributes nothing', async () => {
    expect(await resolveModelServers(['dns:///nowhere:50055', 'x:1'], resolve)).toEqual(['x:1']);
  });

  it('when the name resolves to another set later, then the watcher reports the new fleet once', async () => {
    jest.useFakeTimers();
    try {
      const seen: string[][] = [];
      const targets = ['dns:///model-server-headless:50055'];
      const current = await resolveModelServers(targets, resolve);
      const watch = watchModelServers(targets, current, (addrs) => seen.push(addrs), {
        intervalMs: 1000,
        logger,
        resolve,
      });
      await jest.advanceTimersByTimeAsync(1000);
      expect(seen).toEqual([]);
      records['model-server-headless'] = ['10.1.0.7', '10.1.0.3', '10.1.0.9'];
      await jest.advanceTimersByTimeAsync(1000);
      await jest.advanceTimersByTimeAsync(1000);
      expect(seen).toEqual([['10.1.0.3:50055', '10.1.0.7:50055', '10.1.0.9:50055']]);
      watch.stop();
    } finally {
      jest.useRealTimers();
    }
  });
});
