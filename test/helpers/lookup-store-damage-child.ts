/**
 * Runs damage cases against a look-up store in a process of its own (lmdb can kill the process
 * on some damage; the parent, test/integration/lookup-store.test.ts, records which case did and
 * starts a new child after it). Argument: a JSON file (DamageRun). Prints one JSON line as each
 * case starts and one with its outcome (stdout to a pipe is synchronous on Linux: a line printed
 * is a line the parent gets, even if the next read kills the process).
 */
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { LookupStore, type ExpectedStore } from '../../api/lookup/lookup-store.ts';
import { LookupStoreDamaged } from '../../versions/lookup-store/lookup-store-damaged.ts';
import { applyDamage, type Damage } from './lookup-store-damage.ts';

export interface DamageRun {
  readonly store: string;
  /** What the build recorded (LookupStore.open's cheap checks). */
  readonly expected: ExpectedStore;
  readonly columns: readonly string[];
  readonly known: readonly (readonly [string, readonly (string | null)[]])[];
  readonly unknown: readonly string[];
  readonly cases: readonly Damage[];
  /** before-open: damaged, then opened (its cheap checks), then read; after-open: opened, then damaged, then read. */
  readonly mode: 'before-open' | 'after-open';
  readonly start: number;
  readonly workDir: string;
}

export interface DamageOutcome {
  readonly open: 'ok' | 'refused';
  readonly right: number;
  readonly refused: number;
  /** Answers that were neither right nor refused: a wrong document, a missing key or document, a key that is not there. */
  readonly wrong: readonly string[];
  /** Errors that are not LookupStoreDamaged. */
  readonly other: readonly string[];
  /** Whether the batch holding the case's mustRefuse key was refused (null: no such key). */
  readonly refusedItsKey: boolean | null;
}

const BATCH = 100;
const UNKNOWN_PER_BATCH = 40;

const run = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as DamageRun;
const truth = new Map(run.known.map(([k, docs]) => [k, docs]));

function batches(): string[][] {
  const out: string[][] = [];
  for (let i = 0, b = 0; i < run.known.length; i += BATCH, b++) {
    const unknown = Array.from({ length: UNKNOWN_PER_BATCH }, (_, j) => run.unknown[(b * UNKNOWN_PER_BATCH + j) % run.unknown.length]!);
    out.push([...run.known.slice(i, i + BATCH).map(([k]) => k), ...unknown]);
  }
  return out;
}

function differences(keys: readonly string[], found: Map<string, (Buffer | null)[]>): string[] {
  const wrong: string[] = [];
  for (const key of keys) {
    const want = truth.get(key);
    const got = found.get(key)?.map((d) => (d === null ? null : d.toString('utf8')));
    if (want === undefined && got !== undefined) wrong.push(`${key}: found, but the file has no such key`);
    if (want !== undefined && got === undefined) wrong.push(`${key}: not found, but the file has it`);
    if (want === undefined || got === undefined) continue;
    want.forEach((doc, i) => {
      if (got[i] !== doc) wrong.push(`${key} ${run.columns[i]}: ${got[i] === null ? 'null' : 'another document'} where the file has ${doc === null ? 'null' : 'a document'}`);
    });
  }
  return wrong;
}

async function runCase(index: number, damage: Damage): Promise<DamageOutcome> {
  const file = path.join(run.workDir, `case-${run.mode}-${index}.lmdb`);
  copyFileSync(run.store, file);
  let store: LookupStore;
  try {
    if (run.mode === 'before-open') applyDamage(file, damage);
    try {
      store = LookupStore.open(file, run.expected);
    } catch (err) {
      if (!(err instanceof LookupStoreDamaged)) return { open: 'ok', right: 0, refused: 0, wrong: [], other: [`open: ${(err as Error).message}`], refusedItsKey: null };
      return { open: 'refused', right: 0, refused: 0, wrong: [], other: [], refusedItsKey: damage.mustRefuse ? true : null };
    }
    if (run.mode === 'after-open') applyDamage(file, damage);
    let right = 0;
    let refused = 0;
    let refusedItsKey: boolean | null = damage.mustRefuse ? false : null;
    const wrong: string[] = [];
    const other: string[] = [];
    for (const keys of batches()) {
      try {
        const found = store.lookup(keys, run.columns);
        const diff = differences(keys, found);
        if (diff.length === 0) right++;
        else wrong.push(...diff);
      } catch (err) {
        if (!(err instanceof LookupStoreDamaged) || err.code !== 'LOOKUP_STORE_DAMAGED') other.push((err as Error).message);
        else refused++;
        if (damage.mustRefuse && keys.includes(damage.mustRefuse)) refusedItsKey = true;
      }
    }
    await store.close();
    return { open: 'ok', right, refused, wrong, other, refusedItsKey };
  } finally {
    rmSync(file, { force: true });
    rmSync(`${file}-lock`, { force: true });
  }
}

for (let i = run.start; i < run.cases.length; i++) {
  process.stdout.write(JSON.stringify({ case: i, started: true }) + '\n');
  process.stdout.write(JSON.stringify({ case: i, outcome: await runCase(i, run.cases[i]!) }) + '\n');
}
