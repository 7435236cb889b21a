import type { Found, LookupRequest } from './lookup-queries.ts';

interface Waiting {
  readonly request: LookupRequest;
  readonly resolve: (found: Map<string, Found>) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Runs the look-ups of concurrent requests on one version as few DuckDB queries as possible.
 * Each query has a fixed cost (planning, scheduling, an IN-list join: about 3 ms of a 100-key
 * look-up, measured) that barely grows with its key count, so when every slot is busy the
 * requests that arrive meanwhile wait and then share one query (their keys, and the union of
 * the columns they want), up to `maxKeys` keys. A request that finds a slot free runs at once:
 * a lone client never waits for company.
 */
export class LookupCoalescer {
  readonly #slots: number;
  readonly #maxKeys: number;
  readonly #fetch: (request: LookupRequest) => Promise<Map<string, Found>>;
  readonly #waiting: Waiting[] = [];
  #running = 0;

  /** `fetch` runs one look-up query on a connection it borrows; `slots` should not exceed the connections it has. */
  constructor(fetch: (request: LookupRequest) => Promise<Map<string, Found>>, slots: number, maxKeys: number) {
    this.#fetch = fetch;
    this.#slots = slots;
    this.#maxKeys = maxKeys;
  }

  fetch(request: LookupRequest): Promise<Map<string, Found>> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ request, resolve, reject });
      this.#next();
    });
  }

  #next(): void {
    while (this.#running < this.#slots && this.#waiting.length > 0) {
      const group = this.#takeGroup();
      this.#running++;
      void this.#runGroup(group).finally(() => {
        this.#running--;
        this.#next();
      });
    }
  }

  /** The oldest waiting request and those after it whose keys still fit, in arrival order. */
  #takeGroup(): Waiting[] {
    const group = [this.#waiting.shift()!];
    let keys = group[0]!.request.placekeys.length;
    while (this.#waiting.length > 0 && keys + this.#waiting[0]!.request.placekeys.length <= this.#maxKeys) {
      const next = this.#waiting.shift()!;
      keys += next.request.placekeys.length;
      group.push(next);
    }
    return group;
  }

  async #runGroup(group: readonly Waiting[]): Promise<void> {
    try {
      const found = await this.#fetch(merge(group.map((w) => w.request)));
      // Each request gets the whole map: its resolvers read only its own keys, product and weeks.
      for (const w of group) w.resolve(found);
    } catch (err) {
      for (const w of group) w.reject(err);
    }
  }
}

function merge(requests: readonly LookupRequest[]): LookupRequest {
  if (requests.length === 1) return requests[0]!;
  return {
    placekeys: [...new Set(requests.flatMap((r) => r.placekeys))],
    core: requests.some((r) => r.core),
    weeks: [...new Set(requests.flatMap((r) => r.weeks))].sort(),
    coreExtras: requests.some((r) => r.core && r.coreExtras),
    weekExtras: [...new Set(requests.flatMap((r) => r.weekExtras ?? []))].sort(),
    months: [...new Set(requests.flatMap((r) => r.months ?? []))].sort(),
    geometry: requests.some((r) => r.geometry),
  };
}
