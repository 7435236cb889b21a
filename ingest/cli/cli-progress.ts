import cliProgress from 'cli-progress';

/** How the CLI shows progress on stderr: a bar (a terminal), a line per phase (logs, pipes), a timed line per update (`--timings`), or nothing. */
export type ProgressMode = 'bar' | 'lines' | 'timings' | 'off';

export interface Progress {
  readonly phase?: string;
  readonly percent?: number;
  readonly rows?: number;
}

export interface ProgressReporter {
  update(p: Progress): void;
  /** Ends the bar (idempotent); lines need no ending. */
  stop(): void;
}

/**
 * Progress of a load (or a match: `title`) on stderr, never stdout: stdout holds only results (and `--json` output),
 * so scripts can read it whatever the progress mode.
 */
export function progressReporter(mode: ProgressMode, err: (line: string) => void, stream: NodeJS.WritableStream = process.stderr, title = 'load'): ProgressReporter {
  if (mode === 'bar') {
    const bar = new cliProgress.SingleBar({ format: `${title} [{bar}] {percentage}% | {phase} | {rows} rows`, hideCursor: true, stream }, cliProgress.Presets.shades_classic);
    let started = false;
    let rows = 0; // phases that do not count rows keep the last count
    return {
      update: (p) => {
        if (!started) bar.start(100, 0, { phase: 'queued', rows: 0 });
        started = true;
        rows = p.rows ?? rows;
        bar.update(Math.round(p.percent ?? 0), { phase: p.phase ?? '', rows });
      },
      stop: () => {
        if (started) bar.stop();
        started = false;
      },
    };
  }
  if (mode === 'off') return { update: () => undefined, stop: () => undefined };
  const began = Date.now();
  let phase = '';
  return {
    update: (p) => {
      const line = `${p.phase ?? ''} ${Math.round(p.percent ?? 0)}%${p.rows ? ` (${p.rows} rows)` : ''}`;
      if (mode === 'timings') return err(`${((Date.now() - began) / 1000).toFixed(1)} s: ${line}`);
      if (p.phase === phase) return;
      phase = p.phase ?? '';
      err(`progress: ${line}`);
    },
    stop: () => undefined,
  };
}
