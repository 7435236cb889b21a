import { expect } from 'chai';
import { DuckDBInstance } from '@duckdb/node-api';
import { quoteIdent } from '../../shared/sql.ts';
import { jsonDocument, jsonObject } from '../../versions/version-documents.ts';

/**
 * The documents' bytes (versions/version-documents.ts): what the look-up stores of every release
 * hold and what the DuckDB path and NDJSON exports write beside them, so any change to how they are
 * made must keep them. Names and values chosen to show the rules: quotes, backslashes, control
 * characters, non-ASCII and U+2028 in names and text; NULL everywhere; NaN, infinities, -0.0, tiny
 * and huge doubles; decimals; 2^53 + 1; lists and maps with NULLs, empty ones; structs; dates and
 * timestamps.
 */
describe('version documents: the bytes of a document', () => {
  it('are DuckDB json_object\'s for every row of a table of odd names and values, placekey left out', async () => {
    const db = await DuckDBInstance.create(':memory:');
    try {
      const conn = await db.connect();
      const names = ['s', 'i', 'd', 'l', 'm', 'st', 'dt', 'ts', 'b', 'de"c é\\', 'big', 'd2', 'sl', 'placekey'];
      await conn.run(`CREATE TABLE t (${['VARCHAR', 'INTEGER', 'DOUBLE', 'INTEGER[]', 'MAP(VARCHAR, INTEGER)', 'STRUCT(x INTEGER, y VARCHAR)', 'DATE', 'TIMESTAMP',
        'BOOLEAN', 'DECIMAL(10,2)', 'BIGINT', 'DOUBLE', 'VARCHAR[]', 'VARCHAR'].map((type, i) => `${quoteIdent(names[i]!)} ${type}`).join(', ')})`);
      await conn.run(`INSERT INTO t VALUES
        ('plain', 1, 0.1, [1, 2, NULL], MAP {'a': 1, 'b"q': NULL}, {'x': 1, 'y': 'z'}, DATE '2022-01-03', TIMESTAMP '2022-01-03 04:05:06.789', true, 123.45, 9007199254740993, 'nan', ['a', NULL], '222-222@5vg-7gq-tvz'),
        ('q"b\\s/' || chr(10) || chr(9) || chr(1) || chr(31) || ' é 😀 ' || chr(8232) || chr(127), NULL, 'inf', [], MAP {}, NULL, NULL, NULL, NULL, NULL, -1, '-inf', [], NULL),
        (NULL, -2147483648, '-0.0', NULL, NULL, {'x': NULL, 'y': NULL}, DATE '1970-01-01', TIMESTAMP '1970-01-01', false, -0.01, 0, 1e300, NULL, ''),
        ('', 0, 1e-7, [0], MAP {'': 0}, {'x': 0, 'y': ''}, DATE '9999-12-31', TIMESTAMP '2100-01-01', NULL, 0, NULL, 123456789.123456789, [''], 'x')`);
      const rows = (await conn.runAndReadAll(`SELECT ${jsonDocument(names)} AS document, ${jsonObject(names)} AS line FROM t`)).getRowObjectsJS();
      expect(rows.map((r) => r['document'])).to.deep.equal([
        '{"s":"plain","i":1,"d":0.1,"l":[1,2,null],"m":{"a":1,"b\\"q":null},"st":{"x":1,"y":"z"},"dt":"2022-01-03","ts":"2022-01-03 04:05:06.789","b":true,"de\\"c é\\\\":123.45,"big":9007199254740993,"d2":NaN,"sl":["a",null]}',
        '{"s":"q\\"b\\\\s/\\n\\t\\u0001\\u001F é 😀 \u2028\x7f","i":null,"d":Infinity,"l":[],"m":{},"st":null,"dt":null,"ts":null,"b":null,"de\\"c é\\\\":null,"big":-1,"d2":-Infinity,"sl":[]}',
        '{"s":null,"i":-2147483648,"d":-0.0,"l":null,"m":null,"st":{"x":null,"y":null},"dt":"1970-01-01","ts":"1970-01-01 00:00:00","b":false,"de\\"c é\\\\":-0.01,"big":0,"d2":1e300,"sl":null}',
        '{"s":"","i":0,"d":1e-7,"l":[0],"m":{"":0},"st":{"x":0,"y":""},"dt":"9999-12-31","ts":"2100-01-01 00:00:00","b":null,"de\\"c é\\\\":0.0,"big":null,"d2":123456789.12345679,"sl":[""]}',
      ]);
      // An NDJSON line: the same, placekey where the table has it.
      expect(rows.map((r) => r['line'])).to.deep.equal(rows.map((r, i) => `${String(r['document']).slice(0, -1)},"placekey":${['"222-222@5vg-7gq-tvz"', 'null', '""', '"x"'][i]}}`));
      expect(jsonDocument(['placekey'])).to.equal('NULL::VARCHAR');
      conn.closeSync();
    } finally {
      db.closeSync();
    }
  });
});
