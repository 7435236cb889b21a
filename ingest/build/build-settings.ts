/** How a load's DuckDB instance runs, and how many unusable rows it accepts (from the configuration: build-settings-of.ts). */
export interface BuildSettings {
  readonly memoryLimit: string;
  readonly threads: number | null;
  readonly tempDir: string;
  readonly maxRejectShare: number;
}
