import { expect } from 'chai';
import { groupedGuards } from '../../shared/held-state.ts';

describe('groupedGuards: a hold\'s guards once each, with how often they fired', () => {
  it('counts repeats in the order first seen, and leaves a single guard bare', () => {
    const reasons = [
      ...Array.from({ length: 26 }, (_, i) => ({ guard: 'category_vanished', message: `category ${i} has no POI` })),
      { guard: 'poi_drop', message: 'POIs fell' },
      { guard: 'category_vanished', message: 'one more' },
    ];
    expect(groupedGuards(reasons)).to.deep.equal(['category_vanished x27', 'poi_drop']);
    expect(groupedGuards([])).to.deep.equal([]);
  });
});
