import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// Layering inside a service: domain ← application ← transport/adapters ← main.
const layer = (files, forbidden, why) => ({
  files,
  rules: {
    'no-restricted-imports': ['error', { patterns: forbidden.map((group) => ({ group: [group], message: why })) }],
  },
});

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'packages/proto/src/gen/**', '**/src/generated/**', '.data/**', '.tools/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  { files: ['services/*/public/**/*.js'], languageOptions: { globals: { ...globals.browser }, sourceType: 'script' } },
  layer(
    ['services/*/src/domain/**/*.ts'],
    ['**/application/**', '**/transport/**', '**/adapters/**', '**/main', '@prisma/*', 'express', 'ioredis', 'pg', '@connectrpc/*'],
    'domain code imports nothing outward (STYLE.md layering)',
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
