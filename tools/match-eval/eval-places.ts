import { DuckDBInstance } from '@duckdb/node-api';
import path from 'node:path';
import { quoteLiteral } from '../../shared/sql.ts';

/** A place of the evaluation set: the core fields a query can describe it by. */
export interface EvalPlace {
  readonly placekey: string;
  readonly location_name: string | null;
  readonly street_address: string | null;
  readonly city: string | null;
  readonly region: string | null;
  readonly postal_code: string | null;
  readonly iso_country_code: string | null;
  readonly latitude: number | null;
  readonly longitude: number | null;
  /** Which sample it came from. */
  readonly source: 'wortmann' | 'byui' | 'all_real_placekeys';
}

/** The sample files the evaluation set is built from, under SAMPLES_DIR. */
export const EVAL_SAMPLES = {
  wortmann: 'safegraph/wortmann_2022-04-18_weekly_patterns_with_core.excel.csv',
  byui: 'safegraph/byui_chipotle_2021-07_places.parquet',
  all_real_placekeys: 'placekey/all_real_placekeys.csv',
} as const;

/**
 * The places of the samples, one per placekey (the first source in EVAL_SAMPLES order wins; a
 * placekey repeated within a source keeps its first row by value), ordered by placekey. The
 * wortmann export is Excel-damaged: every column is read as text and the coordinates cast.
 */
export async function readEvalPlaces(samplesDir: string): Promise<EvalPlace[]> {
  const file = (name: string) => quoteLiteral(path.join(samplesDir, name));
  const text = (column: string) => `NULLIF(TRIM(${column}), '')`;
  const fields = (src: number, source: string, coord: (c: string) => string) => `${src} AS src, ${quoteLiteral(source)} AS source, ${text('placekey')} AS placekey,
    ${text('location_name')} AS location_name, ${text('street_address')} AS street_address, ${text('city')} AS city, ${text('region')} AS region,
    ${text('postal_code')} AS postal_code, ${text('iso_country_code')} AS iso_country_code, ${coord('latitude')} AS latitude, ${coord('longitude')} AS longitude`;
  const sql = `
    WITH rows AS (
      SELECT ${fields(1, 'wortmann', (c) => `TRY_CAST(${c} AS DOUBLE)`)} FROM read_csv(${file(EVAL_SAMPLES.wortmann)}, all_varchar = true, header = true)
      UNION ALL
      SELECT ${fields(2, 'byui', (c) => `CAST(${c} AS DOUBLE)`)} FROM read_parquet(${file(EVAL_SAMPLES.byui)})
      UNION ALL
      SELECT 3 AS src, 'all_real_placekeys' AS source, ${text('placekey')}, ${text('location_name')}, NULL, NULL, NULL, NULL, NULL,
        TRY_CAST(latitude AS DOUBLE), TRY_CAST(longitude AS DOUBLE)
      FROM read_csv(${file(EVAL_SAMPLES.all_real_placekeys)}, all_varchar = true, header = true)
    )
    SELECT * EXCLUDE (src) FROM rows WHERE placekey IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY placekey ORDER BY src, location_name, street_address, latitude, longitude) = 1
    ORDER BY placekey`;
  const db = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '512MB' });
  try {
    const conn = await db.connect();
    try {
      return (await conn.runAndReadAll(sql)).getRowObjectsJS() as unknown as EvalPlace[];
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
}

/** FNV-1a of a string, 32 bits: a stable per-place seed (independent of which other places are in the set). */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A number in [0, 1) fixed by the seed and the text. */
export function unitHash(seed: number, text: string): number {
  return hash32(`${seed}:${text}`) / 4294967296;
}
