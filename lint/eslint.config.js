// The project's lint, run by `npm test` (so by CI): `eslint --config lint/eslint.config.js --max-warnings 0 .`
// Patterns are relative to the folder eslint runs in (the repository's root).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importPlugin from 'eslint-plugin-import';
import boundaries from 'eslint-plugin-boundaries';
import reactHooks from 'eslint-plugin-react-hooks';

/**
 * The layers (docs/architecture.md opens with the tree; each folder's README.md says the same).
 * Inside api/ a layer imports only the layers below it: http -> graphql -> search -> versions ->
 * lookup; export/ and pages/ are routes beside graphql (they use http's middleware helpers;
 * export/ also search's summaries);
 * api/*.ts (main, app, server) wire everything. Inside ingest/: cli -> queue -> publish -> build
 * -> drop. api/ and ingest/ never import each other; shared/ imports neither.
 */
const elements = [
  { type: 'api-root', pattern: 'api/*.ts', mode: 'full' },
  { type: 'api-http', pattern: 'api/http/**', mode: 'full' },
  { type: 'api-export', pattern: 'api/export/**', mode: 'full' },
  { type: 'api-pages', pattern: 'api/pages/**', mode: 'full' },
  { type: 'api-graphql', pattern: 'api/graphql/**', mode: 'full' },
  { type: 'api-search', pattern: 'api/search/**', mode: 'full' },
  { type: 'api-lookup', pattern: 'api/lookup/**', mode: 'full' },
  { type: 'api-versions', pattern: 'api/versions/**', mode: 'full' },
  { type: 'ingest-root', pattern: 'ingest/*.ts', mode: 'full' },
  { type: 'ingest-cli', pattern: 'ingest/cli/**', mode: 'full' },
  { type: 'ingest-queue', pattern: 'ingest/queue/**', mode: 'full' },
  { type: 'ingest-publish', pattern: 'ingest/publish/**', mode: 'full' },
  { type: 'ingest-build', pattern: 'ingest/build/**', mode: 'full' },
  { type: 'ingest-drop', pattern: 'ingest/drop/**', mode: 'full' },
  { type: 'versions', pattern: 'versions/**', mode: 'full' },
  { type: 'shared', pattern: 'shared/**', mode: 'full' },
];

const below = {
  'api-lookup': [],
  'api-versions': ['api-lookup'],
  'api-search': ['api-lookup', 'api-versions'],
  'api-graphql': ['api-search', 'api-lookup', 'api-versions'],
  'api-http': ['api-graphql', 'api-search', 'api-lookup', 'api-versions'],
  'api-export': ['api-http', 'api-search', 'api-lookup', 'api-versions'],
  'api-pages': ['api-http', 'api-lookup', 'api-versions'],
  'api-root': ['api-http', 'api-export', 'api-pages', 'api-graphql', 'api-search', 'api-lookup', 'api-versions'],
  'ingest-drop': [],
  'ingest-build': ['ingest-drop'],
  'ingest-publish': ['ingest-build', 'ingest-drop'],
  'ingest-queue': ['ingest-publish', 'ingest-build', 'ingest-drop'],
  'ingest-cli': ['ingest-queue', 'ingest-publish', 'ingest-build', 'ingest-drop'],
  'ingest-root': ['ingest-cli', 'ingest-queue', 'ingest-publish', 'ingest-build', 'ingest-drop'],
  // The versions domain: used by api and ingest alike; it imports only shared.
  'versions': [],
  'shared': [],
};

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', 'web-dist/**', 'bench/postgraphile/**', 'bench/work/**', 'datasets/**', 'docs/examples/**/*.generated.ts'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx,js,mjs}'],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: 'module',
      globals: {
        process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly',
        setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', fetch: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly',
        AbortController: 'readonly', AbortSignal: 'readonly', structuredClone: 'readonly', performance: 'readonly', queueMicrotask: 'readonly',
      },
    },
    plugins: { import: importPlugin, boundaries },
    settings: {
      'import/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import/resolver': { node: { extensions: ['.ts', '.tsx', '.js', '.mjs'] } },
      'boundaries/elements': elements,
    },
    rules: {
      // `_name` marks a parameter or element that must be there (an Express error handler's
      // fourth argument, a destructured position) but is not used.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' }],
      'import/no-cycle': ['error', { ignoreExternal: true }],
      'boundaries/element-types': ['error', {
        default: 'disallow',
        rules: Object.entries(below).map(([from, allow]) => ({ from, allow: [from, ...allow, 'shared', ...(from === 'shared' || from === 'versions' ? [] : ['versions'])] })),
      }],
    },
  },
  {
    // The browser pages (React): the hooks' rules.
    files: ['web/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    // Tests and benches read JSON answers and hostile bytes: untyped answers and control
    // characters in their patterns are their subject, not mistakes.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-control-regex': 'off' },
  },
);
