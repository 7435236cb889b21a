import net from 'node:net';

export interface RawResponse {
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

/**
 * Sends one HTTP/1.1 request written byte for byte (header lines as given, so names keep their
 * case, values their padding and their raw bytes), and reads the response until the server
 * closes (the request says `Connection: close`). For what fetch would normalise or refuse to send.
 */
export async function rawRequest(url: string, method: string, target: string, headerLines: readonly (string | Buffer)[], body = ''): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('end', () => resolve());
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
  const request = Buffer.concat([
    Buffer.from(`${method} ${target} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n`),
    ...headerLines.map((l) => Buffer.concat([typeof l === 'string' ? Buffer.from(l, 'latin1') : l, Buffer.from('\r\n')])),
    Buffer.from(body === '' ? '\r\n' : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`),
  ]);
  // write, not end: Node's server drops a request whose client half-closes before the answer.
  socket.write(Buffer.concat([request, Buffer.from(body)]));
  await done;
  const text = Buffer.concat(chunks).toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const head = text.slice(0, split);
  const rest = text.slice(split + 4);
  return { status: Number(text.slice(9, 12)), head, body: /^transfer-encoding: chunked$/im.test(head) ? unchunk(rest) : rest };
}

/** The body of a `Transfer-Encoding: chunked` response. */
export function unchunk(text: string): string {
  let out = '';
  for (let at = 0; ;) {
    const eol = text.indexOf('\r\n', at);
    const size = parseInt(text.slice(at, eol), 16);
    if (!(size > 0)) return out;
    out += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}
