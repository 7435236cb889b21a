import type { GraphQLFieldConfig, GraphQLSchema } from 'graphql';

/** The kinds of root field, as metrics and logs name a request's operation (api/http/request-kind.ts). */
export const ROOT_KINDS = ['batch_lookup', 'lookup', 'batch_match', 'search', 'dataset_versions', 'version_diff', 'summary'] as const;
export type RootKind = (typeof ROOT_KINDS)[number];

/**
 * What a root field costs in the rate limit, read from the document before it runs
 * (inspect-operation.ts): one a item of a list argument (`batch_lookup`'s `placekeys`,
 * `batch_match`'s `queries`), a fixed number, a search's pages (their `first`), or points per
 * week (month) of a summary's range (`weeks: { from, to }`, `months: { from, to }` on /v1,
 * `start_date`/`end_date` on /v2; none: one week or month).
 */
export type RootCost = { readonly list: string } | { readonly fixed: number } | { readonly pages: true } | { readonly perWeek: number } | { readonly perMonth: number };

/** What a root field declares where it is defined: its kind and its cost. */
export interface RootFacts {
  readonly kind: RootKind;
  readonly cost: RootCost;
}

/** A root field's config with its kind and cost declared (GraphQL's `extensions`, where the field is defined). */
export function rootField<TSource, TContext>(config: GraphQLFieldConfig<TSource, TContext>, facts: RootFacts): GraphQLFieldConfig<TSource, TContext> {
  return { ...config, extensions: { ...config.extensions, root: facts } };
}

/**
 * The kind and cost of every root field of the schemas, by field name.
 * @throws Error naming each root field that does not declare them (rootField), or that two
 *   schemas declare differently: a new root field cannot be added without saying what it is and costs.
 */
export function rootFactsOf(schemas: readonly GraphQLSchema[]): ReadonlyMap<string, RootFacts> {
  const facts = new Map<string, RootFacts>();
  const problems: string[] = [];
  for (const schema of schemas) {
    for (const [name, field] of Object.entries(schema.getQueryType()?.getFields() ?? {})) {
      const declared = (field.extensions as { root?: RootFacts } | undefined)?.root;
      if (!declared) {
        problems.push(`${name} declares no kind and cost (wrap it in rootField)`);
        continue;
      }
      const known = facts.get(name);
      if (known && JSON.stringify(known) !== JSON.stringify(declared)) problems.push(`${name} is declared differently by two schemas`);
      facts.set(name, declared);
    }
  }
  if (problems.length) throw new Error(`root fields: ${problems.join('; ')}`);
  return facts;
}
