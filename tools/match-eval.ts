// The address-matching evaluation (issue 31): builds the labelled query set from the real samples,
// loads their places with `placedata load`, matches every query and prints precision and recall
// per perturbation kind; writes bench/match-eval.json and its section of bench/RESULTS.md.
// Wrong answers and misses (up to 10 of each per kind) go to stderr.
//   SAMPLES_DIR=../shared/samples npm run match:eval -- [--seed N] [--holdout 0.1] [--places N] [--no-write]
import { Command } from 'commander';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { evalFigures, examples, figuresMarkdown, writeResultsSection } from './match-eval/eval-report.ts';
import { runMatchEval } from './match-eval/run-match-eval.ts';

const cli = new Command('match-eval').description('Precision and recall of address matching on the evaluation set built from the samples')
  .option('--samples <dir>', 'the samples folder (default: SAMPLES_DIR, else ../shared/samples)')
  .option('--seed <n>', 'seed of the held-out choice and the perturbations', '31')
  .option('--holdout <share>', 'share of places held out of the drop', '0.1')
  .option('--places <n>', 'use only this many places (a seeded choice)')
  .option('--no-write', 'print only: leave bench/match-eval.json and bench/RESULTS.md as they are')
  .action(async (o: { samples?: string; seed: string; holdout: string; places?: string; write: boolean }) => {
    const samplesDir = path.resolve(o.samples ?? process.env['SAMPLES_DIR'] ?? '../shared/samples');
    const workDir = await mkdtemp(path.join(os.tmpdir(), 'placedata-match-eval-'));
    try {
      const seed = Number(o.seed);
      const run = await runMatchEval({ samplesDir, workDir, seed, holdout: Number(o.holdout), ...(o.places ? { places: Number(o.places) } : {}),
        env: process.env, log: (l) => console.error(l) });
      const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
      const args = process.argv.slice(2).join(' ');
      const figures = evalFigures(run, seed, `SAMPLES_DIR=../shared/samples npm run match:eval${args ? ` -- ${args}` : ''}`, `commit ${commit}`, new Date());
      console.error(examples(run));
      console.log(figuresMarkdown(figures));
      if (o.write) {
        await writeFile('bench/match-eval.json', JSON.stringify(figures, null, 2) + '\n');
        await writeResultsSection('bench/RESULTS.md', figures);
        console.error('wrote bench/match-eval.json and the section of bench/RESULTS.md');
      }
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  });
await cli.parseAsync(process.argv);
