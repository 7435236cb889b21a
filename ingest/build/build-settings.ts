/** How a load's DuckDB instance runs, and how many unusable rows it accepts (from the configuration: build-settings-of.ts). */
export interface BuildSettings {
  readonly memoryLimit: string;
  readonly threads: number | null;
  readonly tempDir: string;
  readonly maxRejectShare: number;
  /** Whether the look-up store holds every document a look-up reads (LOOKUP_STORE_EXTRAS), not only the spec's. */
  readonly storeExtras: boolean;
}
