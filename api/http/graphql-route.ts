import type { Request, Response } from 'express';
import { AsyncLocalStorage } from 'node:async_hooks';
import { validate as graphqlValidate, type DocumentNode, type ExecutionResult, type GraphQLError, type GraphQLSchema } from 'graphql';
import { createHandler, type Request as HttpRequest, type Response as HttpResponse } from 'graphql-http';
import { ErrorCodes } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import { makeCompiledExecute } from '../graphql/compiled-execute.ts';
import { documentsFor } from '../graphql/document-cache.ts';
import { noteErrorCode } from './error-body.ts';
import { negotiateMediaType, type GraphqlMediaType } from './media-type.ts';
import { RawDocuments } from './raw-documents.ts';
import { makeFormatError } from '../graphql/format-error.ts';
import { withCode } from '../graphql/with-code.ts';
import { complexityRule, type QueryLimits } from '../graphql/query-limits.ts';
import type { SummaryGate } from '../search/summary-gate.ts';
import type { RequestContext } from '../graphql/request-context.ts';
import type { VersionCatalog } from '../versions/version-catalog.ts';
import { leaseOf } from './take-lease.ts';
import { requestState } from './request-state.ts';
import type { VersionDiffFn } from '../graphql/request-context.ts';
import { FETCH_RETRY_SECONDS } from '../lookup/unavailable-data.ts';
import { markStep } from '../../shared/step-marks.ts';

export interface GraphqlRouteOptions extends QueryLimits {
  readonly schema: GraphQLSchema;
  readonly catalog: VersionCatalog;
  readonly currentLabel: () => string | null;
  readonly maxBatch: number;
  /** `version_diff` (absent: the field answers an internal error). */
  readonly versionDiff?: VersionDiffFn;
  readonly log: Logger;
  /** The process's summary budget (api/search/summary-gate.ts), shared by both paths. */
  readonly summaries: SummaryGate;
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

/** A response of graphql-http's handler in the negotiated media type, with that type's status. */
function answer(headers: HttpRequest<unknown, unknown>['headers'], status: Readonly<Record<GraphqlMediaType, number>>, body: object): HttpResponse {
  const accept = typeof headers.get === 'function' ? headers.get('accept') : (headers as Record<string, string | undefined>)['accept'];
  const type: GraphqlMediaType = negotiateMediaType(accept ?? undefined) ?? 'application/json';
  const statusText = status[type] === 200 ? 'OK' : status[type] === 503 ? 'Service Unavailable' : 'Bad Request';
  return [JSON.stringify(body), { status: status[type], statusText, headers: { 'content-type': `${type}; charset=utf-8` } }];
}

/** A request whose data is not on this server yet (DATA_FETCHING): 503 under both types, with Retry-After. */
const FETCHING = { 'application/json': 503, 'application/graphql-response+json': 503 } as const;

/** A request that is not well-formed (no query, variables not an object): 400 under both types. */
const NOT_WELL_FORMED = { 'application/json': 400, 'application/graphql-response+json': 400 } as const;
/** An executed request (its `data`, with or without errors): 200 under both types. */
const SERVED = { 'application/json': 200, 'application/graphql-response+json': 200 } as const;
/** A well-formed request GraphQL refused (no `data`): 200 for JSON clients, 4xx for graphql-response+json. */
const NO_DATA = { 'application/json': 200, 'application/graphql-response+json': 400 } as const;

/**
 * POST (and GET) /v1/graphql and /v2/graphql through graphql-http. The request's lease is taken by the caller
 * before this runs, so the response and its `extensions.version_date` always name one version.
 */
export function graphqlRoute(options: GraphqlRouteOptions) {
  const hideInternal = makeFormatError((err) => options.log.error({ err: err.message }, 'internal error hidden from a response'));
  // graphql-http formats every error it sends (parse, validation, execution) without saying for
  // which request: the request being answered is carried by async context, so its log line and
  // metrics get the code the caller sees.
  const answering = new AsyncLocalStorage<Response>();
  // The request being answered's state: the route runs after readOperation (app.ts), which filled it.
  const readState = () => requestState(answering.getStore()!);
  const formatError = (err: Readonly<Error>) => {
    const formatted = hideInternal(err);
    const res = answering.getStore();
    if (res) noteErrorCode(res, String(formatted.extensions['code']));
    return formatted;
  };
  // The process's parsed documents (shared with the transport guard, rate limiter and request log).
  const documents = documentsFor(options.maxTokens);
  // Validation errors by document: one schema and one rule list per route, so they never change.
  const validated = new WeakMap<DocumentNode, readonly GraphQLError[]>();
  const handle = createHandler<Request, { res: Response; raw: RawDocuments }, RequestContext>({
    schema: options.schema,
    // The document readOperation parsed from these very parameters (the ones the hook below hands
    // graphql-http); when it did not parse, the cache throws its refusal.
    parse: (query) => readState().operation?.document ?? documents.parse(typeof query === 'string' ? query : query.body),
    // One schema and one rule list (ours after the specified rules), so a document's errors never change.
    validate: (schema, document, rules) => {
      markStep('validate');
      let errors = validated.get(document);
      if (!errors) {
        errors = graphqlValidate(schema, document, rules).map((e) => (e.extensions['code'] ? e : withCode(e, ErrorCodes.GRAPHQL_VALIDATION_FAILED)));
        validated.set(document, errors);
      }
      return [...errors];
    },
    validationRules: [complexityRule(options)],
    execute: makeCompiledExecute(options.schema),
    context: (req) => ({
      lease: leaseOf((req.context as { res: Response }).res), maxBatch: options.maxBatch, catalog: options.catalog, currentLabel: options.currentLabel,
      ...(options.versionDiff ? { versionDiff: options.versionDiff } : {}), rowsByRootKey: new Map<string, number>(), rawDocuments: (req.context as { raw: RawDocuments }).raw,
      summaries: options.summaries,
    }),
    // graphql-http answers its own request errors (missing query, bad variables) in JSON whatever
    // was negotiated: they are answered in the negotiated type here, with the same status.
    // graphql-http's reading of the parameters, done once by readOperation (the rate limiter and
    // the log read the same).
    parseRequestParams: (req) => {
      markStep('graphql-http');
      const read = readState().graphql!;
      return read.params ?? answer(req.headers, NOT_WELL_FORMED, { errors: [formatError(read.error)] });
    },
    onOperation: (req, args, result) => {
      markStep('respond');
      const res = (req.context as { res: Response }).res;
      const rowCount = countRows((result as ExecutionResult).data, (args.contextValue as RequestContext).rowsByRootKey);
      requestState(res).rowCount = rowCount;
      const body = { ...(result as ExecutionResult), extensions: { row_count: rowCount, version_date: leaseOf(res).version.label } };
      // No `data`: the request failed before execution (its variables did not coerce). Under
      // application/graphql-response+json that is a 4xx (GraphQL over HTTP); JSON clients get 200.
      if (!('data' in body) || body.data === undefined) return answer(req.headers, NO_DATA, { ...body, errors: body.errors?.map(formatError) });
      // A field needed a file not here yet and it did not come in time: the whole request is
      // answered 503 with Retry-After and no data, never a partial answer that lacks a week it has.
      const formatted = body.errors?.map(formatError);
      const fetching = formatted?.filter((e) => e.extensions['code'] === ErrorCodes.DATA_FETCHING) ?? [];
      if (fetching.length) {
        const [text, init] = answer(req.headers, FETCHING, { errors: fetching, extensions: body.extensions });
        return [text, { ...init, headers: { ...init.headers, 'retry-after': String(FETCH_RETRY_SECONDS) } }];
      }
      // Serialised here rather than by graphql-http, whose JSON.stringify takes a replacer that
      // visits every value looking for Error instances: an executed result holds none and its
      // errors are formatted here, and without the replacer V8 serialises it twice as fast.
      markStep('serialise');
      return answer(req.headers, SERVED, formatted ? { ...body, errors: formatted } : body);
    },
    formatError,
  });
  // graphql-http's Express adapter sends with writeHead().end(), which fixes the headers before the
  // body's length is known; sent with res.send instead, every answer has its Content-Length, so
  // compression can leave small answers as they are (COMPRESSION_MIN_BYTES).
  const handler = async (req: Request, res: Response): Promise<void> => {
    const raw = new RawDocuments();
    const [body, init] = await handle({ url: req.url, method: req.method, headers: req.headers, body: () => req.body as unknown as string, raw: req, context: { res, raw } });
    markStep('splice');
    res.status(init.status).set(init.headers ?? {});
    if (body === null) res.end();
    else {
      const sent = raw.splice(body);
      markStep('write');
      res.send(sent);
    }
  };
  return function answerGraphql(req: Request, res: Response): Promise<void> {
    return answering.run(res, () => handler(req, res));
  };
}
