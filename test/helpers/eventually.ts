/**
 * Retries `check` until it stops throwing, for effects that land on a poll interval (pointer and
 * key-file reloads). Fails with the last assertion if the bound passes: a bound, not a timing claim.
 */
export async function eventually<T>(check: () => Promise<T>, boundMs = 5000, stepMs = 50): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, stepMs));
    }
  }
}
