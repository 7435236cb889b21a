import { randomBytes } from 'node:crypto';

/** Random per process: no delivered value can pass for a placeholder without it. */
const SECRET = randomBytes(12).toString('hex');
let responses = 0;

/**
 * Stored documents a response carries as their stored JSON text's bytes. The executor puts a
 * placeholder string where each goes (JSON.stringify writes it as `"\u0000<nonce><n>"`), and the
 * route splices the bytes into the serialised body: the documents are neither parsed nor written
 * again, nor decoded from UTF-8 and encoded back (a body that carries documents is sent as bytes).
 * The nonce (the process's random secret and the response's number) is unknown to whoever wrote
 * the data, so no delivered value can pass for a placeholder.
 */
export class RawDocuments {
  readonly #nonce = `${SECRET}${(responses++).toString(36)}:`;
  readonly #documents: (Buffer | string)[] = [];

  /**
   * The placeholder standing for `bytes` in the result: a JSON text's UTF-8, as a Buffer or as a
   * string of one latin1 character per byte (answers written from stored texts).
   */
  add(bytes: Buffer | string): string {
    this.#documents.push(bytes);
    return `\u0000${this.#nonce}${this.#documents.length - 1}`;
  }

  /**
   * The serialised body with every placeholder replaced by its document: the body itself when
   * it carries none, else its UTF-8 bytes (one scan, no regular expression, one buffer).
   */
  splice(body: string): string | Buffer {
    if (this.#documents.length === 0) return body;
    const marker = `"\\u0000${this.#nonce}`;
    const text: string[] = [];
    const docs: (Buffer | string)[] = [];
    let bytes = 0;
    let from = 0;
    for (let at = body.indexOf(marker); at >= 0; at = body.indexOf(marker, from)) {
      const end = body.indexOf('"', at + marker.length);
      const part = body.slice(from, at);
      const doc = this.#documents[Number(body.slice(at + marker.length, end))]!;
      text.push(part);
      docs.push(doc);
      bytes += Buffer.byteLength(part) + doc.length;
      from = end + 1;
    }
    const tail = body.slice(from);
    const out = Buffer.allocUnsafe(bytes + Buffer.byteLength(tail));
    let at = 0;
    for (let i = 0; i < docs.length; i++) {
      at += out.write(text[i]!, at);
      const doc = docs[i]!;
      at += typeof doc === 'string' ? out.write(doc, at, 'latin1') : doc.copy(out, at);
    }
    out.write(tail, at);
    return out;
  }
}
