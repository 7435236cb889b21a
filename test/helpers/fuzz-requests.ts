import fc from 'fast-check';
import { CORE_FIELDS, WEEKLY_FIELDS } from './graphql-client.ts';
import { KEYS } from './write-csv.ts';

/** One HTTP request to send: what the fuzz cases are made of. */
export interface FuzzRequest {
  readonly kind: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
}

/** `arb` in about `percent`% of cases, else null (absent). */
function sometimes<T>(arb: fc.Arbitrary<T>, percent: number): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: percent, arbitrary: arb }, { weight: 100 - percent, arbitrary: fc.constant(null) });
}

const FIELDS = ['batch_lookup', 'placekey', 'placedata_core', 'placedata_weekly_patterns', ...CORE_FIELDS.split(' '), ...WEEKLY_FIELDS.split(' '), '__typename', '__schema', '__type', 'types', 'name', 'fields', 'ofType'];
const TYPES = ['Query', 'PlaceEntry', 'PlaceCore', 'WeeklyPatterns', 'Placekey', 'String', 'Mutation', 'Nope'];

/** Valid documents: the spec's shapes and the ones the API tests use. */
export const VALID_QUERIES = [
  `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey placedata_core { ${CORE_FIELDS} } } }`,
  `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey placedata_weekly_patterns(date: "2022-03-21") { ${WEEKLY_FIELDS} } } }`,
  `query($p: [Placekey!], $d: String) { batch_lookup(placekeys: $p) { placekey ...c w: placedata_weekly_patterns(date: $d) { visits_by_day } } } fragment c on PlaceEntry { placedata_core { city naics_code } }`,
  '{ __typename batch_lookup(placekeys: ["222-222@5vg-7gq-tvz"]) { placekey } }',
  '{ __schema { types { name fields { name type { name ofType { name } } } } } }',
];

const SQL_LIKE = [
  "'; DROP TABLE users; --", "' OR '1'='1", '" OR ""="', "1; SELECT * FROM users", "x' UNION SELECT password FROM accounts --",
  "222-222@5vg-7gq-tvz'; DELETE FROM t; --", "$1", "'); COPY t TO '/etc/passwd'; --", "\\'; ATTACH 'x.db' AS x; --", 'NULL', '%', '_', "\\x00",
];

const token = fc.constantFrom('{', '}', '(', ')', '[', ']', '$', '...', '@', '"', '"""', ':', '!', '=', '|', '&', ',', '#', '\n', '\\u', 'query', 'fragment', 'on', 'mutation', 'subscription');
const gqlName = fc.oneof(fc.constantFrom(...FIELDS), fc.stringMatching(/^[_A-Za-z][_0-9A-Za-z]{0,10}$/));
const unicode = fc.string({ unit: 'binary', maxLength: 60 });
const controls = fc.array(fc.integer({ min: 0, max: 31 }), { minLength: 1, maxLength: 20 }).map((cs) => String.fromCharCode(...cs));

/** Placekeys as clients might send them, hostile ones included. */
export const placekeyArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...KEYS, 'vp6-j9n@62j-shx-8qf', '222-222@5vg-7gq-tvz', '5vg-7gq-tvz') },
  fc.tuple(fc.constantFrom(...KEYS), fc.nat(), fc.string({ unit: 'binary', minLength: 1, maxLength: 3 })).map(([k, i, c]) => k.slice(0, i % k.length) + c + k.slice((i % k.length) + 1)),
  fc.constantFrom(...SQL_LIKE),
  unicode,
  controls,
  fc.tuple(fc.constantFrom('a', '🙂', "'", '\u0000', '222-'), fc.integer({ min: 100, max: 100_000 })).map(([s, n]) => s.repeat(n)),
  fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant({}), fc.constant([KEYS[0]])),
);

/** `date` values: real dates, impossible ones, near misses and other types. */
export const dateArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  fc.tuple(fc.integer({ min: -99999, max: 99999 }), fc.integer({ min: -1, max: 14 }), fc.integer({ min: -1, max: 40 })).map(([y, m, d]) => `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`),
  fc.constantFrom('2022-02-29', '2022-02-30', '2022-3-21', '2022-03-21T00:00:00Z', '2022-03-21 ', ' 2022-03-21', '２０２２-０３-２１', '2022-03-21\u0000', '', '0000-00-00', '+002022-03-21', '2022/03/21'),
  unicode,
  fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant(['2022-03-21']), fc.constant({ date: '2022-03-21' })),
);

/** A GraphQL literal value, nested. */
const literal: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
  v: fc.oneof({ depthSize: 'small', maxDepth: 4 },
    fc.integer().map(String), fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
    fc.oneof(placekeyArb, dateArb).map((x) => JSON.stringify(typeof x === 'string' ? x : String(x))),
    fc.constantFrom('null', 'true', 'false', 'RED', '$placekeys', '$p', '$d', '$undefined'),
    fc.array(tie('v'), { maxLength: 4 }).map((xs) => `[${xs.join(', ')}]`),
    fc.array(fc.tuple(gqlName, tie('v')), { maxLength: 3 }).map((kv) => `{ ${kv.map(([k, v]) => `${k}: ${v}`).join(', ')} }`)),
})).v;

const args = fc.array(fc.tuple(fc.constantFrom('placekeys', 'date', 'if', 'x', 'first'), literal), { maxLength: 3 })
  .map((a) => (a.length ? `(${a.map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''));
const directives = fc.array(fc.tuple(fc.constantFrom('include', 'skip', 'deprecated', 'defer', 'nope'), literal), { maxLength: 2 })
  .map((ds) => ds.map(([d, v]) => ` @${d}(if: ${v})`).join(''));

/** Selection sets with random aliases, arguments, directives, inline fragments and spreads. */
const selectionSet: fc.Arbitrary<string> = fc.letrec<{ set: string; sel: string }>((tie) => ({
  set: fc.array(tie('sel'), { minLength: 1, maxLength: 5 }).map((s) => `{ ${s.join(' ')} }`),
  sel: fc.oneof({ depthSize: 'small', maxDepth: 5 },
    fc.tuple(fc.option(gqlName, { freq: 3 }), gqlName, args, directives, fc.option(tie('set'), { freq: 2 }))
      .map(([alias, name, a, d, set]) => `${alias ? alias + ': ' : ''}${name}${a}${d}${set ? ' ' + set : ''}`),
    fc.tuple(fc.option(fc.constantFrom(...TYPES)), directives, tie('set')).map(([t, d, set]) => `...${t ? ' on ' + t : ''}${d} ${set}`),
    fc.constantFrom('...F0', '...F1', '...F2', '...Missing')),
})).set;

const variableDefs = fc.array(fc.tuple(fc.constantFrom('placekeys', 'p', 'd', 'x'), fc.constantFrom('[Placekey!]', '[Placekey]', 'Placekey!', 'String', 'String!', 'Int', '[[Placekey!]!]', 'Boolean', 'Nope')), { maxLength: 3 })
  .map((vs) => (vs.length ? `(${vs.map(([n, t]) => `$${n}: ${t}`).join(', ')})` : ''));

/** Whole documents built from the grammar: operations plus fragments, possibly cyclic. */
const structured = fc.tuple(
  fc.array(fc.tuple(fc.constantFrom('query', 'query Q', 'mutation', 'subscription', ''), variableDefs, selectionSet), { minLength: 1, maxLength: 2 }),
  fc.array(fc.tuple(fc.constantFrom('F0', 'F1', 'F2'), fc.constantFrom(...TYPES), selectionSet), { maxLength: 3 }),
).map(([ops, frags]) => [
  ...ops.map(([op, vars, set]) => (op === '' ? set : `${op}${vars} ${set}`)),
  ...frags.map(([n, t, set]) => `fragment ${n} on ${t} ${set}`),
].join('\n'));

/** A valid document with random edits: deletions, insertions of tokens or text, repeated slices. */
const mutated = fc.tuple(fc.constantFrom(...VALID_QUERIES), fc.array(fc.tuple(fc.nat(), fc.nat({ max: 20 }), fc.oneof(token, gqlName, unicode), fc.constantFrom('delete', 'insert', 'repeat')), { minLength: 1, maxLength: 6 }))
  .map(([q, edits]) => edits.reduce((doc, [at, len, text, op]) => {
    const i = at % (doc.length + 1);
    if (op === 'delete') return doc.slice(0, i) + doc.slice(i + len);
    if (op === 'insert') return doc.slice(0, i) + text + doc.slice(i);
    return doc.slice(0, i) + doc.slice(i, i + len).repeat(1 + (len % 5)) + doc.slice(i);
  }, q));

/** Nesting far beyond the depth limit: selections, lists, objects, fragment chains, unbalanced braces. */
const deep = fc.tuple(fc.integer({ min: 5, max: 3000 }), fc.constantFrom('fields', 'lists', 'objects', 'fragments', 'unbalanced', 'introspection')).map(([n, how]) => {
  if (how === 'fields') return `{ ${'batch_lookup(placekeys: []) { '.repeat(n)}placekey${' }'.repeat(n)} }`;
  if (how === 'lists') return `{ batch_lookup(placekeys: ${'['.repeat(n)}"222-222@5vg-7gq-tvz"${']'.repeat(n)}) { placekey } }`;
  if (how === 'objects') return `{ batch_lookup(placekeys: ${'{a: '.repeat(n)}1${'}'.repeat(n)}) { placekey } }`;
  if (how === 'unbalanced') return `{ ${'{ a '.repeat(n)}`;
  if (how === 'introspection') return `{ __schema { types { ${'fields { type { ofType { '.repeat(Math.min(n, 300))}name${' } } }'.repeat(Math.min(n, 300))} } } }`;
  const count = Math.min(n, 200);
  const frags = Array.from({ length: count }, (_, i) => `fragment G${i} on PlaceEntry { placekey ...G${i + 1} ...G${i + 1} }`);
  return `{ batch_lookup(placekeys: ["222-222@5vg-7gq-tvz"]) { ...G0 } } ${frags.join(' ')} fragment G${count} on PlaceEntry { placekey }`;
});

const coreSub = fc.subarray(CORE_FIELDS.split(' '), { minLength: 1 }).map((fs) => `{ ${fs.join(' ')} }`);
const weeklySub = fc.subarray(WEEKLY_FIELDS.split(' '), { minLength: 1 }).map((fs) => `{ ${fs.join(' ')} }`);
const dateArg = fc.oneof(fc.constant(''), fc.constant('(date: $d)'), fc.constant('(date: null)'), dateArb.map((d) => `(date: ${JSON.stringify(typeof d === 'string' ? d : String(d))})`));
const alias = fc.option(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/), { freq: 2 }).map((a) => (a ? `${a}: ` : ''));
const entrySelection = fc.oneof(
  fc.constant('placekey'), fc.constant('__typename'),
  fc.tuple(alias, coreSub).map(([a, sub]) => `${a}placedata_core ${sub}`),
  fc.tuple(alias, dateArg, weeklySub).map(([a, d, sub]) => `${a}placedata_weekly_patterns${d} ${sub}`),
  fc.tuple(alias, dateArg, weeklySub).map(([a, d, sub]) => `... on PlaceEntry { ${a}placedata_weekly_patterns${d} ${sub} }`),
  fc.constant('...E'),
);

/** Documents of the spec's shape (so they reach the data): random selections, aliases, dates, fragments. */
const shaped = fc.tuple(fc.array(entrySelection, { minLength: 1, maxLength: 40 }), fc.array(entrySelection, { minLength: 1, maxLength: 4 }),
  fc.oneof({ weight: 6, arbitrary: fc.constantFrom('$p', '$placekeys') }, fc.constantFrom('["vp6-j9n@62j-shx-8qf", "222-222@5vg-7gq-tvz"]', '[]', 'null', '"vp6-j9n@62j-shx-8qf"')), fc.boolean())
  .map(([picked, frag, keys, distinct]) => {
    // Mostly a distinct response name per field, so the document is valid; otherwise conflicts are likely.
    const sels = distinct ? picked.map((sel, i) => (/^placedata_/.test(sel) ? `f${i}: ${sel}` : sel)) : picked;
    const fragment = frag.filter((f) => f !== '...E').join(' ') || 'placekey';
    const body = `batch_lookup(placekeys: ${keys}) { ${sels.join(' ')} }`;
    const used = `${body} ${sels.includes('...E') ? fragment : ''}`;
    // Only the variables the operation uses: an unused one fails validation before any data is read.
    const vars = [['$p', '[Placekey!]'], ['$placekeys', '[Placekey!]'], ['$d', 'String']].filter(([v]) => new RegExp(`\\${v}\\b`).test(used));
    const defs = vars.length ? `(${vars.map(([v, t]) => `${v}: ${t}`).join(', ')})` : '';
    return `query${defs} { ${body} }${sels.includes('...E') ? ` fragment E on PlaceEntry { ${fragment} }` : ''}`;
  });

/** Documents of every kind. */
export const documentArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: shaped },
  { weight: 3, arbitrary: structured },
  { weight: 3, arbitrary: mutated },
  { weight: 2, arbitrary: fc.constantFrom(...VALID_QUERIES) },
  deep,
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.array(fc.oneof(token, gqlName), { maxLength: 60 }).map((ts) => ts.join(' ')),
);

/** Variables a look-up expects, with mostly real Placekeys (some hostile) and any `date`. */
const goodVariables = fc.record({
  p: fc.array(fc.oneof({ weight: 20, arbitrary: fc.constantFrom(...KEYS, 'vp6-j9n@62j-shx-8qf') }, placekeyArb), { maxLength: 1000 }),
  placekeys: fc.array(fc.constantFrom(...KEYS), { maxLength: 50 }),
  d: fc.option(fc.oneof({ weight: 3, arbitrary: fc.constantFrom('2022-03-07', '2022-03-16', '2022-03-27', '2022-03-28', '2021-01-04') }, dateArb)),
}, { requiredKeys: [] });

/** Variables: well-typed, wrong-typed, nested, huge (near and over the body limit), or not an object at all. */
export const variablesArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ placekeys: fc.array(placekeyArb, { maxLength: 20 }), p: fc.array(placekeyArb, { maxLength: 5 }), d: dateArb }, { requiredKeys: [] }) },
  { weight: 10, arbitrary: goodVariables },
  fc.record({ placekeys: placekeyArb, d: fc.oneof(dateArb, fc.jsonValue({ maxDepth: 3 })) }),
  fc.tuple(fc.integer({ min: 900, max: 14_000 }), fc.constantFrom(...KEYS, 'x', '')).map(([n, k]) => ({ placekeys: Array<string>(n).fill(k) })),
  fc.jsonValue({ maxDepth: 4 }),
  fc.constantFrom(null, 'string', 42, [], [{ placekeys: [KEYS[0]] }]),
);

const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,80}$/);
const headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/).filter((n) => !['content-length', 'host', 'connection', 'transfer-encoding', 'expect', 'upgrade', 'keep-alive', 'te', 'trailer'].includes(n));

const headersArb = fc.record({
  'content-type': fc.option(fc.oneof({ weight: 40, arbitrary: fc.constant('application/json') }, fc.constantFrom('application/json; charset=utf-8', 'application/json; charset=latin1', 'application/json; charset=utf-16',
    'application/graphql-response+json', 'application/graphql', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json;;;', ''), headerValue), { freq: 12 }),
  accept: sometimes(fc.oneof({ weight: 6, arbitrary: fc.constantFrom('*/*', 'application/json', 'application/graphql-response+json') }, fc.constantFrom('text/html', 'application/xml', 'application/graphql-response+json;q=0', 'application/*'), headerValue), 30),
  apikey: fc.option(fc.oneof({ weight: 12, arbitrary: fc.constant('VALID') }, headerValue, fc.constantFrom('', 'VALID ', ' VALID', 'valid')), { freq: 20 }),
  'content-encoding': sometimes(fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-nope'), 4),
  extra: fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, fc.dictionary(headerName, headerValue, { maxKeys: 3 })),
}).map(({ extra, ...h }) => {
  const out: Record<string, string> = { ...extra };
  for (const [k, v] of Object.entries(h)) if (v !== null) out[k] = v;
  return out;
});

const jsonBody = fc.record({
  query: documentArb, variables: variablesArb,
  operationName: sometimes(fc.oneof(fc.constantFrom('Q', 'F0'), gqlName, fc.integer()), 10),
  extensions: sometimes(fc.jsonValue({ maxDepth: 2 }), 10),
}, { requiredKeys: ['query', 'variables'] }).map(({ operationName, extensions, ...b }) => ({ ...b, ...(operationName === null ? {} : { operationName }), ...(extensions === null ? {} : { extensions }) }));

/** A request body: a GraphQL request, one with fields of the wrong types, a batch, raw text, or near the size limit. */
const bodyArb: fc.Arbitrary<{ kind: string; body: string }> = fc.oneof(
  { weight: 10, arbitrary: jsonBody.map((b) => ({ kind: 'graphql', body: JSON.stringify(b) })) },
  fc.record({ query: fc.jsonValue({ maxDepth: 2 }), variables: fc.jsonValue({ maxDepth: 2 }) }).map((b) => ({ kind: 'wrong-types', body: JSON.stringify(b) })),
  fc.array(jsonBody, { maxLength: 3 }).map((b) => ({ kind: 'batch', body: JSON.stringify(b) })),
  fc.oneof(fc.string({ unit: 'binary', maxLength: 500 }), fc.constantFrom('', '{', 'null', '[]', '"query"', '{"query": "{ __typename }"')).map((body) => ({ kind: 'raw', body })),
  fc.integer({ min: 200_000, max: 300_000 }).map((n) => ({ kind: 'near-limit', body: `{"query":"{ __typename }${' '.repeat(n)}"}` })),
  // Built as text: nesting this deep overflows JSON.stringify on the client side.
  fc.tuple(fc.constantFrom(...VALID_QUERIES), fc.integer({ min: 10, max: 50_000 }), fc.constantFrom('[', '{"a":')).map(([q, n, open]) => ({
    kind: 'deep-variables', body: `{"query":${JSON.stringify(q)},"variables":{"placekeys":${open.repeat(n)}1${(open === '[' ? ']' : '}').repeat(n)}}}`,
  })),
);

/** Percent-encodes the UTF-8 bytes of any string (encodeURIComponent throws on a lone surrogate). */
function percentEncode(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : '%' + b.toString(16).toUpperCase().padStart(2, '0'))).join('');
}

/** GET requests with the document in the query string, well formed or not (slicing may cut an escape: fine). */
const getArb = fc.tuple(documentArb, fc.option(variablesArb), fc.constantFrom('', '&variables=%', '&query=', '&operationName=Q')).map(([q, v, tail]) => ({
  kind: 'get', body: null,
  path: `/v1/graphql?query=${percentEncode(q).slice(0, 6000)}${v === null ? '' : `&variables=${percentEncode(JSON.stringify(v) ?? '').slice(0, 4000)}`}${tail}`,
}));

const pathArb = fc.oneof({ weight: 20, arbitrary: fc.constant('/v1/graphql') },
  fc.constantFrom('/v1/graphql/', '/v1/GRAPHQL', '/v1/graphql?x=%zz', '/%', '/v1/%E0%A4%A', '/v1/graphql/..%2f..%2fetc%2fpasswd', '/healthz?x=1', '/readyz', '//v1/graphql'));

/** Well-formed look-ups (random selections, aliases, fragments, dates, keys): the requests that reach DuckDB. */
const lookupArb = fc.tuple(shaped, goodVariables, fc.constantFrom('application/json', 'application/graphql-response+json')).map(([query, variables, accept]) => ({
  kind: 'lookup', method: 'POST', path: '/v1/graphql', headers: { 'content-type': 'application/json', accept, apikey: 'VALID' }, body: JSON.stringify({ query, variables }),
}));

/** Any request a client, a scanner or a broken proxy might send. */
export const requestArb: fc.Arbitrary<FuzzRequest> = fc.oneof(
  { weight: 4, arbitrary: lookupArb },
  { weight: 9, arbitrary: fc.tuple(bodyArb, headersArb, pathArb, fc.oneof({ weight: 30, arbitrary: fc.constant('POST') }, fc.constantFrom('PUT', 'PATCH', 'DELETE'))).map(([b, headers, path, method]) => ({ kind: b.kind, method, path, headers, body: b.body })) },
  { weight: 1, arbitrary: fc.tuple(getArb, headersArb).map(([g, headers]) => ({ kind: g.kind, method: 'GET', path: g.path, headers, body: null })) },
);
