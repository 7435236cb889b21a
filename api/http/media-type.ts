export type GraphqlMediaType = 'application/graphql-response+json' | 'application/json';

/**
 * The media type a GraphQL answer is sent in, chosen from `Accept` exactly as graphql-http
 * chooses it (same parsing, same order: the first acceptable entry wins; none or `*\/*` means
 * JSON), or null when `Accept` admits neither. Refusals made before graphql-http runs (401, 413,
 * 415, 429, ...) use it too, so a client gets every answer in the type it asked for.
 */
export function negotiateMediaType(accept: string | undefined): GraphqlMediaType | null {
  for (const entry of (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [type, ...params] = entry.split(';');
    const charset = params.find((p) => p.includes('charset=')) ?? 'charset=utf-8';
    if (type === 'application/graphql-response+json' && charset === 'charset=utf-8') return 'application/graphql-response+json';
    if ((type === 'application/json' || type === 'application/*' || type === '*/*') && (charset === 'charset=utf-8' || charset === 'charset=utf8')) return 'application/json';
  }
  return null;
}
