import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * JSON-lines logger. Redaction is a second line of defence: code never passes keys or query
 * values to the logger in the first place.
 */
export function createLogger(level: string, name: string, destination?: NodeJS.WritableStream): Logger {
  const options = {
    level,
    name,
    base: { pid: process.pid },
    redact: { paths: ['apikey', 'headers.apikey', 'req.headers.apikey', '*.apikey', 'key'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
