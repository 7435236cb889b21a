import { loadConfigOrExit } from '../shared/config-or-exit.ts';
import { createLogger } from '../shared/logger.ts';
import { startServer } from './server.ts';

/** Entry point of the web process (`npm run serve`, the Procfile's `web`). */
async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env);
  const log = createLogger(config.logLevel, 'api');
  const server = await startServer(config, log);
  if (!server.store.current) log.warn({ data_dir: config.dataDir }, 'no version is current yet: /readyz answers 503 until one is loaded');
  const stop = (signal: string) => {
    log.info({ signal }, 'draining');
    server.close().then(() => process.exit(0), (err: unknown) => {
      log.error({ err: (err as Error).message }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

await main();
