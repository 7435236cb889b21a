import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { DamageOutcome, DamageRun } from './lookup-store-damage-child.ts';

const CHILD = path.resolve('test/helpers/lookup-store-damage-child.ts');

/** A case's outcome, or how the process died while running it. */
export type CaseResult = DamageOutcome | { readonly crashed: string };

/**
 * Runs every case of `run` (from 0) in child processes: one child runs cases in order until it
 * dies; the case it died in is recorded with its signal or exit code, and a new child goes on
 * from the next.
 */
export async function runDamageCases(run: Omit<DamageRun, 'start'>): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  while (results.length < run.cases.length) {
    const start = results.length;
    const runFile = path.join(run.workDir, `run-${run.mode}-${start}.json`);
    writeFileSync(runFile, JSON.stringify({ ...run, start }));
    const child = spawn(process.execPath, [CHILD, runFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<string>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? `exit code ${code}`)));
    let started = -1;
    for await (const line of createInterface({ input: child.stdout })) {
      const message = JSON.parse(line) as { case: number; outcome?: DamageOutcome };
      if (message.outcome) results[message.case] = message.outcome;
      else started = message.case;
    }
    const how = await exited;
    if (results.length < run.cases.length) {
      if (started !== results.length) throw new Error(`the damage child died (${how}) outside a case, after case ${results.length - 1}: ${stderr}`);
      results[started] = { crashed: `${how}${stderr.trim() ? `: ${stderr.trim().split('\n').slice(-1)[0]}` : ''}` };
    }
  }
  return results;
}
