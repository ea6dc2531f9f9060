// Jest's global setup: before any suite runs, check that the servers the suite needs answer, and stop the whole run
// at once with one message that says how to start them, instead of a wall of connection errors from every suite.
const net = require('node:net');

function target(url, defaultPort) {
  const u = new URL(url);
  return { host: u.hostname || '127.0.0.1', port: Number(u.port || defaultPort) };
}

function reachable({ host, port }) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(2_000);
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

module.exports = async function checkTestServices() {
  const servers = [
    {
      name: 'Postgres',
      variable: 'TEST_DATABASE_URL',
      url: process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test',
      port: 5432,
    },
    {
      name: 'Redis',
      variable: 'TEST_REDIS_URL',
      url: process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      port: 6379,
    },
  ];
  const missing = [];
  for (const server of servers) {
    const at = target(server.url, server.port);
    if (!(await reachable(at))) missing.push(`${server.name} at ${at.host}:${at.port} (${server.variable})`);
  }
  if (missing.length === 0) return;
  const error = new Error(
    `The test suite needs ${missing.join(' and ')}, and nothing answers there.\n` +
      'Start the test servers with `pnpm test:services` (it installs and starts them on loopback), ' +
      'or point the variables at servers of your own.',
  );
  error.stack = error.message;
  throw error;
};
