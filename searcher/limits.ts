/**
 * Token buckets: a client may do `rate` things a second on average and
 * `burst` at once. Rate and burst are passed on every take, so a config
 * reload (SIGHUP) applies to buckets already made. Time is a monotonic clock
 * in milliseconds, passed in so tests can drive it.
 */

export class TokenBucket {
  // Infinity: a new bucket starts full, whatever burst the first take names.
  private tokens = Number.POSITIVE_INFINITY;
  private at = 0;

  /** Takes one token: 0 when there was one, else the milliseconds until there will be. Rate 0 means unlimited. */
  take(rate: number, burst: number, now: number): number {
    if (rate === 0) return 0;
    this.refill(rate, burst, now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) * 1000) / rate);
  }

  /** Whether the bucket is full again, so forgetting it changes nothing. */
  full(rate: number, burst: number, now: number): boolean {
    if (rate === 0) return true;
    this.refill(rate, burst, now);
    return this.tokens >= burst;
  }

  private refill(rate: number, burst: number, now: number): void {
    this.tokens = Math.min(burst, this.tokens + ((now - this.at) * rate) / 1000);
    this.at = now;
  }
}

/** One bucket per key (a client IP); full buckets are forgotten on sweep, so memory follows the active keys. */
export class KeyedBuckets {
  private readonly buckets = new Map<string, TokenBucket>();

  take(key: string, rate: number, burst: number, now: number): number {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = new TokenBucket();
      this.buckets.set(key, bucket);
    }
    return bucket.take(rate, burst, now);
  }

  sweep(rate: number, burst: number, now: number): void {
    for (const [key, bucket] of this.buckets) if (bucket.full(rate, burst, now)) this.buckets.delete(key);
  }

  get size(): number {
    return this.buckets.size;
  }
}
