import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// Generated protobuf code is reached only through the proto package's public entries (@whetstone/proto/<domain>/v1).
const PROTO_INTERNALS = {
  group: ['@whetstone/proto/src/*', '@whetstone/proto/src/**'],
  message: 'import protos through @whetstone/proto/<domain>/v1',
};
// @whetstone/ml/internals is the unstable entry for benchmarks; everything else uses the curated @whetstone/ml.
const ML_INTERNALS = {
  group: ['@whetstone/ml/internals', '@whetstone/ml/src/*', '@whetstone/ml/src/**'],
  message: 'use the public @whetstone/ml entry; @whetstone/ml/internals is for bench/ only',
};

// Layering inside a service: domain ← application ← transport/adapters ← main. (A later config replaces a rule, so
// each layer repeats the internals bans.)
const layer = (files, forbidden, why) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      { patterns: [PROTO_INTERNALS, ML_INTERNALS, ...forbidden.map((group) => ({ group: [group], message: why }))] },
    ],
  },
});
const FOCUSED_TESTS = ['test', 'it', 'describe'].map((object) => ({
  object,
  property: 'only',
  message: 'no focused tests: they silently skip the rest',
}));

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'packages/proto/src/gen/**',
      '**/src/generated/**',
      '.data/**',
      '.tools/**',
      'coverage/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
      'no-restricted-imports': ['error', { patterns: [PROTO_INTERNALS, ML_INTERNALS] }],
      'no-restricted-properties': ['error', ...FOCUSED_TESTS],
    },
  },
  {
    files: ['bench/**/*.ts', 'packages/ml/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [PROTO_INTERNALS] }] },
  },
  // Size: a newcomer reads a file in one sitting and a function on one screen. The ML kernels are exempt, and so are
  // tests' describe blocks (a suite is a list, not logic; `*.contract.ts` holds a suite several test files run).
  {
    files: ['**/*.ts'],
    ignores: ['packages/ml/**', '**/*.test.ts', '**/*.contract.ts'],
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 80 }],
    },
  },
  {
    files: ['**/*.test.ts', '**/*.contract.ts'],
    ignores: ['packages/ml/**'],
    rules: { 'max-lines': ['error', { max: 400 }] },
  },
  // Only a service's config.ts reads the environment (typed, validated at boot; STYLE.md).
  {
    files: ['services/*/src/**/*.ts'],
    ignores: ['services/*/src/config.ts', '**/*.test.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...FOCUSED_TESTS,
        { object: 'process', property: 'env', message: "read the environment in this service's config.ts only" },
      ],
    },
  },
  { files: ['services/*/public/**/*.js'], languageOptions: { globals: { ...globals.browser }, sourceType: 'module' } },
  layer(
    ['services/*/src/domain/**/*.ts'],
    [
      '**/application/**',
      '**/transport/**',
      '**/adapters/**',
      '**/main',
      '@prisma/*',
      'express',
      'ioredis',
      'pg',
      '@connectrpc/*',
      '@whetstone/proto',
      '@whetstone/proto/**',
      '@whetstone/ml',
      '@whetstone/ml/**',
    ],
    'domain code is pure rules: it imports no transport, adapter, contract (proto) or model (ml) code (STYLE.md layering)',
  ),
  layer(
    ['services/*/src/application/**/*.ts'],
    ['**/transport/**', '**/adapters/**', '**/main', '@prisma/*', 'express', 'ioredis', 'pg', '@connectrpc/*'],
    'use cases depend on ports, not on transports or adapters (STYLE.md layering)',
  ),
  layer(
    ['services/*/src/transport/**/*.ts', 'services/*/src/adapters/**/*.ts'],
    ['**/main'],
    'only main.ts composes the service',
  ),
);
