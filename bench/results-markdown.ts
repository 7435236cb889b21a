import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';

/**
 * The line in bench/RESULTS.md after which everything is written by hand (figures measured apart
 * from `npm run bench`, e.g. with bench/extras-paths.ts): a bench run rewrites what is above it
 * from bench/results.json and keeps what is below it as it is.
 */
export const HAND_MARKER = '<!-- Written by hand below this line: `npm run bench` keeps it as it is. -->';

/** The `## ` sections of a markdown text, each from its heading to the next. */
function sections(text: string): { heading: string; body: string }[] {
  return text.split(/^(?=## )/m).filter((s) => s.startsWith('## ')).map((body) => ({ heading: body.split('\n', 1)[0]!, body }));
}

/**
 * What of `previous` (the file as it is) a run keeps: everything after HAND_MARKER; in a file
 * without the marker, every section whose heading `rendered` does not have (a section of the
 * bench's that a run rendered under another heading is then kept too: better twice than lost).
 */
export function handWritten(previous: string, rendered: string): string {
  const at = previous.indexOf(HAND_MARKER);
  if (at >= 0) return previous.slice(at + HAND_MARKER.length).replace(/^\n+/, '');
  const ours = new Set(sections(rendered).map((s) => s.heading.trimEnd()));
  return sections(previous).filter((s) => !ours.has(s.heading.trimEnd())).map((s) => s.body.replace(/\n+$/, '\n')).join('\n');
}

/** Writes `file`: `rendered` (the bench's sections), the marker, then the file's hand-written sections. */
export async function writeResultsMarkdown(file: string, rendered: string): Promise<void> {
  const previous = existsSync(file) ? await readFile(file, 'utf8') : '';
  const kept = handWritten(previous, rendered);
  await writeFile(file, `${rendered.replace(/\n+$/, '\n')}\n${HAND_MARKER}\n${kept ? `\n${kept}` : ''}`);
}
