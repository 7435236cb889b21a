import { expect } from 'chai';
import fc from 'fast-check';
import { rawDictionary, RecordCompressor, RecordDecompressor, ZSTD_DICTIONARY_BYTES } from '../../versions/lookup-store/lookup-store-codec.ts';
import { LookupStoreDamaged } from '../../versions/lookup-store/lookup-store-damaged.ts';
import { encodeRecord, joinDocuments, readDocuments, recordSeed } from '../../versions/lookup-store/lookup-store-format.ts';
import { crc32 } from 'node:zlib';

const doc = (i: number) => JSON.stringify({ location_name: `Place ${i}`, city: i % 2 ? 'Springfield' : 'Shelbyville', raw_visit_counts: i * 7, visits_by_day: [i, i + 1, i + 2] });
const records = Array.from({ length: 2000 }, (_, i) => encodeRecord(`222-22${i % 10}@5vg-7gq-${String(i).padStart(3, '0')}`, joinDocuments([doc(i), i % 3 ? doc(i + 1) : null]), 2, 4));

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).to.be.instanceOf(LookupStoreDamaged);
    return (err as LookupStoreDamaged).reason;
  }
  return 'answered';
}

describe('formats 4 and 5\'s record codec: zstd frames with a dictionary of the store\'s own records', () => {
  it('samples whole records across the sample, up to 64 KiB; none, an empty dictionary', () => {
    const dictionary = rawDictionary(records);
    const all = Buffer.concat(records);
    expect(all.length).to.be.greaterThan(ZSTD_DICTIONARY_BYTES);
    expect(dictionary.length).to.equal(ZSTD_DICTIONARY_BYTES);
    // Every second record (the sample is over twice twice the dictionary), starting with the first.
    expect(Math.floor(all.length / ZSTD_DICTIONARY_BYTES / 2)).to.equal(2);
    expect(dictionary.subarray(0, records[0]!.length + records[2]!.length)).to.deep.equal(Buffer.concat([records[0]!, records[2]!]));
    expect(rawDictionary([]).length).to.equal(0);
    expect(rawDictionary(records.slice(0, 3))).to.deep.equal(Buffer.concat(records.slice(0, 3)));
  });

  it('inflates every record to its bytes, with or without a dictionary, and the frames are smaller with one', () => {
    fc.assert(fc.property(fc.array(fc.uint8Array({ maxLength: 3000 }), { minLength: 1, maxLength: 20 }), fc.boolean(), (values, withDictionary) => {
      const dictionary = withDictionary ? rawDictionary(records) : Buffer.alloc(0);
      const compressor = new RecordCompressor(dictionary, 3);
      const decompressor = new RecordDecompressor('t.lmdb', dictionary);
      const frames = values.map((v) => Buffer.from(compressor.compress(v)));
      expect(frames.map((f) => Buffer.from(decompressor.decompress(f, 'k')))).to.deep.equal(values.map((v) => Buffer.from(v)));
    }));
    // A record larger than the reader's buffer: sized from its frame, then inflated.
    const big = Buffer.from(Array.from({ length: 30000 }, (_, i) => doc(i)).join(''));
    expect(big.length).to.be.greaterThan(1 << 20);
    const frame = Buffer.from(new RecordCompressor(Buffer.alloc(0), 3).compress(big));
    expect(Buffer.from(new RecordDecompressor('t.lmdb', Buffer.alloc(0)).decompress(frame, 'k'))).to.deep.equal(big);
    const sized = (dictionary: Buffer) => {
      const compressor = new RecordCompressor(dictionary, 6);
      return records.reduce((n, r) => n + compressor.compress(r).length, 0);
    };
    expect(sized(rawDictionary(records))).to.be.lessThan(sized(Buffer.alloc(0)) / 2);
  });

  it('refuses a value that is not a whole frame of a record, and the record proves its key and documents once inflated', () => {
    const dictionary = rawDictionary(records);
    const decompressor = new RecordDecompressor('t.lmdb', dictionary);
    const frame = Buffer.from(new RecordCompressor(dictionary, 6).compress(records[5]!));
    const key = '222-225@5vg-7gq-005';
    expect(readDocuments('t.lmdb', decompressor.decompress(frame, key), key, crc32(key), 4, 2, [0, 1]).map((d) => d?.toString())).to.deep.equal([doc(5), doc(6)]);
    const record = `the record of "${key}"`;
    expect(refusal(() => decompressor.decompress(Buffer.from('not a frame at all'), key))).to.equal(`${record} is not a zstd frame: Unknown frame descriptor`);
    expect(refusal(() => decompressor.decompress(frame.subarray(0, frame.length - 3), key))).to.equal(`${record} does not inflate: Src size is incorrect`);
    expect(refusal(() => decompressor.decompress(Buffer.concat([frame, Buffer.from([1, 2, 3])]), key))).to.equal(`${record} does not inflate: Src size is incorrect`);
    // The frame's stated size (one byte after the descriptor, for a record this small) made larger than the record.
    const larger = Buffer.from(frame);
    larger[5] = larger[5]! + 1;
    expect(refusal(() => decompressor.decompress(larger, key))).to.equal(`${record} does not inflate: Data corruption detected`);
    // Inflated with another store's dictionary: not this record, refused by the record's own checks.
    const other = new RecordDecompressor('t.lmdb', rawDictionary(records.slice(1000)));
    expect(refusal(() => readDocuments('t.lmdb', other.decompress(frame, key), key, crc32(key), 4, 2, [0, 1]))).to.not.equal('answered');
  });

  it('a format-5 frame proves every byte by zstd\'s checksum and its record whose it is by its tag; NULLs are NULLs', () => {
    const key = '222-227@5vg-7gq-tvz';
    const dictionary = rawDictionary(records);
    const record = encodeRecord(key, joinDocuments([doc(1), null, doc(2)]), 3, 5, 5);
    // u8 format, u16 columns, 3 lengths, the documents, the tag: the size of format 4's record.
    expect(record.length).to.equal(3 + 12 + doc(1).length + doc(2).length + 4);
    expect(record.readUInt32LE(record.length - 4)).to.equal(recordSeed(crc32(key), 5));
    const frame = Buffer.from(new RecordCompressor(dictionary, 6, true).compress(record));
    // The frame header's descriptor says it carries a checksum (bit 2), which it ends with.
    expect(frame.readUInt32LE(0)).to.equal(0xfd2fb528);
    expect(frame[4]! & 0x04).to.equal(0x04);
    const decompressor = new RecordDecompressor('t.lmdb', dictionary, true);
    const read = (k: string, first: number, value: Buffer = frame) => readDocuments('t.lmdb', decompressor.decompress(value, k), k, crc32(k), 5, 3, [2, 1, 0], first);
    expect(read(key, 5).map((d) => d?.toString() ?? null)).to.deep.equal([doc(2), null, doc(1)]);
    expect(refusal(() => read('222-227@5vg-7gq-tvy', 5))).to.equal('the record found for "222-227@5vg-7gq-tvy" is another key\'s or database\'s');
    expect(refusal(() => read(key, 0))).to.equal(`the record found for "${key}" is another key's or database's`);
    const checksums = new Set<string>();
    for (let at = 5; at < frame.length; at += 3) {
      const damaged = Buffer.from(frame);
      damaged[at] = damaged[at]! ^ 0x01;
      checksums.add(refusal(() => read(key, 5, damaged)));
    }
    // Every damage refused; those inside the blocks by zstd's checksum.
    expect(checksums.has('answered')).to.equal(false);
    expect(checksums.has(`the record of "${key}" does not inflate: Restored data doesn't match checksum`)).to.equal(true);
    // A frame whose checksum flag was lost is not inflated at all, nor is format 4's frame of the record.
    const unflagged = Buffer.from(frame);
    unflagged[4] = unflagged[4]! & ~0x04;
    expect(refusal(() => read(key, 5, unflagged))).to.equal(`the record of "${key}" is not a zstd frame with a checksum`);
    expect(refusal(() => read(key, 5, Buffer.from(new RecordCompressor(dictionary, 6).compress(record))))).to.equal(`the record of "${key}" is not a zstd frame with a checksum`);
    // Format 4's reader does not take a format-5 record as its own.
    expect(refusal(() => readDocuments('t.lmdb', record, key, crc32(key), 4, 3, [0], 5))).to.equal(`the record found for "${key}" fails its crc`);
  });

  it('a format-4 record proves its key, its database and every byte with one crc; NULLs are NULLs', () => {
    const key = '222-227@5vg-7gq-tvz';
    const record = encodeRecord(key, joinDocuments([doc(1), null, doc(2)]), 3, 4, 5);
    // u8 format, u16 columns, 3 lengths, the documents, the crc: no key, no crc per document.
    expect(record.length).to.equal(3 + 12 + doc(1).length + doc(2).length + 4);
    const read = (k: string, first: number, value: Buffer = record) => readDocuments('t.lmdb', value, k, crc32(k), 4, 3, [2, 1, 0], first);
    expect(read(key, 5).map((d) => d?.toString() ?? null)).to.deep.equal([doc(2), null, doc(1)]);
    expect(refusal(() => read('222-227@5vg-7gq-tvy', 5))).to.equal('the record found for "222-227@5vg-7gq-tvy" fails its crc');
    // The same bytes read as another database's record (places' first column is 0).
    expect(refusal(() => read(key, 0))).to.equal(`the record found for "${key}" fails its crc`);
    for (let at = 0; at < record.length; at += 7) {
      const damaged = Buffer.from(record);
      damaged[at] = damaged[at]! ^ 0x01;
      expect(refusal(() => read(key, 5, damaged)), `byte ${at}`).to.equal(`the record found for "${key}" fails its crc`);
    }
    expect(refusal(() => read(key, 5, record.subarray(0, 10)))).to.equal(`the record found for "${key}" fails its crc`);
  });
});
