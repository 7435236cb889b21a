import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import { printSchema } from 'graphql';
import { buildV2Schema } from '../../api/graphql/v2/schema.ts';
import { installPackage } from '../helpers/install-package.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';

const run = promisify(execFile);
const EXAMPLE = path.join(import.meta.dirname, '../../docs/examples/codegen');
const TSC = path.join(import.meta.dirname, '../../node_modules/.bin/tsc');

/**
 * docs/api.md's codegen example works: its config (scalars mapping and all) generates types for
 * its document from /v2's schema, and the example's client code type-checks against them.
 */
describe('the documented graphql-codegen example (docs/examples/codegen)', function () {
  this.timeout(120_000);
  let dir: string;

  before(async function () {
    // graphql-codegen lives in the example's own package (docs/examples/codegen/package.json), not
    // the service's: installed here on first use, and read from there (its types included).
    this.timeout(300_000);
    installPackage(EXAMPLE);
    const fromExample = (file: string) => import(pathToFileURL(path.join(EXAMPLE, file)).href);
    const { generate } = await fromExample('node_modules/@graphql-codegen/cli/esm/index.js') as { generate: (config: Record<string, unknown>, write: boolean) => Promise<unknown> };
    const config = (await fromExample('codegen.ts') as { default: { generates: Record<string, object> } }).default;
    dir = await makeTempDir('codegen');
    await writeFile(path.join(dir, 'schema.graphql'), printSchema(buildV2Schema()));
    const output = config.generates['placedata.generated.ts']!;
    // The example's own settings; only where the schema comes from (a file, not a running server) and the folders differ.
    // Plugins are found from the example's folder (graphql-codegen looks from the working directory).
    const fromHere = createRequire(path.join(EXAMPLE, 'package.json'));
    const pluginLoader = (name: string) => import(pathToFileURL(fromHere.resolve(name)).href);
    const local = { pluginLoader, ...config, schema: path.join(dir, 'schema.graphql'), documents: [path.join(EXAMPLE, 'placekeys.graphql')], generates: { [path.join(dir, 'placedata.generated.ts')]: output }, silent: true };
    await generate(local, true);
    await copyFile(path.join(EXAMPLE, 'use-placekeys.ts'), path.join(dir, 'use-placekeys.ts'));
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'es2024', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, allowImportingTsExtensions: true, noUncheckedIndexedAccess: true, skipLibCheck: true, types: [] },
      include: ['*.ts'],
    }));
  });

  after(async () => {
    await removeDir(dir);
  });

  const typecheck = () => run(TSC, ['-p', path.join(dir, 'tsconfig.json')]).then(() => 'ok', (err: { stdout?: string }) => String(err.stdout ?? err));

  it('maps the three custom scalars as configured', async () => {
    const generated = await readFile(path.join(dir, 'placedata.generated.ts'), 'utf8');
    for (const line of ['Placekey: { input: string; output: string; }', 'DateTime: { input: string; output: string; }', 'JSON: { input: unknown; output: Record<string, number | string | null>; }']) {
      expect(generated).to.contain(line);
    }
  });

  it('the example client code type-checks against the generated types', async () => {
    expect(await typecheck()).to.equal('ok');
  });

  it('and a misuse does not (the check can fail)', async () => {
    await writeFile(path.join(dir, 'misuse.ts'), `import type { PlacesQueryVariables } from './placedata.generated.ts';\nexport const v: PlacesQueryVariables = { placekeys: [42], week: '2022-03-21' };\n`);
    try {
      expect(await typecheck()).to.match(/misuse\.ts.*error TS2322/s);
    } finally {
      await writeFile(path.join(dir, 'misuse.ts'), 'export {};\n');
    }
  });
});
