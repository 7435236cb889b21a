import { loadDrop } from './load-drop.ts';
import type { BuildSettings } from '../../ingest/build/build-version.ts';
import type { ExpectedVersion, VersionedDrops } from './versioned-drops.ts';

/**
 * Publishes numbered versions of versioned drops into a data folder and remembers what each
 * label must answer. The API may answer from a new version before loadDrop returns its label
 * (the pointer switches before retention runs), so while a publish runs, an unknown label is
 * taken to be the version being published, and checked to be its label when the load returns.
 */
export class VersionPublisher {
  readonly #drops: VersionedDrops;
  readonly #dataDir: string;
  readonly #settings: BuildSettings;
  readonly #retain: number;
  readonly #versions = new Map<string, ExpectedVersion>();
  #publishing: { expected: ExpectedVersion; labels: Set<string> } | null = null;
  /** When retention deleted each version's file (Date.now()). */
  readonly deletedAt = new Map<string, number>();

  constructor(drops: VersionedDrops, dataDir: string, settings: BuildSettings, retain: number) {
    this.#drops = drops;
    this.#dataDir = dataDir;
    this.#settings = settings;
    this.#retain = retain;
  }

  /** The data a label must answer with, or undefined for a label never published. */
  versionOf = (label: string): ExpectedVersion | undefined => {
    if (this.#versions.has(label) || !this.#publishing) return this.#versions.get(label);
    this.#publishing.labels.add(label);
    return this.#publishing.expected;
  };

  /** Loads version `n` (retention applied) and returns its label. */
  async publish(n: number): Promise<string> {
    const drop = await this.#drops.write(n);
    const publishing = { expected: this.#drops.expected(n), labels: new Set<string>() };
    this.#publishing = publishing;
    try {
      const result = await loadDrop({ dataDir: this.#dataDir, inputs: [drop], month: '2022-03', settings: this.#settings, retain: this.#retain });
      this.#versions.set(result.label, publishing.expected);
      const strangers = [...publishing.labels].filter((l) => l !== result.label);
      if (strangers.length) throw new Error(`answers named ${strangers.join(', ')} while v${n} was published as ${result.label}`);
      for (const label of result.removedVersions) this.deletedAt.set(label, Date.now());
      return result.label;
    } finally {
      this.#publishing = null;
    }
  }
}
