import net from 'node:net';

/** A response as received: its status, lower-cased headers, and body bytes (undecoded). */
export interface RawResponse {
  readonly status: number;
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
}

/** One keep-alive connection of a load generator's worker, one request at a time. */
export interface Connection {
  /** Sends a POST-style request (`path` with its query) and resolves with the whole response. */
  request(method: string, path: string, headers: Readonly<Record<string, string>>, body: string): Promise<RawResponse>;
  close(): void;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

/**
 * One keep-alive HTTP/1.1 connection for the load generator, one request at a time: it writes the
 * request's bytes and reads the response by its Content-Length or chunks, and nothing else
 * (no streams, no decoding). It exists because the generator shares this machine's two cores with
 * the server it measures, and every microsecond the client spends is taken from the server
 * measured, the faster one the most: at c16 on 57 KB look-up answers, node:http's client spent
 * 435-437 us of CPU a request and fetch 1122-1127, this 163-199 (the history part's run of
 * 2026-11-25 13:43 UTC; bench/http-clients.ts measures the three in every such run); undici's
 * dispatch API spent 226-256 us in a test beside it, not in the bench. Loopback only; a
 * connection closed by the server is opened again for the next request.
 */
export class HttpConnection implements Connection {
  readonly #host: string;
  readonly #port: number;
  #socket: net.Socket | null = null;
  #chunks: Buffer[] = [];
  /** Bytes received of the response being read. */
  #have = 0;
  /** The response's whole length once its head says it (Content-Length), else 0. */
  #need = 0;
  #waiting: { resolve: (r: RawResponse) => void; reject: (e: Error) => void } | null = null;

  constructor(url: URL) {
    this.#host = url.hostname;
    this.#port = Number(url.port || 80);
  }

  /** Sends a request (`path` with its query) and resolves with the whole response. */
  request(method: string, path: string, headers: Readonly<Record<string, string>>, body: string): Promise<RawResponse> {
    if (this.#waiting) return Promise.reject(new Error('one request at a time on a connection'));
    const socket = this.#socket ?? this.#connect();
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.#host}:${this.#port}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
      socket.write(`${head}\r\n${body}`);
    });
  }

  close(): void {
    this.#socket?.destroy();
    this.#socket = null;
  }

  #connect(): net.Socket {
    const socket = net.connect(this.#port, this.#host);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#received(chunk));
    const lost = (err?: Error) => {
      // A socket this connection let go of (closed after a response) owes nothing.
      if (this.#socket !== socket) return;
      this.#socket = null;
      this.#chunks = [];
      this.#have = 0;
      this.#need = 0;
      const waiting = this.#waiting;
      this.#waiting = null;
      waiting?.reject(err ?? new Error('the server closed the connection before answering'));
    };
    socket.on('error', lost);
    socket.on('close', () => lost());
    this.#socket = socket;
    return socket;
  }

  #received(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#have += chunk.length;
    // A response whose length is known is put together and read once, when it is all here.
    if (this.#have < this.#need) return;
    const data = this.#chunks.length === 1 ? chunk : Buffer.concat(this.#chunks);
    this.#chunks = [data];
    const parsed = parseResponse(data);
    if (parsed === null) return; // not all of it yet (chunks)
    if ('need' in parsed) {
      this.#need = parsed.need;
      return;
    }
    this.#chunks = [];
    this.#have = 0;
    this.#need = 0;
    const waiting = this.#waiting;
    this.#waiting = null;
    if (parsed instanceof Error) {
      this.close();
      waiting?.reject(parsed);
      return;
    }
    if (parsed.close) this.close();
    waiting?.resolve(parsed.response);
  }
}

/**
 * A whole response at the start of `data`; when more is needed, the bytes the whole takes
 * (Content-Length) or null (no head yet, or chunks); or why it cannot be read.
 */
function parseResponse(data: Buffer): { response: RawResponse; close: boolean } | { need: number } | Error | null {
  const headEnd = data.indexOf(HEAD_END);
  if (headEnd < 0) return null;
  const [statusLine, ...lines] = data.toString('latin1', 0, headEnd).split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '');
  if (!status) return new Error(`not an HTTP/1.1 status line: ${JSON.stringify(statusLine?.slice(0, 80))}`);
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const start = headEnd + HEAD_END.length;
  const close = headers.get('connection')?.toLowerCase() === 'close';
  const length = headers.get('content-length');
  if (length !== undefined) {
    const end = start + Number(length);
    if (data.length < end) return { need: end };
    return { response: { status: Number(status[1]), headers, body: data.subarray(start, end) }, close };
  }
  if (headers.get('transfer-encoding')?.toLowerCase() !== 'chunked') return new Error('a response with neither Content-Length nor chunks');
  const parts: Buffer[] = [];
  for (let at = start; ;) {
    const lineEnd = data.indexOf(CRLF, at);
    if (lineEnd < 0) return null;
    const size = parseInt(data.toString('latin1', at, lineEnd), 16);
    if (!Number.isFinite(size)) return new Error('a malformed chunk size');
    const chunkEnd = lineEnd + 2 + size;
    if (data.length < chunkEnd + 2) return null;
    if (size === 0) {
      // No trailers are sent to this client: the last chunk ends with an empty line.
      return { response: { status: Number(status[1]), headers, body: Buffer.concat(parts) }, close };
    }
    parts.push(data.subarray(lineEnd + 2, chunkEnd));
    at = chunkEnd + 2;
  }
}
