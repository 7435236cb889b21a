import { rootFactsOf, type RootFacts } from './root-field.ts';
import { buildV1Schema } from './v1/schema.ts';
import { buildV2Schema } from './v2/schema.ts';

let facts: ReadonlyMap<string, RootFacts> | null = null;

/**
 * The kind and cost each root field of /v1 and /v2 declares (root-field.ts), by name: what the
 * transport reads to name and charge a request before GraphQL runs. Built once, on first use;
 * throws (at the first request, and in test/unit/root-fields.test.ts) if a root field declares none.
 */
export function servedRootFacts(): ReadonlyMap<string, RootFacts> {
  facts ??= rootFactsOf([buildV1Schema(), buildV2Schema()]);
  return facts;
}
