import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import { rollback } from '../../versions/rollback.ts';
import { loadDrop, siteOf } from '../helpers/load-drop.ts';
import {
  KINDS, NEXT_LABEL, nextLookup, readSchema5Answers, relabelled, SCHEMA5_PATHS, serveCases, type Answer, type AnswerCase, type Schema5Answers,
} from '../helpers/schema5-answers.ts';
import { writeSchema5Drop } from '../helpers/schema5-drops.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const FIXTURE = path.resolve('test/fixtures/schema5');
const ENVS: readonly Record<string, string>[] = [{}, { LOOKUP_STORES: 'false' }];

/** Whole answers compared; on a difference, the first differing entry is what the failure shows (the bodies run to megabytes). */
function expectSame(actual: Answer, expected: Answer, name: string): void {
  if (isDeepStrictEqual(actual, expected)) return;
  type Body = { data?: { batch_lookup?: unknown[] } | null };
  const got = (actual.body as Body)?.data?.batch_lookup ?? [];
  const want = (expected.body as Body)?.data?.batch_lookup ?? [];
  const i = want.findIndex((e, k) => !isDeepStrictEqual(got[k], e));
  if (i >= 0) expect(got[i], `${name}: entry ${i}`).to.deep.equal(want[i]);
  expect(actual, name).to.deep.equal(expected);
}

/**
 * The versions a release older than this one published (version-file schema 5, look-up stores of
 * format 2: test/fixtures/schema5, made by its make-fixture.ts) must keep answering exactly what
 * they answered then, a drop loaded on top must build on them, and rollback must cross formats.
 * Nothing here names a table or a schema: only answers, and the versions they name.
 */
describe('schema-5 versions from an earlier release: served exactly, built on, rolled back to', function () {
  this.timeout(300_000);
  let dir: string;
  let dataDir: string;
  let answers: Schema5Answers;
  /** The label of the version the test's own 2022-04 load built. */
  let next = '';
  const labelOf = (release: string) => (release === '2022-04' ? next : answers.labels[release]!);

  /** Serves `dataDir` with look-up stores on and off: `current` is served, every case's answer is `expected`. */
  async function expectServed(current: string, cases: readonly { name: string; release: string; path: string; query: string; variables: Record<string, unknown> }[], expected: readonly Answer[]): Promise<void> {
    for (const env of ENVS) {
      const served = await serveCases(dataDir, env, cases as AnswerCase[], labelOf);
      // The look-up stores answered (the spec-fields look-ups) exactly when they were on.
      const stores = env['LOOKUP_STORES'] !== 'false';
      expect([served.current, served.lookupPath, (served.lookupCounts?.['lookup_store'] ?? 0) > 0], JSON.stringify(env))
        .to.deep.equal([current, stores ? 'lookup_store' : 'duckdb', stores]);
      cases.forEach((c, i) => expectSame(served.answers[i]!, expected[i]!, `${c.name} ${JSON.stringify(env)}`));
    }
  }

  /** The 2022-04 version's look-ups: every key with every week it holds (composed from 2022-03's answers and its own), its own weeks, its ranges. */
  function nextCases(): { cases: AnswerCase[]; expected: Answer[] } {
    const whole = SCHEMA5_PATHS.flatMap((p) => KINDS.map((kind) => nextLookup(answers, p, kind, next)));
    const own = answers.next.cases.map((c) => ({ ...c, answer: relabelled(c.answer, NEXT_LABEL, next) }));
    const cases = [...whole, ...own];
    return { cases, expected: cases.map((c) => c.answer) };
  }

  before(async () => {
    dir = await makeTempDir('schema5-upgrade');
    dataDir = path.join(dir, 'data');
    await mkdir(dataDir);
    await promisify(execFile)('tar', ['-xzf', path.join(FIXTURE, 'data.tar.gz'), '-C', dataDir]);
    answers = await readSchema5Answers(path.join(FIXTURE, 'answers.json.br'));
  });

  after(() => removeDir(dir));

  it('serves every captured answer: 2022-03 current, 2022-02 pinned, on /v1 and /v2, with look-up stores and without', async () => {
    // The fixture has substance: every key of both versions, each answer whole, errors included.
    expect([answers.cases.length, new Set(answers.cases.map((c) => c.release)).size, Object.keys(answers.labels)]).to.deep.equal([36, 2, ['2022-02', '2022-03']]);
    await expectServed(answers.labels['2022-03']!, answers.cases, answers.cases.map((c) => c.answer));
  });

  it('a 2022-04 drop loaded on top serves its own weeks, and all it inherits from 2022-03 and 2022-02 as they served it', async () => {
    const drop = await writeSchema5Drop('2022-04', path.join(dir, 'drop-2022-04'));
    const loaded = await loadDrop({ dataDir, inputs: [drop], month: '2022-04', settings: buildSettingsOf(testConfig(dataDir)) });
    next = loaded.label;
    expect([/^\d+__2022_04$/.test(next), loaded.report.base?.label, loaded.current]).to.deep.equal([true, answers.labels['2022-03'], next]);
    const { cases, expected } = nextCases();
    // The two earlier versions, pinned, answer as before.
    await expectServed(next, [...cases, ...answers.cases], [...expected, ...answers.cases.map((c) => c.answer)]);
  });

  it('rolled back to 2022-03 it serves the captured answers again; rolled forward, 2022-04 its own', async () => {
    expect(next, 'the 2022-04 load').to.not.equal('');
    expect(await rollback(siteOf(dataDir), { label: answers.labels['2022-03']! })).to.deep.equal({ from: next, to: answers.labels['2022-03'], retention: { expire: [], deleteFiles: [] } });
    await expectServed(answers.labels['2022-03']!, answers.cases, answers.cases.map((c) => c.answer));
    expect(await rollback(siteOf(dataDir), { label: next })).to.deep.equal({ from: answers.labels['2022-03'], to: next, retention: { expire: [], deleteFiles: [] } });
    const { cases, expected } = nextCases();
    await expectServed(next, cases, expected);
  });
});
