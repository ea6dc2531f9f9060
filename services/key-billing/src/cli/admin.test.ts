import net from 'node:net';
import { closeRpcChannels } from '@whetstone/rpc';
import { runAdminCli } from './admin';

/** A port nothing listens on: bound, then released. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

function io(env: { KEY_BILLING_ADDR?: string } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t), env } };
}

describe('the admin CLI, pointed at the running system', () => {
  afterAll(() => closeRpcChannels());

  it('when a command asks for --help, then it says that --data-dir picks the system and run.json gives its address', async () => {
    for (const command of [
      'grant-credits',
      'set-plan',
      'adjust-balance',
      'set-ceiling',
      'block',
      'unblock',
      'renew',
      'show',
    ]) {
      const cli = io();
      expect(await runAdminCli([command, '--help'], cli.io)).toBe(0);
      expect({ command, help: cli.out.join('') }).toEqual({
        command,
        help: expect.stringContaining('--data-dir <dir>     the --data-dir of the `pnpm start` to talk to'),
      });
      expect(cli.out.join('')).toContain('<dir>/run.json');
    }
  });

  it('when key-billing does not answer, then the error names the address and says to pass the --data-dir of the pnpm start to reach', async () => {
    const addr = `127.0.0.1:${await closedPort()}`;
    const cli = io({ KEY_BILLING_ADDR: addr });
    expect(await runAdminCli(['show', '--team', 'team-1'], cli.io)).toBe(1);
    const message = cli.err.join('');
    expect(message).toMatch(new RegExp(`^error: cannot reach key-billing at ${addr} \\(`));
    expect(message).toContain(
      'If it was started with `--data-dir <dir>`, pass the same `--data-dir <dir>` here: the address is read from <dir>/run.json',
    );
    expect(message).toContain('--addr or KEY_BILLING_ADDR');
  });
});
