import { expect } from 'chai';
import { DuckDBInstance } from '@duckdb/node-api';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { generateDrop } from '../../tools/generate-drop.ts';
import { MATCH_TABLE } from '../../shared/matching/match-index.ts';
import { matchPlaces, matchSourceIn, type MatchOutcome } from '../../shared/matching/match-places.ts';
import type { PlaceQuery } from '../../shared/matching/place-query.ts';
import { placedata } from '../helpers/placedata-cli.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';

interface CoreRow { placekey: string; location_name: string; street_address: string; city: string; region: string; postal_code: string; latitude: number; longitude: number }

/** Queries of several kinds for the places (a user's list: abbreviations, typos, coordinates off, nothing that exists). */
function queriesOf(places: readonly CoreRow[]): PlaceQuery[] {
  return places.flatMap((p, i) => [
    { query_id: `full-${i}`, location_name: p.location_name, street_address: p.street_address, city: p.city, region: p.region, postal_code: p.postal_code },
    { query_id: `long-${i}`, location_name: p.location_name.toUpperCase(), street_address: p.street_address.replace(/ St$/, ' Street').replace(/ Ave$/, ' Avenue').replace(/ Rd$/, ' Road') + ' Suite 4', city: p.city, region: p.region },
    { query_id: `coords-${i}`, location_name: p.location_name, latitude: p.latitude + 0.0005, longitude: p.longitude - 0.0004 },
    { query_id: `address-${i}`, street_address: p.street_address, postal_code: p.postal_code },
    { query_id: `absent-${i}`, location_name: `Nowhere ${p.location_name}`, street_address: `9${p.street_address}`, postal_code: p.postal_code },
  ]);
}

describe('matching: the match index built at ingest', function () {
  this.timeout(300_000);
  let dir: string;
  let versionFile: string;
  before(async () => {
    dir = await makeTempDir('match-index');
    const drop = path.join(dir, 'drop');
    await generateDrop({ pois: 3000, weeks: 1, out: drop, format: 'csv.gz', seed: 7, firstWeek: '2022-01-03' });
    const loaded = await placedata(['load', drop, '--month', '2022-01'], { DATA_DIR: path.join(dir, 'data'), DUCKDB_MEMORY_LIMIT: '1GB' });
    expect(loaded.code, loaded.stderr).to.equal(0);
    versionFile = path.join(dir, 'data', (await readdir(path.join(dir, 'data'))).find((f) => f.endsWith('.duckdb'))!);
  });
  after(async () => {
    await removeDir(dir);
  });

  it('is a table of the file holding core, one row per place; a file without one answers the same from its core table', async () => {
    const db = await DuckDBInstance.create(versionFile, { access_mode: 'READ_ONLY' });
    try {
      const conn = await db.connect();
      try {
        const database = String((await conn.runAndReadAll('SELECT current_database()')).getRows()[0]![0]);
        const source = await matchSourceIn(conn, database);
        expect({ ...source, coreColumns: source.coreColumns.slice(0, 3) }).to.deep.equal({ core: `"${database}".places_core`, index: `"${database}".${MATCH_TABLE}`, coreColumns: ['placekey', 'location_name', 'street_address'] });
        const counts = (await conn.runAndReadAll(`SELECT count(*)::INTEGER, count(DISTINCT placekey)::INTEGER FROM ${MATCH_TABLE}`)).getRows();
        expect(counts).to.deep.equal([[3000, 3000]]);
        const places = (await conn.runAndReadAll(`SELECT placekey, location_name, street_address, city, region, postal_code, latitude, longitude
          FROM places_core WHERE brands IS NULL ORDER BY hash(placekey) LIMIT 60`)).getRowObjectsJson() as unknown as CoreRow[];
        const queries = queriesOf(places);
        const indexed = await matchPlaces(conn, source, queries, { candidates: 2 });
        const derived = await matchPlaces(conn, { ...source, index: null }, queries, { candidates: 2 });
        expect(derived).to.deep.equal(indexed);
        // And the answers are right: every query of a place that exists finds it or answers null, never another place's key.
        const byId = new Map(indexed.map((o: MatchOutcome) => [o.query_id, o]));
        places.forEach((p, i) => {
          for (const kind of ['full', 'long', 'address']) expect(byId.get(`${kind}-${i}`)!.placekey, `${kind}-${i}`).to.be.oneOf([p.placekey, null]);
          expect(byId.get(`full-${i}`)!.placekey, `full-${i}`).to.equal(p.placekey);
          expect(byId.get(`absent-${i}`)!.placekey, `absent-${i}`).to.equal(null);
        });
        expect(indexed.filter((o) => o.query_id!.startsWith('coords-') && o.placekey !== null).every((o) => places[Number(o.query_id!.slice(7))]!.placekey === o.placekey)).to.equal(true);
      } finally {
        conn.closeSync();
      }
    } finally {
      db.closeSync();
    }
  });
});
