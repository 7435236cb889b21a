import { expect } from 'chai';
import { inspectOperation } from '../../api/graphql/inspect-operation.ts';

const MAX_TOKENS = 5000;
const look = (query: unknown, variables?: unknown, operationName?: unknown) => inspectOperation({ query, variables, operationName }, MAX_TOKENS);

describe('inspectOperation: the operation a request selects and the Placekeys it asks for', () => {
  it('counts a variable list, a written list, a single value coerced to a list, and null', () => {
    const q = 'query($p: [Placekey!]) { batch_lookup(placekeys: $p) { placekey } }';
    expect(look(q, { p: ['a', 'b', 'c'] })).to.deep.equal({ type: 'query', placekeys: 3 });
    expect(look(q, { p: 'a' })).to.deep.equal({ type: 'query', placekeys: 1 });
    expect(look(q, { p: null })).to.deep.equal({ type: 'query', placekeys: 0 });
    expect(look(q, {})).to.deep.equal({ type: 'query', placekeys: 0 });
    expect(look(q, 'not an object')).to.deep.equal({ type: 'query', placekeys: 0 });
    expect(look('{ batch_lookup(placekeys: ["a", "b"]) { placekey } }')).to.deep.equal({ type: 'query', placekeys: 2 });
    expect(look('{ batch_lookup(placekeys: "a") { placekey } }')).to.deep.equal({ type: 'query', placekeys: 1 });
    expect(look('{ batch_lookup(placekeys: null) { placekey } }')).to.deep.equal({ type: 'query', placekeys: 0 });
    expect(look('{ batch_lookup { placekey } }')).to.deep.equal({ type: 'query', placekeys: 0 });
    expect(look('{ __typename }')).to.deep.equal({ type: 'query', placekeys: 0 });
  });

  it('counts one Placekey per `lookup` (the hosted API\'s single look-up), by response key, beside batch_lookup', () => {
    expect(look('query($k: Placekey!) { lookup(placekey: $k) { placekey } }', { k: 'a' })).to.deep.equal({ type: 'query', placekeys: 1 });
    expect(look('{ a: lookup(placekey: "a") { placekey } b: lookup(placekey: "b") { placekey } a: lookup(placekey: "a") { placekey } batch_lookup(placekeys: ["c", "d"]) { placekey } }'))
      .to.deep.equal({ type: 'query', placekeys: 4 });
  });

  it('counts batch_match as batch_lookup, one per query (variable or written), and lookup(query:) as one', () => {
    const q = 'query($q: [PlaceQuery!]!) { batch_match(queries: $q) { placekey } }';
    expect(look(q, { q: [{ location_name: 'a' }, { location_name: 'b' }, { location_name: 'c' }] })).to.deep.equal({ type: 'query', placekeys: 3 });
    expect(look(q, { q: { location_name: 'a' } })).to.deep.equal({ type: 'query', placekeys: 1 });
    expect(look('{ batch_match(queries: [{ street_address: "1 Main St", postal_code: "1" }, { street_address: "2 Main St", postal_code: "1" }], min_confidence: 0.5) { placekey } }'))
      .to.deep.equal({ type: 'query', placekeys: 2 });
    expect(look('{ a: batch_match(queries: { location_name: "x" }) { placekey } lookup(query: { location_name: "y" }) { placekey } batch_lookup(placekeys: ["c"]) { placekey } }'))
      .to.deep.equal({ type: 'query', placekeys: 3 });
  });

  it('charges a search the `first` of each of its pages (20 when not given, at most 1000), by response key, through fragments', () => {
    const page = (args: string) => `search(filter: {}) { places { results${args} { edges { cursor } } } }`;
    expect(look(`{ ${page('')} }`)).to.deep.equal({ type: 'query', placekeys: 20 });
    expect(look(`{ ${page('(first: 500)')} }`)).to.deep.equal({ type: 'query', placekeys: 500 });
    expect(look(`{ ${page('(first: 5000)')} }`)).to.deep.equal({ type: 'query', placekeys: 1000 });
    expect(look(`{ ${page('(first: null)')} }`)).to.deep.equal({ type: 'query', placekeys: 20 });
    const q = `query($n: Int, $m: Int = 7) { ${page('(first: $n)')} b: search { places { results(first: $m) { edges { cursor } } } } }`;
    expect(look(q, { n: 300 })).to.deep.equal({ type: 'query', placekeys: 307 });
    expect(look(q, { n: null, m: 2 })).to.deep.equal({ type: 'query', placekeys: 22 });
    expect(look(q, { n: 'x' })).to.deep.equal({ type: 'query', placekeys: 27 });
    // Two pages under aliases, one through a fragment; a search without results costs nothing (at least 1 is charged later).
    expect(look(`{ search { places { a: results(first: 3) { edges { cursor } } ...R } } s: search { __typename } } fragment R on PlaceSearchResults { results(first: 4) { edges { cursor } } }`))
      .to.deep.equal({ type: 'query', placekeys: 7 });
  });

  it('/v1\'s early names cost as batch_lookup and lookup; /v1\'s search its own `first`; /v2\'s weekly results the `first` of each page', () => {
    expect(look('query($p: [Placekey!]) { places(placekeys: $p) { placekey } place(placekey: "a") { placekey } }', { p: ['a', 'b', 'c'] })).to.deep.equal({ type: 'query', placekeys: 4 });
    expect(look('{ search(first: 500 after: 500 filter: { address: { iso_country_code: "US" } }) { placekey } }')).to.deep.equal({ type: 'query', placekeys: 500 });
    expect(look('{ search(filter: { brand: "x" }) { safegraph_core { location_name } } }')).to.deep.equal({ type: 'query', placekeys: 20 });
    expect(look('query($n: Int) { search(first: $n) { placekey } }', { n: 7 })).to.deep.equal({ type: 'query', placekeys: 7 });
    // On /v1 a `weekly_patterns` inside a search's entries is an entry's range, not a page.
    expect(look('{ search { weekly_patterns(start_date: "2022-01-01", end_date: "2022-02-01") { raw_visit_counts } } }')).to.deep.equal({ type: 'query', placekeys: 20 });
    const weekly = 'query($c: String) { search(filter: { naics_code: 722410 }) { weekly_patterns(start_date: "2022-03-20", end_date: "2022-03-21") { results(first: 500, after: $c) { edges { cursor } } } places { results(first: 3) { edges { cursor } } } } }';
    expect(look(weekly, { c: '' })).to.deep.equal({ type: 'query', placekeys: 503 });
  });

  it('charges a summary 100 points per week of its range (literal or variables, /v1 and /v2 forms); one week without a range or with a bad one', () => {
    const v1 = (args: string) => `{ patterns_summary${args} { groups { pois } } }`;
    expect(look(v1('(weeks: { from: "2022-01-03", to: "2022-01-30" })'))).to.deep.equal({ type: 'query', placekeys: 400 });
    expect(look(v1('(weeks: { from: "2022-01-09", to: "2022-01-10" })'))).to.deep.equal({ type: 'query', placekeys: 200 }); // a Sunday and the Monday after
    expect(look(v1('(weeks: { from: "2020-01-06", to: "2021-12-31" })'))).to.deep.equal({ type: 'query', placekeys: 10_400 });
    expect(look(v1(''))).to.deep.equal({ type: 'query', placekeys: 100 });
    expect(look(v1('(weeks: { from: "2022-01-30", to: "2022-01-03" })'))).to.deep.equal({ type: 'query', placekeys: 100 });
    expect(look(v1('(weeks: { from: "nope", to: "2022-01-03" })'))).to.deep.equal({ type: 'query', placekeys: 100 });
    const whole = 'query($w: SummaryWeeks) { patterns_summary(weeks: $w) { groups { pois } } }';
    expect(look(whole, { w: { from: '2022-01-03', to: '2022-01-16' } })).to.deep.equal({ type: 'query', placekeys: 200 });
    const parts = 'query($f: String!, $t: String!) { a: patterns_summary(weeks: { from: $f, to: $t }) { groups { pois } } b: patterns_summary { groups { pois } } }';
    expect(look(parts, { f: '2022-01-03', t: '2022-03-27' })).to.deep.equal({ type: 'query', placekeys: 1200 + 100 });
    const v2 = 'query($s: DateTime) { patterns_summary(start_date: $s, end_date: "2022-01-23T00:00:00-05:00") { groups { pois } } }';
    expect(look(v2, { s: '2022-01-03' })).to.deep.equal({ type: 'query', placekeys: 300 });
  });

  it('charges a monthly summary 100 points per month of its range; one month without a range', () => {
    const v1 = (args: string) => `{ monthly_patterns_summary${args} { groups { pois } } }`;
    expect(look(v1('(months: { from: "2022-01-15", to: "2022-03-01" })'))).to.deep.equal({ type: 'query', placekeys: 300 });
    expect(look(v1('(months: { from: "2021-12-31", to: "2022-01-01" })'))).to.deep.equal({ type: 'query', placekeys: 200 });
    expect(look(v1(''))).to.deep.equal({ type: 'query', placekeys: 100 });
    const whole = 'query($m: SummaryMonths) { monthly_patterns_summary(months: $m) { groups { pois } } }';
    expect(look(whole, { m: { from: '2020-01-01', to: '2021-12-31' } })).to.deep.equal({ type: 'query', placekeys: 2400 });
  });

  it('uses a variable\'s default when the variable is not sent', () => {
    const q = 'query($p: [Placekey!] = ["a", "b"]) { batch_lookup(placekeys: $p) { placekey } }';
    expect(look(q)).to.deep.equal({ type: 'query', placekeys: 2 });
    expect(look(q, { p: ['a'] })).to.deep.equal({ type: 'query', placekeys: 1 });
  });

  it('sums the root fields by response key, through fragments, once per key (GraphQL merges repeats)', () => {
    const q = `query($p: [Placekey!]) {
      a: batch_lookup(placekeys: $p) { placekey }
      batch_lookup(placekeys: ["x"]) { placekey }
      batch_lookup(placekeys: ["x"]) { placekey }
      ...f ...f
      ... on Query { c: batch_lookup(placekeys: ["x", "y", "z"]) { placekey } }
    }
    fragment f on Query { b: batch_lookup(placekeys: $p) { placekey } ...g }
    fragment g on Query { ...f }`;
    expect(look(q, { p: ['1', '2', '3', '4'] })).to.deep.equal({ type: 'query', placekeys: 4 + 1 + 4 + 3 });
  });

  it('selects the operation by name, and knows none when the request does not name one of several', () => {
    const q = 'query A { batch_lookup(placekeys: ["a"]) { placekey } } query B { batch_lookup(placekeys: ["a", "b"]) { placekey } } mutation M { x }';
    expect(look(q, undefined, 'B')).to.deep.equal({ type: 'query', placekeys: 2 });
    expect(look(q, undefined, 'M')).to.deep.equal({ type: 'mutation', placekeys: 0 });
    expect(look(q)).to.deep.equal({ type: null, placekeys: 0 });
    expect(look(q, undefined, 'C')).to.deep.equal({ type: null, placekeys: 0 });
    expect(look('{ __typename }', undefined, 'A')).to.deep.equal({ type: null, placekeys: 0 });
  });

  it('gives no operation for what does not parse, is over the token limit, or is not a string', () => {
    expect(look('{ batch_lookup(')).to.deep.equal({ type: null, placekeys: 0 });
    expect(look('{' + ' __typename'.repeat(MAX_TOKENS + 1) + ' }')).to.deep.equal({ type: null, placekeys: 0 });
    expect(look(42)).to.deep.equal({ type: null, placekeys: 0 });
    expect(look(undefined)).to.deep.equal({ type: null, placekeys: 0 });
  });

  it('answers the same for a document it has seen before (cached by text) with new variables', () => {
    const q = 'query($p: [Placekey!]) { batch_lookup(placekeys: $p) { placekey } }';
    expect([look(q, { p: ['a'] }), look(q, { p: ['a', 'b'] }), look(q, { p: [] })].map((s) => s.placekeys)).to.deep.equal([1, 2, 0]);
  });
});
