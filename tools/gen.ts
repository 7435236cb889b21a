import { Command } from 'commander';
import { generateDrop } from './generate-drop.ts';

/** `npm run gen -- --pois N --weeks W --out DIR [--months M] [--geometry] [--format csv.gz|parquet] [--seed S]` */
const cli = new Command('gen').description('Write a synthetic drop (core + weekly patterns, optionally monthly patterns and geometry; every column) in the delivered layout.')
  .requiredOption('--out <dir>', 'folder to write')
  .option('--pois <n>', 'POIs', '1000')
  .option('--weeks <n>', 'weeks of patterns', '4')
  .option('--format <f>', 'csv.gz or parquet', 'csv.gz')
  .option('--seed <n>', 'seed', '1')
  .option('--first-week <YYYY-MM-DD>', 'Monday of the first week', '2022-01-03')
  .option('--months <n>', 'months of monthly patterns', '0')
  .option('--first-month <YYYY-MM>', 'the first month', '2022-01')
  .option('--geometry', 'also write a geometry file (polygon_wkt, polygon_class, ...)', false)
  .action(async (o: { out: string; pois: string; weeks: string; format: string; seed: string; firstWeek: string; months: string; firstMonth: string; geometry: boolean }) => {
    if (o.format !== 'csv.gz' && o.format !== 'parquet') throw new Error('--format must be csv.gz or parquet');
    const started = Date.now();
    if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(o.firstMonth)) throw new Error('--first-month must be YYYY-MM');
    const files = await generateDrop({
      out: o.out, pois: Number(o.pois), weeks: Number(o.weeks), format: o.format, seed: Number(o.seed), firstWeek: o.firstWeek,
      months: Number(o.months), firstMonth: o.firstMonth, geometry: o.geometry,
    });
    for (const f of files) console.log(f);
    console.error(`generated ${o.pois} POIs x ${o.weeks} weeks, ${o.months} months${o.geometry ? ', geometry' : ''} in ${((Date.now() - started) / 1000).toFixed(1)} s, peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
  });
await cli.parseAsync(process.argv);
