import { pino, type Logger } from 'pino';
import { build as prettyStream } from 'pino-pretty';

export type { Logger };

/**
 * Where log lines go: a stream of JSON lines (stdout by default), or `'pretty'`: readable lines
 * (pino-pretty) on stdout, for a person at a terminal. Entry points choose (LOG_FORMAT, else
 * pretty only when stdout is a TTY): a log collector always gets JSON.
 */
export type LogDestination = NodeJS.WritableStream | 'pretty';

/**
 * JSON-lines logger. Redaction is a second line of defence: code never passes keys or query
 * values to the logger in the first place.
 */
export function createLogger(level: string, name: string, destination?: LogDestination): Logger {
  const options = {
    level,
    name,
    base: { pid: process.pid },
    redact: { paths: ['apikey', 'headers.apikey', 'req.headers.apikey', '*.apikey', 'key'], censor: '[redacted]' },
  };
  if (destination === 'pretty') {
    // In this thread and synchronous: a line is on the terminal before the process can exit.
    return pino(options, prettyStream({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
  }
  return destination ? pino(options, destination) : pino(options);
}

/** The destination LOG_FORMAT asks for: `auto` is pretty on a terminal (`tty`), JSON lines otherwise. */
export function logDestination(format: 'auto' | 'json' | 'pretty', tty: boolean): LogDestination | undefined {
  return format === 'pretty' || (format === 'auto' && tty) ? 'pretty' : undefined;
}
