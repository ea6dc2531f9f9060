// One jest run for the whole workspace: a project per package and service.
const swc = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
];
const fs = require('node:fs');
const path = require('node:path');

const roots = ['packages', 'services']
  .flatMap((dir) => fs.readdirSync(path.join(__dirname, dir)).map((name) => path.join(dir, name)))
  .concat(['test/e2e']);

module.exports = {
  // Stops the run at once, with one message, when Postgres or Redis is not up (`pnpm test:services` starts them).
  globalSetup: '<rootDir>/test/global-setup.js',
  // Real training, real processes and real databases on a shared 2-core machine: generous, never a speed test.
  testTimeout: 60_000,
  // How long a worker may take to exit once the run is over before jest kills it ("failed to exit gracefully").
  // No test leaves a handle open (each project runs clean in band), but a worker that ran the ML suites takes
  // 50–150 ms to exit on a quiet machine (native onnxruntime and a large heap), several times that under load:
  // past jest's 500 ms default. A real leak still holds a worker forever, so it is still reported, after 5 s.
  workerGracefulExitTimeout: 5_000,
  projects: roots
    .filter((root) => fs.existsSync(path.join(__dirname, root, 'package.json')))
    .map((root) => ({
      displayName: root,
      rootDir: path.join(__dirname, root),
      testEnvironment: 'node',
      // Real training, real processes and real databases on a shared 2-core machine: generous, never a speed test.
      testTimeout: 60_000,
      transform: { '^.+\\.(t|j)sx?$': swc },
      // The Vercel AI SDK the journeys drive ships ES modules only, so they are compiled like our own code there.
      transformIgnorePatterns:
        root === 'test/e2e'
          ? ['/node_modules/(?!\\.pnpm|ai/|@ai-sdk/|@workflow/|zod/)']
          : ['/node_modules/(?!\\.pnpm)'],
      testMatch: ['<rootDir>/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '/dist/'],
    })),
};
