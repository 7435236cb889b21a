import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { canonicalPlacekey, geoToWhere, h3ToWhere, isValidPlacekey, whereToH3 } from '../../shared/placekey.ts';

describe('Placekey rules', () => {
  it('accepts both what styles, location-only keys and e/u replacement characters', () => {
    for (const key of ['222-227@dvt-smp-tvz', 'zzw-22y@5vg-7gt-qzz', '@5vg-7gq-tvz', '5vg-7gq-tvz', '1rsdbudq45@5vg-7gt-tn5',
      '0rsdbudq45@5vg-7gt-tn5', '22222222-zzzzzzzzz@5vg-7gq-tvz', 'zzz@5vg-7gq-tvz', '@63f-kke-c5z']) {
      expect(isValidPlacekey(key), key).to.equal(true);
    }
  });

  it('refuses bad shapes, case, padding, spaces and where parts that are not resolution-10 H3 cells', () => {
    for (const key of ['', '@abc', 'abc-xyz', 'abcxyz234', '@@5vg-7gq-tvz', '222-222@5VG-7GQ-TVZ', '222-222@5vg-7gq-tvz ',
      '222-222@222-222-222', '@abc-234-xyz', 'zzz-zzz-zzz', '@a5v-7gq-tvz', '5vg-7gq-tva', '7rsdbudq45@5vg-7gt-tn5',
      'abc-345@5vg-7gq-tvz', '22-zzz@5vg-7gq-tvz', 'bcd-345@', "'; DROP TABLE places_core; --", 'x'.repeat(10_000)]) {
      expect(isValidPlacekey(key), key).to.equal(false);
    }
  });

  it('encodes and decodes where parts like the official library', () => {
    expect(whereToH3('dvt-smp-tvz')).to.equal('8a754e64992ffff');
    expect(h3ToWhere('8a754e64992ffff')).to.equal('dvt-smp-tvz');
    expect(geoToWhere(0, 0)).to.equal('dvt-smp-tvz');
    expect(whereToH3('5vg-7gt-qzz')).to.equal('8a283082a677fff');
  });

  it('writes a where-only key with its @', () => {
    expect(canonicalPlacekey('5vg-7gq-tvz')).to.equal('@5vg-7gq-tvz');
    expect(canonicalPlacekey('@5vg-7gq-tvz')).to.equal('@5vg-7gq-tvz');
    expect(canonicalPlacekey('222-227@dvt-smp-tvz')).to.equal('222-227@dvt-smp-tvz');
  });

  describe('against the shared vectors (SAMPLES_DIR)', function () {
    const samples = process.env['SAMPLES_DIR'];
    before(function () {
      if (!samples) {
        console.log('    skipped: SAMPLES_DIR is not set, so the shared Placekey vectors were not checked');
        this.skip();
      }
    });

    it('agrees with placekey-py on every validity vector and every geo vector', async () => {
      const vectors = JSON.parse(await readFile(path.join(samples!, 'placekey/placekey-vectors.json'), 'utf8'));
      for (const v of vectors.validity_vectors) expect(isValidPlacekey(v.input), JSON.stringify(v.input)).to.equal(v.placekey_py_expected);
      for (const g of vectors.geo_vectors) {
        expect(geoToWhere(g.lat, g.long), g.info).to.equal(g.placekey.slice(1));
        expect(whereToH3(g.placekey.slice(1))).to.equal(g.h3_r10);
      }
      for (const t of vectors.tw4t_divergence) expect(h3ToWhere(t.h3_r10)).to.equal(t.placekey_python_algorithm.slice(1));
      expect(vectors.validity_vectors.length + vectors.geo_vectors.length).to.be.greaterThan(100);
    });

    it('accepts all 6,747 real placekeys', async () => {
      const lines = (await readFile(path.join(samples!, 'placekey/all_real_placekeys.csv'), 'utf8')).trim().split('\n').slice(1);
      const invalid = lines.map((l) => l.split(',')[0]!).filter((k) => !isValidPlacekey(k));
      expect(lines.length).to.equal(6747);
      expect(invalid).to.deep.equal([]);
    });
  });
});
