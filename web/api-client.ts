/** Calls to this service's own API, always with the key in the `apikey` header. */
import type { VersionQuality } from './quality-types.ts';

export interface Caller { readonly name: string; readonly role: 'reader' | 'operator' }

/** A refusal with the API's stable code (UNAUTHENTICATED, FORBIDDEN, VERSION_NOT_FOUND, ...). */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function call<T>(key: string, path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(path, { ...init, headers: { accept: 'application/json', ...(init.headers ?? {}), apikey: key } });
  const body = await res.json().catch(() => null) as { errors?: { message: string; extensions?: { code?: string } }[] } | null;
  if (!res.ok) {
    const first = body?.errors?.[0];
    throw new ApiError(res.status, first?.extensions?.code ?? 'HTTP_' + res.status, first?.message ?? `HTTP ${res.status}`);
  }
  return body as T;
}

export function whoami(key: string): Promise<Caller> {
  return call<Caller>(key, '/v1/whoami');
}

export interface GraphqlResult<T> {
  readonly data?: T | null;
  readonly errors?: readonly { message: string; extensions?: { code?: string } }[];
  readonly extensions?: { row_count?: number; version_date?: string };
}

export async function graphql<T>(key: string, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<GraphqlResult<T>> {
  return call<GraphqlResult<T>>(key, '/v1/graphql', {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query, variables }),
  });
}

export function rawFetch(key: string, path: string, init: RequestInit): Promise<Response> {
  return fetch(path, { ...init, headers: { ...(init.headers as Record<string, string> | undefined ?? {}), apikey: key } });
}

export interface DatasetVersion {
  readonly label: string; readonly release_month: string; readonly built_at: string | null; readonly schema_version: number | null;
  // null: a stored version this machine has not downloaded (docs/api.md, Dataset versions).
  readonly servable: boolean | null; readonly core_rows: number | null; readonly weekly_rows: number | null; readonly weeks_covered: number | null;
  readonly first_week: string | null; readonly last_week: string | null; readonly current: boolean;
  readonly monthly_rows: number | null; readonly months_covered: number | null; readonly first_month: string | null; readonly last_month: string | null;
  readonly geometry_rows: number | null;
}

/** A version's own bytes and the earlier files it shares by reference (null: no record read). */
export interface VersionStorage {
  readonly bytes: number;
  readonly inherits: readonly { readonly label: string; readonly bytes: number }[];
  readonly inherited_bytes: number;
}

export interface LoadJob {
  readonly id: string; readonly state: string;
  readonly progress: { phase: string | null; percent: number; rows: number | null } | null;
  readonly attempts: number; readonly month: string | null; readonly files: readonly string[];
  readonly enqueued_at: string; readonly started_at: string | null; readonly finished_at: string | null; readonly duration_ms: number | null;
  readonly result: { label: string; already_loaded: boolean; removed_versions: readonly string[]; summary: string; held?: readonly { guard: string; message: string }[] | null } | null;
  readonly reason: string | null;
}

export interface Status {
  readonly caller: Caller;
  readonly current: string | null;
  /** The version the pointer names that this web process refused (a damaged file), and why. */
  readonly refused: { readonly label: string; readonly reason: string; readonly at: string } | null;
  readonly versions: readonly (DatasetVersion & { readonly storage: VersionStorage | null })[];
  /** Every stored version, held ones too: its quality profile and hold (shapes in quality-types.ts). */
  readonly quality: readonly VersionQuality[];
  readonly jobs: { readonly queue: string | null; readonly available: boolean; readonly error: string | null; readonly items: readonly LoadJob[] };
  /** With a version store: this machine's cache of stored files against its budget (null on one machine). */
  readonly cache: StatusCache | null;
}

/** The cache as /readyz and /v1/status give it (docs/api.md, Health). */
export interface StatusCache {
  readonly bytes: number;
  readonly max_bytes: number;
  readonly files_open: number;
  readonly files_absent: number;
  readonly fetches: number;
  readonly evictions: number;
  readonly waits: number;
  readonly timeouts: number;
  readonly prefetched: number;
  readonly prefetching: boolean;
}

export function status(key: string): Promise<Status> {
  return call<Status>(key, '/v1/status');
}

export function rollback(key: string, label: string): Promise<{ from: string | null; to: string; served: string | null }> {
  return call(key, '/v1/admin/rollback', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ label }) });
}

/** Publishes a version the publish guards held (operator keys). */
export function publishHeld(key: string, label: string): Promise<{ from: string | null; to: string; served: string | null }> {
  return call(key, '/v1/admin/publish', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ label }) });
}

/** Discards a version the publish guards held (operator keys). */
export function discardHeld(key: string, label: string): Promise<{ discarded: string }> {
  return call(key, '/v1/admin/discard', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ label }) });
}
