import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

/**
 * A fixed set of DuckDB connections on one instance. A connection runs one query at a time, so
 * concurrent requests each borrow one; extra borrowers wait in arrival order.
 */
export class ConnectionPool {
  readonly #idle: DuckDBConnection[] = [];
  readonly #all: DuckDBConnection[] = [];
  readonly #waiting: ((conn: DuckDBConnection) => void)[] = [];
  #closed = false;

  static async create(instance: DuckDBInstance, size: number): Promise<ConnectionPool> {
    const pool = new ConnectionPool();
    for (let i = 0; i < size; i++) {
      const conn = await instance.connect();
      pool.#all.push(conn);
      pool.#idle.push(conn);
    }
    return pool;
  }

  async use<T>(work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    if (this.#closed) throw new Error('connection pool is closed');
    const conn = this.#idle.pop() ?? (await new Promise<DuckDBConnection>((resolve) => this.#waiting.push(resolve)));
    try {
      return await work(conn);
    } finally {
      const next = this.#waiting.shift();
      if (next) next(conn);
      else this.#idle.push(conn);
    }
  }

  /** Closes every connection. Call only when no `use` is in flight. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const conn of this.#all) conn.closeSync();
    this.#all.length = 0;
    this.#idle.length = 0;
  }
}
