import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteLiteral } from '../../shared/sql.ts';

/**
 * Confines a load's DuckDB instance before it reads anything from the drop: from then on SQL can
 * read and write only the drop's files (`readable`), the load's own work folder (spill files and
 * converted copies) and the version file being built (and databases attached before, which DuckDB
 * keeps allowing, with their `.wal`: the build checks the previous version has none afterwards).
 * DuckDB refuses to turn external access back on or to widen the lists while the instance runs,
 * so no configuration lock is needed (the load still changes threads and compression settings).
 * A slip in quoting can then not read `/etc`, the keys file or another version.
 */
export async function confineLoad(conn: DuckDBConnection, readable: readonly string[], workDir: string): Promise<void> {
  await conn.run(`SET allowed_paths = [${readable.map(quoteLiteral).join(', ')}]`);
  await conn.run(`SET allowed_directories = [${quoteLiteral(workDir.endsWith('/') ? workDir : workDir + '/')}]`);
  await conn.run('SET autoinstall_known_extensions = false');
  await conn.run('SET autoload_known_extensions = false');
  await conn.run('SET enable_external_access = false');
}
