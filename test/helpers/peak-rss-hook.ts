import { writeFileSync } from 'node:fs';

// Loaded with `node --import` into a child process (test/helpers/cli-peak-rss.ts): on exit,
// writes the process's peak resident set size (getrusage's ru_maxrss, in KiB) to PEAK_RSS_FILE.
const out = process.env['PEAK_RSS_FILE'];
if (out) process.on('exit', () => writeFileSync(out, String(process.resourceUsage().maxRSS)));
