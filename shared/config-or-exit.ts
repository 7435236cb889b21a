import { loadConfig, type Config } from './config.ts';
import { isAppError } from './errors.ts';

/**
 * For entry points: the validated config, or the reason it is invalid on stderr and exit code 2
 * (a process that cannot configure itself must not start half-way).
 */
export function loadConfigOrExit(env: NodeJS.ProcessEnv): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    process.stderr.write(`${isAppError(err) ? err.message : String(err)}\n`);
    process.exit(2);
  }
}
