import { ConfigError, env, loadConfig, z } from './index';

describe('loadConfig', () => {
  const schema = z.object({
    PORT: env.port(8080),
    DATABASE_URL: env.url(),
    FEATURE: env.bool(false),
    PEER_ADDR: env.addr(),
  });

  it('when every variable is bad, then all of them are listed at once', () => {
    expect.assertions(4);
    try {
      loadConfig(schema, { PORT: 'abc', PEER_ADDR: 'nope' });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toContain('PORT');
      expect(problems).toMatch(/DATABASE_URL.*not set/);
      expect(problems).toContain('PEER_ADDR');
    }
  });

  it('when variables are valid, then they are typed and defaulted', () => {
    const cfg = loadConfig(schema, {
      DATABASE_URL: 'postgres://x@localhost/db',
      PEER_ADDR: 'localhost:5000',
      FEATURE: 'yes',
    });
    expect(cfg).toEqual({
      PORT: 8080,
      DATABASE_URL: 'postgres://x@localhost/db',
      FEATURE: true,
      PEER_ADDR: 'localhost:5000',
    });
  });

  it('when a peer address is a balancing target, then it is accepted; other schemes are not', () => {
    const addr = env.addr();
    for (const ok of ['model-server:50055', 'dns:///model-server-headless:50055', 'ipv4:10.0.0.1:1,10.0.0.2:1'])
      expect(addr.safeParse(ok).success).toBe(true);
    for (const bad of ['http://model-server:50055', 'dns:///no-port', 'model-server', 'ipv4:host:1'])
      expect(addr.safeParse(bad).success).toBe(false);
  });
});
