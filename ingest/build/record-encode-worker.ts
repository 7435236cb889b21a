/**
 * A thread of the look-up store's build (ingest/build/record-encoders.ts): it turns a chunk of
 * keys and their joined documents into records (versions/lookup-store-format.ts encodeRecord: the
 * key, the lengths, each document's crc) and, in format 4, compresses each into its zstd frame
 * with the store's dictionary, handing the chunk's records back packed in one buffer it does not copy.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { RecordCompressor, ZSTD_LEVEL } from '../../versions/lookup-store-codec.ts';
import { encodeRecord } from '../../versions/lookup-store-format.ts';
import type { EncodeReply, EncodeRequest, EncoderSetup } from './record-encoders.ts';

const setup = workerData as EncoderSetup;
const compressors = setup.format === 4
  ? [new RecordCompressor(setup.dictionaries[0], ZSTD_LEVEL.places), new RecordCompressor(setup.dictionaries[1], ZSTD_LEVEL.extras)]
  : null;

/** `count` records of one database, packed: their bytes end to end and where each ends. */
function encodePart(keys: readonly string[], docs: Uint8Array, ends: Uint32Array, part: 0 | 1): { bytes: ArrayBuffer; ends: Uint32Array } {
  const columns = part === 0 ? setup.columns : setup.extraColumns;
  const firstColumn = part === 0 ? 0 : setup.columns;
  const out: Buffer[] = [];
  const outEnds = new Uint32Array(keys.length);
  let total = 0;
  let start = 0;
  for (let r = 0; r < keys.length; r++) {
    const record = encodeRecord(keys[r]!, docs.subarray(start, ends[r]!), columns, setup.format, firstColumn);
    start = ends[r]!;
    // The compressor's buffer is reused: its frame is copied out before the next record.
    const value = compressors === null ? record : Buffer.from(compressors[part]!.compress(record));
    out.push(value);
    total += value.length;
    outEnds[r] = total;
  }
  const bytes = Buffer.allocUnsafeSlow(total);
  let at = 0;
  for (const v of out) at += v.copy(bytes, at);
  return { bytes: bytes.buffer as ArrayBuffer, ends: outEnds };
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
