/**
 * What the stand-alone bench scripts (bench/export.ts, bench/summaries.ts) share: a generated
 * drop loaded once into a version folder of its size, and the API started on it as a process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadDrop } from '../ingest/publish/load-drop.ts';
import { createLogger } from '../shared/logger.ts';
import { localSite } from '../versions/open-version-site.ts';
import { generateDrop } from '../tools/generate-drop.ts';

/** The version folder for this size under `work`: generated (seed 1) and loaded on first use, reused after. */
export async function benchVersion(work: string, pois: string, weeks: string): Promise<{ dataDir: string; file: string; drop: string }> {
  const name = `${pois}x${weeks}`;
  const drop = path.join(work, `drop-${name}`);
  const dataDir = path.join(work, `data-${name}`);
  if (!existsSync(path.join(dataDir, 'CURRENT'))) {
    console.log(`generating ${name} into ${drop} and loading it (once) ...`);
    await generateDrop({ pois: Number(pois), weeks: Number(weeks), out: drop, format: 'csv.gz', seed: 1 });
    await loadDrop({ inputs: [drop], month: '2022-01', settings: { memoryLimit: '1GB', threads: null, tempDir: path.join(dataDir, '.tmp'), maxRejectShare: 0.05, storeExtras: false } }, localSite(dataDir, createLogger('silent', 'bench')));
  }
  const label = (await readFile(path.join(dataDir, 'CURRENT'), 'utf8')).trim();
  return { dataDir, file: path.join(dataDir, `${label}.duckdb`), drop };
}

/** api/main.ts on `dataDir` with one key and no rate limit (plus `env`), once it listens. */
export async function startBenchApi(dataDir: string, key: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['api/main.ts'], {
    env: { PATH: process.env['PATH'] ?? '', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', PLACEDATA_API_KEYS: key, LOG_LEVEL: 'info', RATE_LIMIT_POINTS: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      const line = text.split('\n').find((l) => l.includes('"msg":"listening"'));
      if (line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once('exit', () => reject(new Error(`the API exited:\n${text}`)));
  });
  child.stdout!.resume();
  return { child, url: `http://127.0.0.1:${port}` };
}
