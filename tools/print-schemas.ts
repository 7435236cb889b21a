import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { printSchema } from 'graphql';
import { buildV1Schema } from '../api/graphql/v1/schema.ts';
import { buildV2Schema } from '../api/graphql/v2/schema.ts';

/**
 * docs/api.md's generated parts: the printed schema of each path, and the codegen example's
 * files, each between a BEGIN and an END marker. `npm run docs:schema` rewrites them;
 * test/unit/printed-schemas.test.ts fails when the file differs from what this prints.
 */
export const API_DOC = path.join(import.meta.dirname, '..', 'docs', 'api.md');
const EXAMPLES = path.join(import.meta.dirname, '..', 'docs', 'examples', 'codegen');

/** Each generated part: its marker name, its code-block language, and its text. */
export async function generatedParts(): Promise<{ name: string; lang: string; text: string }[]> {
  const example = (file: string) => readFile(path.join(EXAMPLES, file), 'utf8');
  return [
    { name: 'schema /v1/graphql', lang: 'graphql', text: printSchema(buildV1Schema()) },
    { name: 'schema /v2/graphql', lang: 'graphql', text: printSchema(buildV2Schema()) },
    { name: 'docs/examples/codegen/codegen.ts', lang: 'ts', text: await example('codegen.ts') },
    { name: 'docs/examples/codegen/placekeys.graphql', lang: 'graphql', text: await example('placekeys.graphql') },
    { name: 'docs/examples/codegen/use-placekeys.ts', lang: 'ts', text: await example('use-placekeys.ts') },
  ];
}

/** The markdown with every generated part replaced by what is printed now. */
export async function withGeneratedParts(markdown: string): Promise<string> {
  let out = markdown;
  for (const part of await generatedParts()) {
    const begin = `<!-- BEGIN generated: ${part.name} (npm run docs:schema) -->`;
    const end = `<!-- END generated: ${part.name} -->`;
    const at = out.indexOf(begin);
    const stop = out.indexOf(end);
    if (at < 0 || stop < at) throw new Error(`docs/api.md has no "${begin}" ... "${end}" block`);
    out = `${out.slice(0, at + begin.length)}\n\`\`\`${part.lang}\n${part.text.trimEnd()}\n\`\`\`\n${out.slice(stop)}`;
  }
  return out;
}

if (import.meta.main) {
  await writeFile(API_DOC, await withGeneratedParts(await readFile(API_DOC, 'utf8')));
  process.stdout.write(`rewrote the generated parts of ${path.relative(process.cwd(), API_DOC)}\n`);
}
