import { openReadOnly } from '../shared/duckdb-open.ts';
import { readPointer } from '../shared/pointer.ts';
import { listVersionFiles } from '../shared/version-files.ts';
import { TABLES } from '../shared/version-schema.ts';
import type { LoadReport } from './load-report.ts';

export interface VersionSummary {
  readonly label: string;
  readonly current: boolean;
  readonly built_at: string;
  readonly release_month: string;
  readonly core_rows: number;
  readonly weekly_rows: number;
  readonly weeks_covered: number;
  readonly first_week: string | null;
  readonly last_week: string | null;
  readonly bytes: number;
  /** Content identity of the drop the version was built from. */
  readonly drop_id: string;
  readonly report: LoadReport;
}

/** Every version file in `dataDir` with its metadata, oldest first. */
export async function listVersions(dataDir: string, memoryLimit: string): Promise<VersionSummary[]> {
  const current = await readPointer(dataDir);
  const out: VersionSummary[] = [];
  for (const v of await listVersionFiles(dataDir)) {
    const db = await openReadOnly(v.file, { memoryLimit, threads: 1 });
    try {
      const conn = await db.connect();
      try {
        const row = (await conn.runAndReadAll(`SELECT built_at, release_month, core_rows, weekly_rows, weeks_covered,
            strftime(first_week, '%Y-%m-%d') AS first_week, strftime(last_week, '%Y-%m-%d') AS last_week, drop_id, CAST(report AS VARCHAR) AS report FROM ${TABLES.info}`)).getRowObjectsJS()[0]!;
        out.push({
          label: v.label, current: v.label === current, built_at: String(row['built_at']), release_month: String(row['release_month']),
          core_rows: Number(row['core_rows']), weekly_rows: Number(row['weekly_rows']), weeks_covered: Number(row['weeks_covered']),
          first_week: row['first_week'] === null ? null : String(row['first_week']), last_week: row['last_week'] === null ? null : String(row['last_week']),
          bytes: v.bytes, drop_id: String(row['drop_id']), report: JSON.parse(String(row['report'])) as LoadReport,
        });
      } finally {
        conn.closeSync();
      }
    } finally {
      db.closeSync();
    }
  }
  return out;
}
