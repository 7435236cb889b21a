import { expect } from 'chai';
import type { Request, Response } from 'express';
import { readOperation } from '../../api/http/operation-facts.ts';
import { operationOf, outcomeOf } from '../../api/http/request-kind.ts';

/**
 * The operation of a request with this method, URL and parsed body, as the app derives it: read
 * by readOperation (when its body was parsed, or it is a GET), then labelled by operationOf.
 */
async function operationOfRequest(method: string, url: string, body?: unknown): Promise<string | null> {
  const res = {} as Response;
  const req = { method, url, path: url.split('?')[0]!, body, headers: { 'content-type': 'application/json' }, res } as unknown as Request;
  const path = req.path.toLowerCase();
  if (path.includes('graphql') && (body !== undefined || method === 'GET')) {
    await new Promise<void>((resolve, reject) => readOperation(5000)(req, res, (err?: unknown) => (err ? reject(err as Error) : resolve())));
  }
  return operationOf(req, res);
}

describe('request kind: the bounded operation and outcome labels of metrics and logs', () => {
  it('names the operation by the kinds of its root fields', async () => {
    const post = (query: unknown, operationName?: string) => operationOfRequest('POST', '/v1/graphql', { query, operationName });
    expect(await Promise.all([
      post('{ batch_lookup(placekeys: ["a"]) { placekey } }'),
      post('{ a: lookup(placekey: "a") { placekey } b: lookup(placekey: "b") { placekey } __typename }'),
      post('{ search { places { results { edges { cursor } } } } }'),
      post('{ batch_match(queries: [{ street_address: "1 Main St", postal_code: "94107" }]) { placekey } }'),
      post('{ lookup(query: { location_name: "Taco Bell", postal_code: "94107" }) { placekey } }'),
      post('{ dataset_versions { label } }'),
      post('{ __schema { types { name } } __typename }'),
      post('{ batch_lookup(placekeys: ["a"]) { placekey } dataset_versions { label } }'),
      post('query A { lookup(placekey: "a") { placekey } } query B { dataset_versions { label } }', 'B'),
      post('query A { lookup(placekey: "a") { placekey } } query B { dataset_versions { label } }'),
      post('{ nope }'),
      post('{ batch_lookup('),
      post(42),
      operationOfRequest('POST', '/v1/graphql'),
      operationOfRequest('GET', '/v1/graphql?query=%7B%20lookup(placekey%3A%20%22a%22)%20%7B%20placekey%20%7D%20%7D'),
      operationOfRequest('POST', '/V1/GraphQL/', { query: '{ dataset_versions { label } }' }),
      operationOfRequest('GET', '/v1/export/weekly'),
      operationOfRequest('GET', '/healthz'),
      operationOfRequest('GET', '/metrics'),
    ])).to.deep.equal(['batch_lookup', 'lookup', 'search', 'batch_match', 'lookup', 'dataset_versions', 'introspection', 'mixed', 'dataset_versions', 'other', 'other', 'other', 'other',
      'unknown', 'lookup', 'dataset_versions', 'export', null, null]);
  });

  it('derives the outcome from the status and the code the answer carried', () => {
    expect([
      outcomeOf(200, undefined, true),
      outcomeOf(200, 'BAD_PLACEKEY', true),
      outcomeOf(401, 'UNAUTHENTICATED', true),
      outcomeOf(429, 'RATE_LIMITED', true),
      outcomeOf(503, 'NOT_READY', true),
      outcomeOf(503, 'DATA_FETCHING', true),
      outcomeOf(200, 'INTERNAL_SERVER_ERROR', true),
      outcomeOf(500, undefined, true),
      outcomeOf(406, undefined, true),
      outcomeOf(200, 'SOMETHING_NEW', true),
      outcomeOf(200, undefined, false),
    ]).to.deep.equal([
      { outcome: 'ok', code: 'none' },
      { outcome: 'refused', code: 'BAD_PLACEKEY' },
      { outcome: 'refused', code: 'UNAUTHENTICATED' },
      { outcome: 'rate_limited', code: 'RATE_LIMITED' },
      { outcome: 'error', code: 'NOT_READY' },
      { outcome: 'error', code: 'DATA_FETCHING' },
      { outcome: 'error', code: 'INTERNAL_SERVER_ERROR' },
      { outcome: 'error', code: 'INTERNAL_SERVER_ERROR' },
      { outcome: 'refused', code: 'BAD_REQUEST' },
      { outcome: 'refused', code: 'OTHER' },
      { outcome: 'aborted', code: 'none' },
    ]);
  });
});
