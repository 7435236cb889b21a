import type { Request, Response } from 'express';
import { AsyncLocalStorage } from 'node:async_hooks';
import { validate as graphqlValidate, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { createHandler } from 'graphql-http/lib/use/express';
import { ErrorCodes } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { makeCompiledExecute } from './compiled-execute.ts';
import { DocumentCache } from './document-cache.ts';
import { noteErrorCode } from './error-body.ts';
import { makeFormatError } from './format-error.ts';
import { withCode } from './with-code.ts';
import { complexityRule, parseWithLimits, type QueryLimits } from './query-limits.ts';
import type { RequestContext } from './schema.ts';
import type { VersionCatalog } from './version-catalog.ts';
import type { Lease } from './version-store.ts';

export interface GraphqlRouteOptions extends QueryLimits {
  readonly schema: GraphQLSchema;
  readonly catalog: VersionCatalog;
  readonly currentLabel: () => string | null;
  readonly maxBatch: number;
  readonly log: Logger;
}

function leaseOf(res: Response): Lease {
  return res.locals['lease'] as Lease;
}

/**
 * `extensions.row_count`: the results in the response, over its root fields (a list counts its
 * items, an object one, null nothing; `__typename` nothing; a `search` the results of its pages).
 */
function countRows(data: Record<string, unknown> | null | undefined, counted: ReadonlyMap<string, number> | undefined): number {
  let rows = 0;
  for (const [key, value] of Object.entries(data ?? {})) {
    // A search counts its edges (recorded by its resolver), not its one object.
    if (value !== null && counted?.has(key)) rows += counted.get(key)!;
    else if (Array.isArray(value)) rows += value.length;
    else if (value !== null && typeof value === 'object' && key !== '__schema' && key !== '__type') rows += 1;
  }
  return rows;
}

/**
 * POST (and GET) /v1/graphql through graphql-http. The request's lease is taken by the caller
 * before this runs, so the response and its `extensions.version_date` always name one version.
 */
export function graphqlRoute(options: GraphqlRouteOptions) {
  const hideInternal = makeFormatError((err) => options.log.error({ err: err.message }, 'internal error hidden from a response'));
  // graphql-http formats every error it sends (parse, validation, execution) without saying for
  // which request: the request being answered is carried by async context, so its log line and
  // metrics get the code the caller sees.
  const answering = new AsyncLocalStorage<Response>();
  const formatError = (err: Readonly<Error>) => {
    const formatted = hideInternal(err);
    const res = answering.getStore();
    if (res) noteErrorCode(res, String(formatted.extensions['code']));
    return formatted;
  };
  const documents = new DocumentCache(256);
  const handler = createHandler<RequestContext>({
    schema: options.schema,
    parse: (query) => documents.parse(typeof query === 'string' ? query : query.body, (q) => parseWithLimits(q, options)),
    // One schema and one rule list (ours after the specified rules), so a document's errors never change.
    validate: (schema, document, rules) => [...documents.validate(document, (doc) => graphqlValidate(schema, doc, rules).map((e) =>
      e.extensions['code'] ? e : withCode(e, ErrorCodes.GRAPHQL_VALIDATION_FAILED)))],
    validationRules: [complexityRule(options)],
    execute: makeCompiledExecute(options.schema),
    context: (req) => ({
      lease: leaseOf((req.context as { res: Response }).res), maxBatch: options.maxBatch, catalog: options.catalog, currentLabel: options.currentLabel,
      rowsByRootKey: new Map<string, number>(),
    }),
    onOperation: (req, args, result) => {
      const res = (req.context as { res: Response }).res;
      const rowCount = countRows((result as ExecutionResult).data, (args.contextValue as RequestContext).rowsByRootKey);
      res.locals['rowCount'] = rowCount;
      return { ...(result as ExecutionResult), extensions: { row_count: rowCount, version_date: leaseOf(res).version.label } };
    },
    formatError,
  }) as (req: Request, res: Response) => Promise<void>;
  return (req: Request, res: Response): Promise<void> => answering.run(res, () => handler(req, res));
}
