/** The distinct values of a sequence in order, repeats in a row collapsed (a, a, b, a -> a, b, a). */
export function runsOf<T>(values: readonly T[]): T[] {
  return values.filter((v, i) => i === 0 || values[i - 1] !== v);
}

/**
 * Whether the versions one client saw, in the order it saw them, follow the order in which the
 * pointer named them: the client's runs must be a subsequence of the pointer's states (it may
 * miss states, never go back to an earlier one). Greedy matching is exact for subsequences.
 */
export function followsPointer(seen: readonly string[], states: readonly string[]): boolean {
  let at = 0;
  for (const label of runsOf(seen)) {
    while (at < states.length && states[at] !== label) at++;
    if (at === states.length) return false;
    at++;
  }
  return true;
}
