import compression from 'compression';
import type { Request, RequestHandler, Response } from 'express';

/** NDJSON exports are text too, though the media-type database does not list them as compressible. */
const ALSO_COMPRESSIBLE = /^application\/x-ndjson\b/i;

/**
 * gzip or br (as the client's Accept-Encoding prefers) for answers of `minBytes` and more, from
 * the `compression` package. Exports stream without a length, so they are compressed whenever
 * the client asks, chunk by chunk as they are written: the export's backpressure and stall
 * checks see the compressor's buffer in front of the socket. Clients that send no
 * Accept-Encoding get the bytes as before.
 */
export function compress(minBytes: number): RequestHandler {
  const compressor = compression({
    threshold: minBytes,
    filter: (req: Request, res: Response) => compression.filter(req, res) || ALSO_COMPRESSIBLE.test(String(res.getHeader('Content-Type') ?? '')),
  });
  // A request that accepts no encoding is not compressed anyway: it skips the compressor and its
  // wrapping of the response altogether (what keeps its cost nil for those clients; bench/RESULTS.md).
  return function compressAnswer(req, res, next) {
    if (req.headers['accept-encoding']) return compressor(req, res, next);
    res.vary('Accept-Encoding'); // as the compressor would say: caches keep encodings apart
    next();
  };
}
