import { readFileSync } from 'node:fs';

/**
 * The fenced code blocks of the project's Markdown, as the doc tests run them. A block's kind is
 * its language: `sh` and `graphql` blocks are examples and run against the demo; any other block
 * (`json`, `ts`, `yaml`, none) is an answer, output, code or a diagram, never run, and a `json`
 * block right after an example is that example's documented answer (its shape is checked).
 *
 * An example says what it needs in an HTML comment on the line before its fence:
 *   <!-- doc-test: {"variables": {"placekeys": ["vp6-j9n@62j-shx-8qf"]}} -->
 * with `variables` (an object, or one per operation of the block), `endpoint` (default
 * /v1/graphql; or one per operation), `empty` (Placekeys the text says have no data), or
 *   <!-- doc-test: {"skip": "why it cannot run on the demo"} -->
 * The reason is printed by the test; an example is never skipped silently. Generated blocks
 * (`<!-- BEGIN generated: ... -->`) are the printed schemas and the codegen example's files.
 */
export interface DocMarker {
  readonly skip?: string;
  readonly variables?: Record<string, unknown> | readonly Record<string, unknown>[];
  readonly endpoint?: string | readonly string[];
  readonly empty?: readonly string[];
}

export interface DocBlock {
  /** `README.md:29`: the file and the line of the opening fence. */
  readonly where: string;
  readonly lang: string;
  readonly text: string;
  readonly marker: DocMarker | null;
  /** The BEGIN generated comment before it, if any. */
  readonly generated: string | null;
  /** The documented answer: the `json` block right after this one (none for a non-example). */
  answer: DocBlock | null;
}

const MARKER = /^<!--\s*doc-test:\s*([\s\S]*?)\s*-->\s*$/;
const GENERATED = /^<!--\s*BEGIN generated:\s*(.*?)\s*-->\s*$/;

export const EXAMPLE_LANGS = new Set(['sh', 'graphql']);

/** The fenced blocks of a Markdown file, in order. */
export function docBlocks(file: string, name: string = file): DocBlock[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    let before = start - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const comment = before >= 0 ? lines[before]! : '';
    const marked = MARKER.exec(comment);
    let marker: DocMarker | null = null;
    if (marked) {
      try {
        marker = JSON.parse(marked[1]!) as DocMarker;
      } catch (err) {
        throw new Error(`${name}:${before + 1}: the doc-test marker is not JSON: ${(err as Error).message}`);
      }
    }
    blocks.push({ where: `${name}:${start + 1}`, lang: open[1]!, text: body.join('\n'), marker, generated: GENERATED.exec(comment)?.[1] ?? null, answer: null });
  }
  for (let k = 0; k + 1 < blocks.length; k++) {
    if (EXAMPLE_LANGS.has(blocks[k]!.lang) && blocks[k + 1]!.lang === 'json') blocks[k]!.answer = blocks[k + 1]!;
  }
  return blocks;
}

/** Splits a graphql block into its operations: each starts at a line beginning `query`, `mutation` or `{`. */
export function operationsOf(text: string): string[] {
  const ops: string[][] = [];
  for (const line of text.split('\n')) {
    if (/^(query|mutation|\{)/.test(line) || ops.length === 0) ops.push([]);
    ops.at(-1)!.push(line);
  }
  return ops.map((op) => op.join('\n').trim()).filter((op) => op.replace(/^#.*$/gm, '').trim() !== '');
}

/** The JSON documents of a text, one after another (curl prints one per request). */
export function jsonDocuments(text: string): unknown[] {
  const docs: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') {
      if (depth++ === 0) start = i;
    } else if (ch === '}' || ch === ']') {
      if (--depth === 0) docs.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return docs;
}

/**
 * What differs between an answer and the shape the docs show: every key the docs show is there
 * (a `"..."` key stands for the rest), a value the docs show is not null, arrays the docs show
 * non-empty are non-empty, and scalars are of the shown type. Values themselves may differ.
 */
export function shapeProblems(actual: unknown, shown: unknown, path = '$'): string[] {
  if (shown === null || shown === '...') return [];
  if (actual === null || actual === undefined) return [`${path}: ${actual === null ? 'null' : 'absent'} where the docs show ${JSON.stringify(shown).slice(0, 60)}`];
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return [`${path}: not a list`];
    if (shown.length > 0 && actual.length === 0) return [`${path}: empty where the docs show ${shown.length} item(s)`];
    return actual.slice(0, shown.length).flatMap((a, i) => shapeProblems(a, shown[i], `${path}[${i}]`));
  }
  if (typeof shown === 'object') {
    if (typeof actual !== 'object' || Array.isArray(actual)) return [`${path}: not an object`];
    return Object.entries(shown as Record<string, unknown>).filter(([k]) => k !== '...')
      .flatMap(([k, v]) => shapeProblems((actual as Record<string, unknown>)[k], v, `${path}.${k}`));
  }
  return typeof actual === typeof shown ? [] : [`${path}: a ${typeof actual} where the docs show a ${typeof shown}`];
}

/**
 * Entries of an answer whose every product is null: a list item with a `placekey` and other
 * fields, all of them null (or empty lists), that the text does not say is empty.
 */
export function allNullEntries(answer: unknown, empty: ReadonlySet<string>, path = '$'): string[] {
  if (Array.isArray(answer)) return answer.flatMap((a, i) => allNullEntries(a, empty, `${path}[${i}]`));
  if (answer === null || typeof answer !== 'object') return [];
  const entry = answer as Record<string, unknown>;
  const others = Object.entries(entry).filter(([k]) => k !== 'placekey' && k !== 'cursor');
  if (typeof entry['placekey'] === 'string' && others.length > 0 && !empty.has(entry['placekey'])
    && others.every(([, v]) => v === null || (Array.isArray(v) && v.length === 0))) return [`${path}: every product of ${entry['placekey']} is null`];
  return Object.entries(entry).flatMap(([k, v]) => allNullEntries(v, empty, `${path}.${k}`));
}

/** A version label as the docs write it: `<epoch>__<year>_<month>`. */
export const LABEL_RE = /\b\d{10}__(\d{4})_(\d{2})\b/g;

/** The text with each label replaced by the demo's version of the same release month. */
export function withDemoLabels(text: string, labelOfMonth: ReadonlyMap<string, string>, where: string): string {
  return text.replace(LABEL_RE, (label, year: string, month: string) => {
    const demo = labelOfMonth.get(`${year}-${month}`);
    if (!demo) throw new Error(`${where}: the label ${label} names release month ${year}-${month}, which the demo does not have`);
    return demo;
  });
}
