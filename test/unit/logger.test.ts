import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadConfig } from '../../shared/config.ts';
import { logDestination } from '../../shared/logger.ts';

const run = promisify(execFile);

describe('logs: readable lines for a person at a terminal, JSON lines for everything else', () => {
  it('LOG_FORMAT chooses; auto (the default) is pretty only when stdout is a terminal', () => {
    expect([loadConfig({}).logFormat, loadConfig({ LOG_FORMAT: 'json' }).logFormat, loadConfig({ LOG_FORMAT: 'pretty' }).logFormat]).to.deep.equal(['auto', 'json', 'pretty']);
    expect(() => loadConfig({ LOG_FORMAT: 'text' })).to.throw('LOG_FORMAT must be one of auto, json, pretty; got "text"');
    expect([logDestination('auto', true), logDestination('auto', false), logDestination('json', true), logDestination('pretty', false)])
      .to.deep.equal(['pretty', undefined, undefined, 'pretty']);
  });

  it('a pretty line carries the time, level, name, message and fields, keys still censored; a JSON line is JSON', async () => {
    const log = async (destination: string) => (await run(process.execPath, ['--input-type=module', '-e',
      `import { createLogger } from ${JSON.stringify(new URL('../../shared/logger.ts', import.meta.url).href)};
       createLogger('info', 'api', ${destination}).info({ label: '1__2022_03', apikey: 'pd_secret' }, 'serving version');`])).stdout;
    const pretty = (await log("'pretty'")).replace(/\u001b\[\d+m/g, '');
    expect(pretty).to.match(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(api\): serving version\n {4}label: "1__2022_03"\n {4}apikey: "\[redacted\]"\n$/);
    const json = JSON.parse(await log('undefined')) as Record<string, unknown>;
    expect({ ...json, time: 0, pid: 0 }).to.deep.equal({ level: 30, time: 0, pid: 0, name: 'api', label: '1__2022_03', apikey: '[redacted]', msg: 'serving version' });
  });
});
