import { weekColumn } from '../../shared/version-schema.ts';
import type { DocumentSources, Found, LookupRequest, Row } from './lookup-queries.ts';
import type { LookupStore } from './lookup-store.ts';
import { storedDocument } from './stored-document.ts';

/** Whether the look-up stores can answer a request: only the spec's documents, each from a file that has a store. */
export function storesAnswer(request: LookupRequest, sources: DocumentSources, stores: ReadonlyMap<string, LookupStore>): boolean {
  if (request.coreExtras || request.weekExtras?.length || request.months?.length || request.geometry) return false;
  if (request.core && sources.core !== null && !stores.has(sources.core)) return false;
  return request.weeks.every((w) => stores.has(sources.week(w)));
}

/**
 * The documents of a request from the look-up stores of the files holding them: one read per
 * file (its columns together), synchronous, each document proved by the store as it is read.
 * The same answer DuckDB's statement gives (api/lookup/lookup-queries.ts fetchDocuments): an entry for
 * each key any file holds, its `placekey` in each document (each parsed only when read:
 * api/lookup/stored-document.ts).
 * @throws LookupStoreDamaged when a store cannot prove an answer (the caller sends the version's look-ups to DuckDB).
 */
export function storeDocuments(request: LookupRequest, sources: DocumentSources, stores: ReadonlyMap<string, LookupStore>): Map<string, Found> {
  const byFile = new Map<string, { column: string; week: string | null }[]>();
  const add = (file: string, column: string, week: string | null) => byFile.set(file, [...(byFile.get(file) ?? []), { column, week }]);
  if (request.core && sources.core !== null) add(sources.core, 'core', null);
  for (const w of request.weeks) add(sources.week(w), weekColumn(w), w);
  const found = new Map<string, Found>();
  for (const [file, wanted] of byFile) {
    const read = stores.get(file)!.lookup(request.placekeys, wanted.map((t) => t.column));
    for (const [placekey, docs] of read) {
      let entry = found.get(placekey);
      if (!entry) found.set(placekey, (entry = { core: null, weeks: new Map() }));
      docs.forEach((doc, i) => {
        if (doc === null) return;
        const row = storedDocument(doc, placekey);
        const week = wanted[i]!.week;
        if (week === null) (entry as { core: Row | null }).core = row;
        else (entry.weeks as Map<string, Row>).set(week, row);
      });
    }
  }
  return found;
}
