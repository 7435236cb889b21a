import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * TypeScript types for your queries, from the API's own schema (introspection needs a key, like
 * any query). `scalars` maps the API's three custom scalars; without it they become `unknown` (typescript plugin 6: `defaultScalarType`).
 */
const config: CodegenConfig = {
  schema: { 'http://localhost:3000/v2/graphql': { headers: { apikey: process.env['PLACEDATA_KEY'] ?? '' } } },
  documents: ['placekeys.graphql'],
  generates: {
    'placedata.generated.ts': {
      plugins: ['typescript', 'typescript-operations'],
      config: {
        scalars: {
          Placekey: 'string',
          DateTime: 'string',
          JSON: { input: 'unknown', output: 'Record<string, number | string | null>' },
        },
      },
    },
  },
};

export default config;
