import { expect } from 'chai';
import fc from 'fast-check';
import { Worker } from 'node:worker_threads';
import { MAX_SHARED_READS, ReadClaims } from '../../api/lookup/read-claims.ts';

describe('ReadClaims: the reads of a look-up shared by two threads', () => {
  it('gives every read once, the front ascending from 0 and the back descending from the last, in any interleaving', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 300 }), fc.array(fc.boolean(), { maxLength: 400 }), (reads, sides) => {
      const claims = ReadClaims.create(reads);
      const front: number[] = [];
      const back: number[] = [];
      for (const fromFront of sides) {
        const read = fromFront ? claims.fromFront() : claims.fromBack();
        if (read >= 0) (fromFront ? front : back).push(read);
      }
      // Then each side takes what is left, in turn.
      for (let read = claims.fromFront(); read >= 0; read = claims.fromFront()) front.push(read);
      expect([claims.fromFront(), claims.fromBack()]).to.deep.equal([-1, -1]);
      expect(front).to.deep.equal(Array.from({ length: front.length }, (_, i) => i));
      expect(back).to.deep.equal(Array.from({ length: back.length }, (_, i) => reads - 1 - i));
      expect(front.length + back.length).to.equal(reads);
    }));
  });

  it('gives every read once when the other side claims on another thread at the same time', async () => {
    for (const reads of [1, 2, 1000, MAX_SHARED_READS]) {
      const claims = ReadClaims.create(reads);
      const worker = new Worker(new URL('../helpers/claim-from-back-worker.ts', import.meta.url), { workerData: { buffer: claims.buffer } });
      const theirs = new Promise<number[]>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      const mine: number[] = [];
      for (let read = claims.fromFront(); read >= 0; read = claims.fromFront()) mine.push(read);
      const got = await theirs;
      await worker.terminate();
      const all = [...mine, ...got].sort((a, b) => a - b);
      expect(all, `${reads} reads`).to.deep.equal(Array.from({ length: reads }, (_, i) => i));
    }
  });

  it('gives nothing after close, and refuses more reads than one word can count', () => {
    const claims = ReadClaims.create(10);
    expect([claims.fromFront(), claims.fromBack()]).to.deep.equal([0, 9]);
    claims.close();
    expect([claims.fromFront(), claims.fromBack()]).to.deep.equal([-1, -1]);
    expect(ReadClaims.create(0).fromBack()).to.equal(-1);
    expect(() => ReadClaims.create(MAX_SHARED_READS + 1)).to.throw(RangeError, `cannot share ${MAX_SHARED_READS + 1} reads`);
    expect(() => ReadClaims.create(1.5)).to.throw(RangeError, 'cannot share 1.5 reads');
  });
});
