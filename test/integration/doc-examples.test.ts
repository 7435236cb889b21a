import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { allNullEntries, docBlocks, EXAMPLE_LANGS, jsonDocuments, operationsOf, shapeProblems, withDemoLabels, type DocBlock } from '../helpers/doc-examples.ts';
import { placedata } from '../helpers/placedata-cli.ts';
import { spawnApi, stopProcess, type SpawnedApi } from '../helpers/processes.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';

const run = promisify(execFile);
const BIN = path.resolve('bin/placedata.js');
const DOCS = ['README.md', ...(await readdir('docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const BLOCKS = DOCS.flatMap((f) => docBlocks(f));

/**
 * Every `sh` and `graphql` example of README.md and docs/*.md, run against a freshly loaded demo
 * as `npm start` serves it (placedata demo --if-missing, then api/main.ts --demo), each answer
 * checked: no `errors`, no entry whose products are all null unless the text says so, and the
 * shape of the documented answer that follows it. What the test substitutes: `localhost:3000`
 * (the demo's port), `$KEY` (the key the demo printed), version labels (the demo's version of
 * the same release month, from dataset_versions) and `npx placedata` (bin/placedata.js, the
 * command npx runs in the project; the example runs in a temp folder of its own).
 */
describe('documented examples run on the demo (README.md, docs/*.md)', function () {
  this.timeout(300_000);
  let dir: string;
  let api: SpawnedApi;
  let key: string;
  let env: Record<string, string>;
  let labelOfMonth: Map<string, string>;
  const ran: string[] = [];
  const notRun: string[] = [];

  before(async () => {
    dir = await makeTempDir('doc-examples');
    env = { DEMO_DIR: path.join(dir, 'demo-data'), DATA_DIR: path.join(dir, 'datasets'), LOG_LEVEL: 'silent' };
    const demo = await placedata(['demo', '--if-missing', '--json', '--no-progress'], env);
    expect(demo.code, demo.stderr).to.equal(0);
    key = (JSON.parse(demo.stdout) as { api_key: { key: string } }).api_key.key;
    api = await spawnApi({ ...env, LOG_LEVEL: 'info' }, ['--demo']);
    const versions = await graphql('/v1/graphql', '{ dataset_versions { label release_month } }', {});
    labelOfMonth = new Map((versions.data.dataset_versions as { label: string; release_month: string }[]).map((v) => [v.release_month, v.label]));
  });

  after(async () => {
    if (api) await stopProcess(api);
    await removeDir(dir);
    console.log(`      doc examples: ${ran.length} run, ${notRun.length} marked not runnable${notRun.map((n) => `\n        not run: ${n}`).join('')}`);
  });

  async function graphql(endpoint: string, query: string, variables: unknown): Promise<any> {
    const res = await fetch(api.url + endpoint, { method: 'POST', headers: { 'content-type': 'application/json', apikey: key }, body: JSON.stringify({ query, variables }) });
    return await res.json();
  }

  /** The problems of JSON answers: errors, all-null entries, and the documented shape. */
  function answerProblems(block: DocBlock, answers: unknown[]): string[] {
    const empty = new Set(block.marker?.empty ?? []);
    const shown = block.answer ? jsonDocuments(withDemoLabels(block.answer.text, labelOfMonth, block.answer.where)) : [];
    return answers.flatMap((answer, i) => [
      ...((answer as { errors?: unknown }).errors ? [`answer ${i + 1} has errors: ${JSON.stringify((answer as { errors: unknown }).errors)}`] : []),
      ...allNullEntries((answer as { data?: unknown }).data ?? null, empty).map((p) => `answer ${i + 1}: ${p}`),
      ...(i < shown.length ? shapeProblems(answer, shown[i]).map((p) => `answer ${i + 1} (documented at ${block.answer!.where}): ${p}`) : []),
    ]);
  }

  async function runGraphql(block: DocBlock): Promise<string[]> {
    const ops = operationsOf(block.text);
    const answers: unknown[] = [];
    for (const [i, op] of ops.entries()) {
      const marker = block.marker ?? {};
      const endpoint = Array.isArray(marker.endpoint) ? marker.endpoint[i] : marker.endpoint ?? '/v1/graphql';
      const variables = Array.isArray(marker.variables) ? marker.variables[i] : marker.variables;
      // An operation that declares variables needs them from its marker, or it would run on nothing.
      if (variables === undefined && /^\s*(query|mutation)\b[^{]*\(\s*\$/m.test(op)) return [`operation ${i + 1} declares variables: give them in a doc-test marker`];
      answers.push(await graphql(endpoint, withDemoLabels(op, labelOfMonth, block.where), JSON.parse(withDemoLabels(JSON.stringify(variables ?? {}), labelOfMonth, block.where))));
    }
    return answerProblems(block, answers);
  }

  async function runShell(block: DocBlock): Promise<string[]> {
    const cwd = await makeTempDir('doc-example');
    try {
      const script = withDemoLabels(block.text, labelOfMonth, block.where)
        .replace(/^KEY=pd_\.\.\..*$/gm, '')
        .replaceAll('localhost:3000', api.url.replace(/^http:\/\//, ''))
        .replaceAll('npx placedata', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)}`);
      let stdout: string;
      try {
        ({ stdout } = await run('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env: { PATH: process.env['PATH'] ?? '', HOME: cwd, KEY: key, ...env, DATA_DIR: env['DEMO_DIR']! } }));
      } catch (e) {
        const err = e as { code: number; stdout: string; stderr: string };
        return [`exit ${err.code}: ${(err.stderr.trim() || err.stdout.trim()).slice(0, 600)}`];
      }
      const problems = stdout.trimStart().startsWith('{') ? answerProblems(block, jsonDocuments(stdout)) : [];
      // Files an example writes (curl -o) hold a header and at least one row.
      for (const file of await readdir(cwd)) {
        const lines = (await readFile(path.join(cwd, file), 'utf8')).split('\n').filter((l) => l !== '');
        if (lines.length < 2) problems.push(`${file}: ${lines.length} line(s): ${lines.join(' ').slice(0, 200)}`);
      }
      return problems;
    } finally {
      await removeDir(cwd);
    }
  }

  for (const block of BLOCKS.filter((b) => EXAMPLE_LANGS.has(b.lang))) {
    const why = block.marker?.skip ?? (block.generated ? `generated: ${block.generated}` : null);
    if (why !== null) {
      notRun.push(`${block.where} (${block.lang}): ${why}`);
      continue;
    }
    it(`${block.where} (${block.lang})`, async () => {
      ran.push(block.where);
      const problems = block.lang === 'graphql' ? await runGraphql(block) : await runShell(block);
      expect(problems, `${block.where}:\n${block.text}`).to.deep.equal([]);
    });
  }

  it('every example either ran or says why it cannot (the blocks of other languages are answers, output or code)', () => {
    const examples = BLOCKS.filter((b) => EXAMPLE_LANGS.has(b.lang));
    const others = BLOCKS.filter((b) => !EXAMPLE_LANGS.has(b.lang));
    console.log(`      ${BLOCKS.length} fenced blocks in ${DOCS.join(', ')}: ${examples.length} examples (sh, graphql), ${others.length} other blocks (${[...new Set(others.map((b) => b.lang || 'untagged'))].join(', ')})`);
    expect(ran.length + notRun.length).to.equal(examples.length);
    expect(ran.length).to.be.greaterThan(notRun.length);
  });
});
