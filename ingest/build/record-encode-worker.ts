/**
 * A thread of the look-up store's build (ingest/build/record-encoders.ts): it turns a chunk of
 * keys and their joined documents into records (versions/lookup-store/lookup-store-format.ts encodeRecord) and,
 * in formats 4 and 5, compresses each into its zstd frame with the store's dictionary, handing the
 * chunk's records back packed in one buffer it does not copy.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { RecordCompressor, ZSTD_LEVEL } from '../../versions/lookup-store/lookup-store-codec.ts';
import { encodeRecord } from '../../versions/lookup-store/lookup-store-format.ts';
import type { EncodeReply, EncodeRequest, EncoderSetup, Packed } from './record-encoders.ts';

const setup = workerData as EncoderSetup;
const checksum = setup.format === 5;
const compressors = setup.format >= 4
  ? [new RecordCompressor(setup.dictionaries[0], ZSTD_LEVEL.places, checksum), new RecordCompressor(setup.dictionaries[1], ZSTD_LEVEL.extras, checksum)]
  : null;

/** The records of one database for a chunk's keys, packed: each value copied once, as it is made, into the reply's buffer. */
function encodePart(keys: readonly string[], docs: Uint8Array, ends: Uint32Array, part: 0 | 1): Packed {
  const columns = part === 0 ? setup.columns : setup.extraColumns;
  const firstColumn = part === 0 ? 0 : setup.columns;
  // Compressed values are smaller than the documents; a value that is not is made room for.
  let out = Buffer.allocUnsafeSlow(docs.length + keys.length * 64);
  const outEnds = new Uint32Array(keys.length);
  let total = 0;
  let start = 0;
  for (let r = 0; r < keys.length; r++) {
    const record = encodeRecord(keys[r]!, docs.subarray(start, ends[r]!), columns, setup.format, firstColumn);
    start = ends[r]!;
    // The compressor's buffer is reused: its frame is copied into `out` before the next record.
    const value = compressors === null ? record : compressors[part]!.compress(record);
    if (total + value.length > out.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(out.length * 2, total + value.length));
      out.copy(grown, 0, 0, total);
      out = grown;
    }
    total += value.copy(out, total);
    outEnds[r] = total;
  }
  // Handed over whole (no copy): the reader takes each value by `ends`; the slack goes with the chunk.
  return { bytes: out.buffer as ArrayBuffer, ends: outEnds };
}

parentPort!.on('message', (m: EncodeRequest) => {
  let reply: EncodeReply;
  try {
    const keys = m.keys.split('\n');
    const places = encodePart(keys, new Uint8Array(m.places.bytes), m.places.ends, 0);
    const extras = m.extras === null ? null : encodePart(keys, new Uint8Array(m.extras.bytes), m.extras.ends, 1);
    reply = { id: m.id, places, extras };
  } catch (err) {
    reply = { id: m.id, error: (err as Error).message };
  }
  const transfer = 'error' in reply ? [] : [reply.places.bytes, reply.places.ends.buffer as ArrayBuffer, ...(reply.extras ? [reply.extras.bytes, reply.extras.ends.buffer as ArrayBuffer] : [])];
  parentPort!.postMessage(reply, transfer);
});
