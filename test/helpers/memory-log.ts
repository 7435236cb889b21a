import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../shared/logger.ts';

/** A real pino logger (the app's own settings) writing into memory, and its lines parsed. */
export function memoryLogger(name: string, level = 'info'): { log: Logger; text: () => string; lines: () => Record<string, unknown>[] } {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  const log = createLogger(level, name, sink);
  return { log, text: () => text, lines: () => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>) };
}
