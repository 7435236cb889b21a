import { randomBytes } from 'node:crypto';

/** Random per process: no delivered value can pass for a placeholder without it. */
const SECRET = randomBytes(12).toString('hex');
let responses = 0;

/**
 * Stored documents a response carries as their stored JSON text. The executor puts a placeholder
 * string where each goes (JSON.stringify writes it as `"\u0000<nonce><n>"`), and the route
 * splices the texts into the serialised body: the documents are neither parsed nor written
 * again. The nonce (the process's random secret and the response's number) is unknown to whoever
 * wrote the data, so no delivered value can pass for a placeholder.
 */
export class RawDocuments {
  readonly #nonce = `${SECRET}${(responses++).toString(36)}:`;
  readonly #texts: string[] = [];

  /** The placeholder standing for `text` in the result. */
  add(text: string): string {
    this.#texts.push(text);
    return `\u0000${this.#nonce}${this.#texts.length - 1}`;
  }

  /** The serialised body with every placeholder replaced by its document's text (one scan, no regular expression). */
  splice(body: string): string {
    if (this.#texts.length === 0) return body;
    const marker = `"\\u0000${this.#nonce}`;
    const parts: string[] = [];
    let from = 0;
    for (let at = body.indexOf(marker); at >= 0; at = body.indexOf(marker, from)) {
      const end = body.indexOf('"', at + marker.length);
      parts.push(body.slice(from, at), this.#texts[Number(body.slice(at + marker.length, end))]!);
      from = end + 1;
    }
    parts.push(body.slice(from));
    return parts.join('');
  }
}
