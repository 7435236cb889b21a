import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { API_DOC, withGeneratedParts } from '../../tools/print-schemas.ts';

describe('docs/api.md shows the schemas as the server prints them', () => {
  it('its printed schemas of /v1 and /v2 and its codegen example are current (else: npm run docs:schema)', async () => {
    const doc = await readFile(API_DOC, 'utf8');
    expect(doc === await withGeneratedParts(doc), 'docs/api.md is stale: run npm run docs:schema').to.equal(true);
  });
});
