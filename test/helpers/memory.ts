/**
 * Peak memory of this process while something runs, for tests that bound the
 * cost of hostile input: the resident set is sampled every few milliseconds
 * (maxRSS of getrusage is a high-water mark over the whole life of the
 * process, so a test that set up a big fixture first could not see its own
 * growth in it).
 */

export async function peakRssGrowth<T>(run: () => Promise<T>, everyMs = 20): Promise<{ result: T; growth: number }> {
  const start = process.memoryUsage.rss();
  let peak = start;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, everyMs);
  try {
    const result = await run();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, growth: peak - start };
  } finally {
    clearInterval(timer);
  }
}

export const MiB = 1024 * 1024;
