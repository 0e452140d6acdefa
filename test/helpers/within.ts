/**
 * Polls `check` every 5 ms until it holds or `withinMs` passed; resolves to whether it held. For
 * what reaches another instance through PostgreSQL's notifications: at once, but not synchronously.
 */
export async function within(withinMs: number, check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
