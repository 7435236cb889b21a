import type { Request } from 'express';

/** The GraphQL-over-HTTP request parameters, as sent (unchecked: graphql-http checks them). */
export interface GraphqlParams {
  readonly query?: unknown;
  readonly variables?: unknown;
  readonly operationName?: unknown;
}

function jsonOrUndefined(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Reads the parameters the way graphql-http will: from the URL for GET (variables as JSON
 * text), from the parsed JSON body for POST. Anything else gives no parameters.
 */
export function requestParams(req: Request): GraphqlParams {
  if (req.method === 'GET') {
    const search = new URLSearchParams(req.url.split('?')[1] ?? '');
    return { query: search.get('query') ?? undefined, variables: jsonOrUndefined(search.get('variables')), operationName: search.get('operationName') ?? undefined };
  }
  const body: unknown = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return {};
  const { query, variables, operationName } = body as Record<string, unknown>;
  return { query, variables, operationName };
}
