/**
 * Settings given on a bench's command line as `k=v` (`--env`, `--a-env`, `--b-env`), as the
 * environment would give them to the process measured: the first `=` ends the name.
 */
export function settingsOf(pairs: readonly string[]): Record<string, string> {
  return Object.fromEntries(pairs.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}
