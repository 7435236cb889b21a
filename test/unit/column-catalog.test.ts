import { expect } from 'chai';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { parseSql } from '../../shared/column-catalog.ts';
import { quoteLiteral } from '../../shared/sql.ts';

/** The integer list and map parsers refuse (NULL) a value they would round, spaces after `,` `[` or `:` or not. */
describe('parseSql refuses integer lists and maps holding a fraction', () => {
  let instance: DuckDBInstance;
  let conn: DuckDBConnection;
  before(async () => {
    instance = await DuckDBInstance.create(':memory:');
    conn = await instance.connect();
  });
  after(() => {
    conn?.closeSync();
    instance?.closeSync();
  });

  const parsed = async (kind: 'int_list' | 'int_map', text: string) =>
    (await conn.runAndReadAll(`SELECT (${parseSql(kind, quoteLiteral(text))})::VARCHAR AS v`)).getRowObjects()[0]!['v'];

  it('lists', async () => {
    const cases: [string, string | null][] = [['[1,2]', '[1, 2]'], ['[1, 2]', '[1, 2]'], ['[1,2.5]', null], ['[1, 2.5]', null], ['[ 2.5]', null], ['[1, 2.0]', '[1, 2]']];
    const got = [];
    for (const [text] of cases) got.push([text, await parsed('int_list', text)]);
    expect(got).to.deep.equal(cases);
  });

  it('maps', async () => {
    const cases: [string, string | null][] = [['{"a":2}', '{a=2}'], ['{"a": 2}', '{a=2}'], ['{"a":2.5}', null], ['{"a": 2.5}', null], ['{"a" :  1e3}', null]];
    const got = [];
    for (const [text] of cases) got.push([text, await parsed('int_map', text)]);
    expect(got).to.deep.equal(cases);
  });
});
