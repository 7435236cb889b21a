import { expect } from 'chai';
import express from 'express';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { webPages } from '../../api/pages/web-pages.ts';
import { createLogger } from '../../shared/logger.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { testConfig } from '../helpers/test-config.ts';

const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

describe('web pages: served by the web process without a key, with their bundles, nothing from elsewhere (needs npm run build:web)', () => {
  let dir: string;
  let server: RunningServer;
  before(async () => {
    dir = await makeTempDir('web-pages');
    server = await startServer(testConfig(path.join(dir, 'data')), createLogger('silent', 'test'));
  });
  after(async () => {
    await server.close();
    await removeDir(dir);
  });

  for (const [route, bundle] of [['/', 'explorer'], ['/status', 'status']] as const) {
    it(`GET ${route}: the ${bundle} page, loading only its own bundles, with a strict CSP`, async () => {
      const res = await fetch(server.url + route);
      const html = await res.text();
      expect([res.status, res.headers.get('content-type'), res.headers.get('content-security-policy'), res.headers.get('x-frame-options'), res.headers.get('referrer-policy')])
        .to.deep.equal([200, 'text/html; charset=utf-8', CSP, 'DENY', 'no-referrer']);
      expect([...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1])).to.deep.equal(['data:,', `/assets/${bundle}.css`, `/assets/${bundle}.js`]);
      for (const [asset, type] of [[`${bundle}.js`, 'text/javascript; charset=utf-8'], [`${bundle}.css`, 'text/css; charset=utf-8']]) {
        const a = await fetch(`${server.url}/assets/${asset}`);
        const body = await a.text();
        expect([a.status, a.headers.get('content-type')]).to.deep.equal([200, type]);
        // Bundled, not fetched: no absolute URL to another host is loaded by the page.
        expect(body).not.to.match(/(?:import|src=|url\()\s*["']?https?:\/\//);
      }
    });
  }

  it('an unknown asset is a 404 NOT_FOUND; pages not built yet answer 503 NOT_READY saying how to build them', async () => {
    const missing = await fetch(`${server.url}/assets/nope.js`);
    expect([missing.status, await missing.json()]).to.deep.equal([404, { errors: [{ message: 'Not found: the API is POST /v1/graphql or /v2/graphql', extensions: { code: 'NOT_FOUND' } }] }]);
    const app = express().use(webPages(path.join(dir, 'not-built')));
    const http = app.listen(0, '127.0.0.1');
    await new Promise((r) => http.once('listening', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(http.address() as AddressInfo).port}/`);
      expect([res.status, await res.json()]).to.deep.equal([503, { errors: [{ message: 'The web pages are not built: run npm run build:web', extensions: { code: 'NOT_READY' } }] }]);
    } finally {
      await new Promise((r) => http.close(r));
    }
  });
});
