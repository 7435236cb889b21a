import type { DocumentNode, GraphQLError } from 'graphql';

/**
 * Parsed and validated documents by query text, least recently used dropped past `size`.
 * Clients send the same few documents with different variables, so parsing and validating
 * (about a millisecond for a look-up document, measured) are paid once per document. Only
 * successes are kept; a document is never mutated once parsed, so sharing it is safe.
 */
export class DocumentCache {
  readonly #size: number;
  readonly #docs = new Map<string, DocumentNode>();
  readonly #validated = new WeakMap<DocumentNode, readonly GraphQLError[]>();

  constructor(size: number) {
    this.#size = size;
  }

  parse(query: string, parse: (query: string) => DocumentNode): DocumentNode {
    const hit = this.#docs.get(query);
    if (hit) {
      this.#docs.delete(query);
      this.#docs.set(query, hit);
      return hit;
    }
    const doc = parse(query);
    this.#docs.set(query, doc);
    if (this.#docs.size > this.#size) this.#docs.delete(this.#docs.keys().next().value!);
    return doc;
  }

  /** The validation errors of a document: one schema and one rule set per cache, so the answer never changes. */
  validate(doc: DocumentNode, validate: (doc: DocumentNode) => readonly GraphQLError[]): readonly GraphQLError[] {
    let errors = this.#validated.get(doc);
    if (!errors) this.#validated.set(doc, (errors = validate(doc)));
    return errors;
  }
}
