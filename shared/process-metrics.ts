import { collectDefaultMetrics, Registry } from 'prom-client';

let registry: Registry | null = null;

/**
 * prom-client's default metrics of this process (CPU, memory, heap, event-loop lag, GC, open
 * handles), in a registry of their own created once per process: they describe the process, not
 * one app, and each registration starts its own event-loop and GC observers.
 */
export function processRegistry(): Registry {
  if (!registry) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
  }
  return registry;
}

/** The text exposition of the process's metrics followed by those of `registries`. */
export async function metricsText(registries: readonly Registry[]): Promise<string> {
  const parts = await Promise.all([processRegistry(), ...registries].map((r) => r.metrics()));
  return parts.join('\n');
}

/** Content-Type of the text exposition format. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;
