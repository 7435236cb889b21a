/**
 * Parses Prometheus's text exposition format (samples only; `# HELP`/`# TYPE` skipped) into
 * `name{label="value",...}` (labels sorted) -> value, independently of prom-client.
 */
export function parsePrometheus(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels = [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => `${l[1]}="${l[2]}"`).sort();
    const value = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]);
    samples.set(labels.length ? `${m[1]}{${labels.join(',')}}` : m[1]!, value);
  }
  return samples;
}

/** The samples whose name starts with `prefix`, as a plain object (for whole-object equality). */
export function samplesNamed(samples: Map<string, number>, prefix: string, except: (key: string) => boolean = () => false): Record<string, number> {
  return Object.fromEntries([...samples].filter(([k]) => k.startsWith(prefix) && !except(k)).sort(([a], [b]) => a.localeCompare(b)));
}

/** Scrapes `url` (a /metrics endpoint) and parses it. */
export async function scrape(url: string, headers: Record<string, string> = {}): Promise<Map<string, number>> {
  const res = await fetch(url, { headers });
  if (res.status !== 200) throw new Error(`scrape of ${url}: ${res.status} ${await res.text()}`);
  return parsePrometheus(await res.text());
}
