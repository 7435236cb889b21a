// Import cycles through any import, `import type` included: eslint-plugin-import's no-cycle skips
// type-only imports, and a cycle of types still ties two modules' designs together (issue 33
// found request-context.ts <-> version-diff-field.ts and drop-files.ts <-> drop-id.ts). Reads
// every tracked .ts file's imports with TypeScript's own pre-processor (no type checking, so it
// takes about a second), resolves the relative ones, and reports each strongly connected group.
//   node lint/import-cycles.js <repository root>   exits 1 and names the files when there is one
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(process.argv[2] ?? '.');
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.tsx'], { cwd: root, encoding: 'utf8' })
  .split('\n').filter((f) => f !== '' && !f.endsWith('.d.ts'));
const known = new Set(files);

/** The repository files a file imports (relative specifiers only: packages cannot import us back). */
function importsOf(file) {
  const info = ts.preProcessFile(readFileSync(path.join(root, file), 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName).filter((s) => s.startsWith('.'))
    .map((s) => path.posix.normalize(path.posix.join(path.posix.dirname(file), s)))
    .filter((f) => known.has(f));
}

const graph = new Map(files.map((f) => [f, [...new Set(importsOf(f))]]));

// Tarjan's strongly connected components, iteratively (no recursion limit on deep chains).
let next = 0;
const index = new Map(), low = new Map(), onStack = new Set(), stack = [], groups = [];
for (const start of files) {
  if (index.has(start)) continue;
  const work = [[start, 0]];
  index.set(start, next); low.set(start, next); next++; stack.push(start); onStack.add(start);
  while (work.length) {
    const frame = work[work.length - 1];
    const [v, i] = frame;
    const edges = graph.get(v);
    if (i < edges.length) {
      frame[1]++;
      const w = edges[i];
      if (!index.has(w)) {
        index.set(w, next); low.set(w, next); next++; stack.push(w); onStack.add(w);
        work.push([w, 0]);
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
      continue;
    }
    work.pop();
    if (work.length) {
      const parent = work[work.length - 1][0];
      low.set(parent, Math.min(low.get(parent), low.get(v)));
    }
    if (low.get(v) === index.get(v)) {
      const group = [];
      let w;
      do { w = stack.pop(); onStack.delete(w); group.push(w); } while (w !== v);
      if (group.length > 1 || graph.get(v).includes(v)) groups.push(group.sort());
    }
  }
}

if (groups.length) {
  for (const g of groups) console.error(`import cycle (type-only imports count): ${g.join(' <-> ')}`);
  console.error(`${groups.length} import cycle(s): move what both sides need into a module of its own`);
  process.exit(1);
}
