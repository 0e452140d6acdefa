/** `fn(i)` for i in [0, count), at most `limit` at a time; the results in order (the peers' prefill, bench/servers and bench/targets). */
export async function inParallel(count, limit, fn) {
  const results = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return results;
}
