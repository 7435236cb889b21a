import { access } from 'node:fs/promises';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import type { VersionFileStore } from '../../versions/store/version-file-store.ts';
import { versionFilePath } from '../../versions/version-files.ts';
import { readVersionInfo, type VersionInfo } from '../../versions/version-info.ts';
import { READABLE_SCHEMAS } from '../../versions/version-schema.ts';
import type { VersionQuality } from '../../versions/version-quality.ts';

/**
 * What `dataset_versions` says of one retained version file. With a version store, the facts
 * come from those the store recorded at publish, else from this machine's cached copy; a version
 * stored by an older release and not downloaded here has only its label's facts, the rest null.
 */
export interface DatasetVersion {
  readonly label: string;
  readonly release_month: string;
  readonly built_at: string | null;
  readonly schema_version: number | null;
  /** Whether this API can answer from it (its schema is the one the API reads); null when unknown here. */
  readonly servable: boolean | null;
  readonly core_rows: number | null;
  readonly weekly_rows: number | null;
  readonly weeks_covered: number | null;
  readonly first_week: string | null;
  readonly last_week: string | null;
  /** Rows (POI x month) of its monthly patterns; 0 for a schema-3 file, which has none. */
  readonly monthly_rows: number | null;
  readonly months_covered: number | null;
  /** The 1st of its oldest and newest month (YYYY-MM-DD); null when it has no monthly patterns. */
  readonly first_month: string | null;
  readonly last_month: string | null;
  /** POIs with geometry; 0 for a schema-3 file. */
  readonly geometry_rows: number | null;
}

type Info = Omit<DatasetVersion, 'label'>;

/** A stored version's profile and hold, for the status page, with its facts (null when its record has none). */
export interface VersionQualityFacts extends VersionQuality {
  readonly info: VersionInfo | null;
}

/** A version's own bytes and the earlier files it shares by reference. */
export interface VersionStorage {
  readonly bytes: number;
  readonly inherits: readonly { readonly label: string; readonly bytes: number }[];
  readonly inherited_bytes: number;
}

function withServable(info: VersionInfo): Info {
  const { release_month, built_at, schema_version, ...rest } = info;
  return { release_month, built_at, schema_version, servable: READABLE_SCHEMAS.includes(schema_version), ...rest };
}

/** A stored version whose file is not on this machine: what its label says, the rest unknown. */
function labelOnly(label: string, releaseMonth: string): DatasetVersion {
  return {
    label, release_month: releaseMonth, built_at: null, schema_version: null, servable: null, core_rows: null, weekly_rows: null,
    weeks_covered: null, first_week: null, last_week: null, monthly_rows: null, months_covered: null, first_month: null, last_month: null, geometry_rows: null,
  };
}

/**
 * The retained versions with what their `version_info` says, listed from the store (every
 * machine lists the same versions; a version expired by retention drops out at once). Each
 * version's facts are those its record holds (recorded at publish), else those of this machine's
 * copy of its file, else only its label's: facts never change once published, so they are kept
 * by label.
 */
export class VersionCatalog {
  readonly #store: VersionFileStore;
  readonly #cacheDir: string;
  readonly #memoryLimit: string;
  readonly #known = new Map<string, Info>();
  /** Versions seen not held: a version is held only from its first record, so once published it stays so. */
  readonly #unheld = new Set<string>();

  /** `memoryLimit` of the brief read-only opens of a cached file (they read one row). */
  constructor(store: VersionFileStore, cacheDir: string, memoryLimit = '64MB') {
    this.#store = store;
    this.#cacheDir = cacheDir;
    this.#memoryLimit = memoryLimit;
  }

  /** Every retained version, oldest build first; held versions (never published) are not listed. */
  async list(): Promise<DatasetVersion[]> {
    let stored;
    try {
      stored = await this.#store.list();
    } catch {
      // The store did not answer (its message may hold an address): a stable code, no internals.
      throw new AppError(ErrorCodes.UNAVAILABLE, 'The version store does not answer; try again later');
    }
    const labels = new Set(stored.map((v) => v.label));
    for (const label of this.#known.keys()) if (!labels.has(label)) this.#known.delete(label);
    const out: DatasetVersion[] = [];
    for (const v of stored) {
      if (!this.#unheld.has(v.label)) {
        const record = await this.#store.record(v.label).catch(() => null);
        if (record?.held) continue;
        if (record) this.#unheld.add(v.label);
      }
      const info = this.#known.get(v.label) ?? (await this.#read(v.label));
      if (info) this.#known.set(v.label, info);
      out.push(info ? { label: v.label, ...info } : labelOnly(v.label, v.releaseMonth));
    }
    return out;
  }

  /**
   * What each retained version costs on disk: its own file's bytes, and the earlier files it
   * inherits from (shared by reference with the versions that also inherit them), from the
   * store's records and listing.
   */
  async storage(): Promise<Map<string, VersionStorage>> {
    try {
      const sizes = new Map((await this.#store.files()).map((f) => [f.label, f.bytes]));
      const out = new Map<string, VersionStorage>();
      for (const v of await this.#store.list()) {
        const record = await this.#store.record(v.label);
        if (!record) continue;
        const inherits = record.files.map((f) => ({ label: f.label, bytes: sizes.get(f.label) ?? f.bytes }));
        out.set(v.label, { bytes: record.bytes, inherits, inherited_bytes: inherits.reduce((n, f) => n + f.bytes, 0) });
      }
      return out;
    } catch {
      throw new AppError(ErrorCodes.UNAVAILABLE, 'The version store does not answer; try again later');
    }
  }

  /**
   * Every stored version's quality profile and, for held ones, why they are held, from the
   * store's records (held versions included; the status page shows them).
   */
  async quality(): Promise<Map<string, VersionQualityFacts>> {
    try {
      const out = new Map<string, VersionQualityFacts>();
      for (const v of await this.#store.list()) {
        const record = await this.#store.record(v.label);
        if (record) out.set(v.label, { label: v.label, release_month: v.releaseMonth, profile: record.profile ?? null, held: record.held ?? null, base: record.base, info: record.info ?? null });
      }
      return out;
    } catch {
      throw new AppError(ErrorCodes.UNAVAILABLE, 'The version store does not answer; try again later');
    }
  }

  async #read(label: string): Promise<Info | null> {
    const recorded = (await this.#store.record(label).catch(() => null))?.info;
    if (recorded) return withServable(recorded);
    const file = versionFilePath(this.#cacheDir, label);
    if (!(await access(file).then(() => true, () => false))) return null;
    // A record of an older release without facts: this machine's copy says them, if it can be read.
    return readVersionInfo(file, this.#memoryLimit).then(withServable, () => null);
  }
}
