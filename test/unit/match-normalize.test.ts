import { expect } from 'chai';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import fc from 'fast-check';
import { matchIndexSelect, normalizedSelect } from '../../shared/matching/match-index.ts';
import { queryShortfall, shortfallSql } from '../../shared/matching/place-query.ts';
import { quoteLiteral } from '../../shared/sql.ts';

/** Normalises rows of the query fields with the SQL the index and the queries share, in a real DuckDB. */
async function normalise(conn: DuckDBConnection, rows: Record<string, string | number | null>[]): Promise<Record<string, unknown>[]> {
  const fields = ['location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'latitude', 'longitude'];
  const relation = `SELECT unnest(from_json($1::JSON, ${quoteLiteral(JSON.stringify([Object.fromEntries([['query_row', 'BIGINT'], ...fields.map((f) => [f, 'VARCHAR'])])]))}), recursive := true)`;
  const full = rows.map((r, i) => ({ query_row: i, ...Object.fromEntries(fields.map((f) => [f, r[f] ?? null])) }));
  const reader = await conn.runAndReadAll(`SELECT * EXCLUDE (query_row) FROM (${normalizedSelect(relation, 'query_row')}) ORDER BY query_row`, [JSON.stringify(full)]);
  return reader.getRowObjectsJson();
}

describe('matching: normalisation of names and addresses (DuckDB SQL)', () => {
  let db: DuckDBInstance;
  let conn: DuckDBConnection;
  before(async () => {
    db = await DuckDBInstance.create(':memory:');
    conn = await db.connect();
  });
  after(() => {
    conn.closeSync();
    db.closeSync();
  });

  it('folds case, accents, punctuation, USPS suffixes and directionals, units, store numbers, ZIPs and state names', async () => {
    const out = await normalise(conn, [
      { location_name: "McDonald's #1234", street_address: '123 North Main Street, Suite 200', city: 'Saint Louis', region: 'Missouri', postal_code: '63101-1234', iso_country_code: 'us', latitude: '38.63', longitude: '-90.2' },
      { location_name: 'The Café Niño & Co.', street_address: '45B W. 3rd Ave Apt 3B', city: 'New York', region: 'NY', postal_code: '2138.0' },
      { location_name: 'Chipotle Mexican Grill', street_address: '1 Infinite Loop #5', city: 'Cupertino', region: 'ca', postal_code: '95014' },
      { location_name: '7-Eleven Store 35', street_address: 'First Avenue', city: 'Fort Worth', region: 'tx', postal_code: 'K1A 0B1' },
      { location_name: '   ', street_address: null, city: '', region: null, postal_code: null },
    ]);
    expect(out).to.deep.equal([
      { name: 'mcdonalds', house: '123', street: 'n main', suffix: 'st', unit: '200', city: 'st louis', region: 'mo', postal: '63101', country: 'US', latitude: 38.63, longitude: -90.2 },
      { name: 'cafe nino', house: '45', street: 'w 3rd', suffix: 'ave', unit: '3b', city: 'new york', region: 'ny', postal: '02138', country: null, latitude: null, longitude: null },
      { name: 'chipotle mexican grill', house: '1', street: 'infinite', suffix: 'loop', unit: '5', city: 'cupertino', region: 'ca', postal: '95014', country: null, latitude: null, longitude: null },
      { name: '7 eleven', house: null, street: '1st', suffix: 'ave', unit: null, city: 'ft worth', region: 'tx', postal: 'k1a0b1', country: null, latitude: null, longitude: null },
      { name: null, house: null, street: null, suffix: null, unit: null, city: null, region: null, postal: null, country: null, latitude: null, longitude: null },
    ]);
  });

  it('makes the same words of an address however it is spelled (abbreviated or not, any case), and keeps its unit apart', async () => {
    await fc.assert(fc.asyncProperty(
      fc.integer({ min: 1, max: 99999 }), fc.constantFrom(['Street', 'St'], ['Avenue', 'Ave.'], ['Boulevard', 'BLVD'], ['Road', 'rd'], ['Drive', 'Dr']),
      fc.constantFrom(['North', 'N'], ['South', 's.'], ['', '']), fc.constantFrom('', ' Suite 200', ' #5', ', Apt 3B', ' Unit C'),
      async (house, [long, short], [dirLong, dirShort], unit) => {
        const [a, b] = await normalise(conn, [
          { street_address: `${house} ${dirLong} Oak ${long}` },
          { street_address: `${house} ${dirShort.toUpperCase()} OAK ${short}${unit}` },
        ]);
        // The unit is kept apart (two units of one building are two places); everything else is the same.
        expect({ ...b, unit: null }).to.deep.equal(a);
        expect(b!['unit']).to.equal(unit === '' ? null : unit.replace(/.*[ #]/, '').toLowerCase());
      }), { numRuns: 40 });
  });

  it('derives the same index rows from a core table as the index the build writes', async () => {
    await conn.run(`CREATE TEMP TABLE places_core AS SELECT * FROM (VALUES ('222-222@5vg-7gv-d7q', 'Taco Bell', '710 3rd St', 'San Francisco', 'CA', '94107', 'US', 37.7786, -122.393)) t(placekey, location_name, street_address, city, region, postal_code, iso_country_code, latitude, longitude)`);
    const rows = (await conn.runAndReadAll(matchIndexSelect('places_core', ['placekey', 'location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'latitude', 'longitude']))).getRowObjectsJson();
    expect(rows).to.deep.equal([{ placekey: '222-222@5vg-7gv-d7q', name: 'taco bell', house: '710', street: '3rd', suffix: 'st', unit: null, city: 'san francisco', region: 'ca', postal: '94107', country: 'US', latitude: 37.7786, longitude: -122.393, name_key: 'tac', cell_y: 9444, cell_x: -30599, name_places: 1 }]);
  });
});

describe('matching: what a query must hold', () => {
  it('accepts an address, or a name with coordinates, a postal code, or a city and region', () => {
    for (const q of [
      { street_address: '710 3rd St', postal_code: '94107' },
      { street_address: '710 3rd St', city: 'San Francisco', region: 'CA' },
      { location_name: 'Taco Bell', latitude: 37.7786, longitude: -122.393 },
      { location_name: 'Taco Bell', postal_code: '94107' },
      { location_name: 'Taco Bell', city: 'San Francisco', region: 'CA', iso_country_code: 'US' },
    ]) expect(queryShortfall(q), JSON.stringify(q)).to.equal(null);
  });

  it('names what a query lacks', () => {
    expect(queryShortfall({ location_name: 'Taco Bell' })).to.equal('it has location_name; a query needs street_address with postal_code or with city and region, or location_name with latitude and longitude, with postal_code, or with city and region');
    expect(queryShortfall({ location_name: '  ', city: 'San Francisco', region: 'CA' })).to.equal('it has city, region; a query needs street_address with postal_code or with city and region, or location_name with latitude and longitude, with postal_code, or with city and region');
    expect(queryShortfall({})).to.equal('it has no place fields; a query needs street_address with postal_code or with city and region, or location_name with latitude and longitude, with postal_code, or with city and region');
    expect(queryShortfall({ location_name: 'Taco Bell', latitude: 37.7 })).to.equal('latitude and longitude go together; it has only latitude');
    expect(queryShortfall({ location_name: 'Taco Bell', latitude: 91, longitude: 0 })).to.equal('latitude must be between -90 and 90; got 91');
    expect(queryShortfall({ location_name: 'Taco Bell', latitude: 0, longitude: -181 })).to.equal('longitude must be between -180 and 180; got -181');
  });
});

describe('matching: a core table without every field a query names', () => {
  it('indexes the fields it has; the others are null (a drop without coordinates loads and matches)', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      await conn.run(`CREATE TABLE places_core AS SELECT * FROM (VALUES ('222-222@5vg-7gv-d7q', 'Taco Bell', '710 3rd St')) t(placekey, location_name, street_address)`);
      const rows = (await conn.runAndReadAll(matchIndexSelect('places_core', ['placekey', 'location_name', 'street_address']))).getRowObjectsJson();
      expect(rows).to.deep.equal([{ placekey: '222-222@5vg-7gv-d7q', name: 'taco bell', house: '710', street: '3rd', suffix: 'st', unit: null, city: null, region: null, postal: null, country: null, latitude: null, longitude: null, name_key: 'tac', cell_y: null, cell_x: null, name_places: 1 }]);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
});

describe('matching: the query rule in SQL (bulk) and in TypeScript (API) agree', () => {
  it('refuses exactly the queries queryShortfall refuses', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      const text = fc.option(fc.constantFrom('Taco Bell', '710 3rd St', 'x'), { nil: null });
      const coordinate = fc.option(fc.constantFrom(0, 37.7, -122.4, 91, -181, 180), { nil: null });
      await fc.assert(fc.asyncProperty(text, text, text, text, text, text, coordinate, coordinate,
        async (location_name, street_address, city, region, postal_code, iso_country_code, latitude, longitude) => {
          const q = { location_name, street_address, city, region, postal_code, iso_country_code, latitude, longitude };
          const reader = await conn.runAndReadAll(`SELECT ${shortfallSql()} FROM (SELECT $1::VARCHAR AS location_name, $2::VARCHAR AS street_address, $3::VARCHAR AS city,
            $4::VARCHAR AS region, $5::VARCHAR AS postal_code, $6::VARCHAR AS iso_country_code, $7::DOUBLE AS latitude, $8::DOUBLE AS longitude)`,
          [location_name, street_address, city, region, postal_code, iso_country_code, latitude, longitude]);
          expect(reader.getRows()[0]![0], JSON.stringify(q)).to.equal(queryShortfall(q) !== null);
        }), { numRuns: 300 });
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
});
