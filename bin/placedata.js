#!/usr/bin/env node
// The `placedata` command. Node 24 runs the TypeScript source directly; `npx placedata` puts the
// project's pinned Node 24 (node_modules/.bin/node) first on PATH.
import { main } from '../ingest/cli/cli.ts';

process.exitCode = await main(process.argv, process.env);
