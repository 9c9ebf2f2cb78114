/**
 * Order statistics used by every table: the median of repeated runs and the
 * nearest-rank percentile of per-query latencies. Pure functions.
 */

/** Median of a non-empty list (mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Nearest-rank percentile (p in (0, 100]) of a non-empty list: the smallest value with at least p% of values ≤ it. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError('percentile of an empty list');
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile ${p} outside (0, 100]`);
  const s = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.max(0, rank - 1)]!;
}

/** Median of each key over runs; a key missing from any run is left out. */
export function medianOfRuns(runs: ReadonlyArray<Readonly<Record<string, number | undefined>>>): Record<string, number> {
  const out: Record<string, number> = {};
  if (runs.length === 0) return out;
  for (const key of Object.keys(runs[0]!)) {
    const vals = runs.map((r) => r[key]);
    if (vals.every((v): v is number => typeof v === 'number' && Number.isFinite(v))) out[key] = median(vals);
  }
  return out;
}

/**
 * Mean top-k overlap of two engines' answers to the same queries (each a list
 * of URLs, best first): per query |A ∩ B| ÷ min(k, |A|, |B|), so a query that
 * has fewer than k hits in either is judged on the hits there are; queries
 * without a hit in one of them are left out. `queries`: how many counted.
 */
export function topOverlap(a: readonly (readonly string[])[], b: readonly (readonly string[])[], k = 10): { overlap: number; queries: number } {
  if (a.length !== b.length) throw new RangeError(`answers to ${a.length} and ${b.length} queries`);
  let sum = 0;
  let queries = 0;
  for (let q = 0; q < a.length; q++) {
    const mine = a[q]!.slice(0, k);
    const theirs = new Set(b[q]!.slice(0, k));
    const n = Math.min(mine.length, theirs.size);
    if (n === 0) continue;
    sum += mine.filter((url) => theirs.has(url)).length / n;
    queries += 1;
  }
  return { overlap: queries === 0 ? Number.NaN : sum / queries, queries };
}
