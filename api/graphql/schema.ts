/**
 * The GraphQL schemas' entry point for existing callers: `buildSchema` is /v1/graphql's schema
 * (api/graphql/v1/schema.ts); /v2/graphql's is api/graphql/v2/schema.ts. The shared pieces live
 * in api/graphql/.
 */
export type { Entry, RequestContext } from './request-context.ts';
export { PlacekeyScalar } from './placekey-scalar.ts';
export { buildV1Schema as buildSchema } from './v1/schema.ts';
