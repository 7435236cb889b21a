import type { DocumentNode } from 'graphql';
import { LRUCache } from 'lru-cache';
import { parseWithLimits } from './query-limits.ts';

/** Documents kept per process and token limit: clients send the same few documents with new variables. */
const ENTRIES = 1000;
/** Query text kept at most (characters), so a flood of large distinct documents cannot grow the cache. */
const TEXT_CHARS = 16 * 1024 * 1024;

/**
 * Parsed documents by query text, least recently used dropped first. Every part of a request that
 * needs its document (the transport guard, the rate limiter, the request log, GraphQL execution)
 * parses it here, so a document is parsed once while it stays in the cache, and whatever is
 * derived from it (the operation's facts, validation, the compiled plan, the look-up plan: each
 * a WeakMap keyed by the document or its nodes) is derived once. Successes are kept (a
 * refused document's error is kept for the other parts of its request); a document is never
 * mutated once parsed, so sharing it is safe.
 */
export class DocumentCache {
  readonly #maxTokens: number;
  readonly #docs = new LRUCache<string, DocumentNode>({ max: ENTRIES, maxSize: TEXT_CHARS, sizeCalculation: (_doc, query) => Math.max(1, query.length) });
  /** Recent refusals, so the parts of one request that each ask do not parse a refused document again. */
  readonly #refused = new LRUCache<string, object>({ max: 100, maxSize: TEXT_CHARS / 4, sizeCalculation: (_err, query) => Math.max(1, query.length) });

  constructor(maxTokens: number) {
    this.#maxTokens = maxTokens;
  }

  /** @throws GraphQLError GRAPHQL_PARSE_FAILED, QUERY_TOO_COMPLEX (more than the token limit) */
  parse(query: string): DocumentNode {
    const hit = this.#docs.get(query);
    if (hit) return hit;
    if (this.#refused.has(query)) throw this.#refused.get(query);
    try {
      const doc = parseWithLimits(query, { maxTokens: this.#maxTokens });
      this.#docs.set(query, doc);
      return doc;
    } catch (err) {
      // The same error each time (errors are never mutated: format-error.ts copies them).
      this.#refused.set(query, err as object);
      throw err;
    }
  }

  /** The document, or null when it does not parse (GraphQL refuses it later with its own code). */
  tryParse(query: string): DocumentNode | null {
    try {
      return this.parse(query);
    } catch {
      return null;
    }
  }
}

const byLimit = new Map<number, DocumentCache>();

/** The process's cache for a token limit (one per app configuration; tests build apps with others). */
export function documentsFor(maxTokens: number): DocumentCache {
  let cache = byLimit.get(maxTokens);
  if (!cache) byLimit.set(maxTokens, (cache = new DocumentCache(maxTokens)));
  return cache;
}
