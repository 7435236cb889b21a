import { startLoad, type Outcome, type RunningLoad } from './load-client.ts';
import { lookupBody, type Lookup } from './versioned-drops.ts';

export interface LookupLoadOptions {
  readonly baseUrl: string;
  readonly clients: number;
  /** The next look-up to send (lookupMaker). */
  readonly next: () => Lookup;
  /** Called with every outcome and the look-up it answers; return false to stop that client. */
  readonly onOutcome: (outcome: Outcome, client: number, lookup: Lookup) => boolean | void;
}

/** Closed-loop look-up load that hands each outcome back with the look-up it answers. */
export function startLookupLoad(options: LookupLoadOptions): RunningLoad {
  // A client has one request in flight at a time, so its latest look-up is the one answered.
  const pending = new Map<number, Lookup>();
  return startLoad({
    baseUrl: options.baseUrl,
    clients: options.clients,
    body: (client) => {
      const lookup = options.next();
      pending.set(client, lookup);
      return lookupBody(lookup);
    },
    onOutcome: (outcome, client) => options.onOutcome(outcome, client, pending.get(client)!),
  });
}
