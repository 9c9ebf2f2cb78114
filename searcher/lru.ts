/**
 * The searcher's caches: maps bounded by the cost of their values (bytes,
 * or one a value) that forget the least recently used entries first.
 *
 * The chain cache also has an admission rule (TinyLFU's idea, with exact
 * counts): when a new value would push entries out, it goes in only if it
 * was asked for more than twice as often lately as each of them. A plain
 * LRU whose working set is larger than its bound keeps nothing a repeating
 * query mix needs (every entry leaves before its next use); "more often"
 * alone is not enough either, since in a repeating mix the entry asked for
 * now has been asked once more than the ones still to come, which LRU puts
 * first in line to leave. With the rule the entries asked for most stay, a
 * word asked for far more often than they are gets in, and a rare query's
 * long lists no longer flush them.
 */

/** How many times as often as each entry it would push out a new value must have been asked for. */
const ADMISSION_FACTOR = 2;

/**
 * How often each key was asked for lately: a count per key, all halved
 * (and the ones at one dropped) every `window` asks, so the past fades
 * and at most about 2 × window keys are held.
 */
export class Frequencies<K> {
  private readonly counts = new Map<K, number>();
  private asks = 0;

  constructor(private readonly window: number) {}

  touch(key: K): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    if (++this.asks < this.window) return;
    this.asks = 0;
    for (const [k, n] of this.counts) {
      if (n <= 1) this.counts.delete(k);
      else this.counts.set(k, n >> 1);
    }
  }

  of(key: K): number {
    return this.counts.get(key) ?? 0;
  }
}

/** A map that forgets its least recently used entries beyond `capacity` (counted by `cost`); with `frequencies`, a value that would push out entries asked for as often or more is not kept. */
export class Lru<K, V> {
  private readonly map = new Map<K, { value: V; cost: number }>();
  private total = 0;
  /** Entries pushed out by a newer one or a smaller bound since the map was made (clear() is not counted). */
  evictions = 0;

  constructor(
    private capacity: number,
    private readonly cost: (value: V) => number,
    private readonly frequencies?: Frequencies<K>,
  ) {}

  /** Entries kept. */
  get size(): number {
    return this.map.size;
  }

  /** The summed cost of the entries kept, at most the bound. */
  get used(): number {
    return this.total;
  }

  /** Forgets every entry. */
  clear(): void {
    this.map.clear();
    this.total = 0;
  }

  /** A new bound; the oldest entries go until the rest fit. */
  resize(capacity: number): void {
    this.capacity = capacity;
    this.evict();
  }

  get(key: K): V | undefined {
    this.frequencies?.touch(key);
    const slot = this.map.get(key);
    if (slot === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, slot);
    return slot.value;
  }

  /** Keeps `value` (or weighs it again when it is the value kept, grown); returns whether it is kept. */
  set(key: K, value: V): boolean {
    const cost = this.cost(value);
    if (cost > this.capacity || !this.admits(key, cost)) return false;
    const old = this.map.get(key);
    if (old !== undefined) {
      this.total -= old.cost;
      // The newest now: Map.set would leave it where it was.
      this.map.delete(key);
    }
    this.map.set(key, { value, cost });
    this.total += cost;
    this.evict();
    return this.map.get(key)?.value === value;
  }

  /** The value kept under `key`, neither counted as an ask nor made the newest. */
  peek(key: K): V | undefined {
    return this.map.get(key)?.value;
  }

  /**
   * Whether `key` is kept, or set() would keep a value of `cost` under it
   * now, without counting an ask: the get() that follows counts it. When
   * neither, the ask is counted here, as the get() it stands for would.
   */
  holdsOrWouldKeep(key: K, cost: number): boolean {
    if (this.map.has(key) || (cost <= this.capacity && this.admits(key, cost))) return true;
    this.ask(key);
    return false;
  }

  /** Counts an ask for `key` that reads nothing (its value was made another way), for the admission of its next set(). */
  ask(key: K): void {
    this.frequencies?.touch(key);
  }

  /** Whether `key` is asked for more than ADMISSION_FACTOR times as often as every entry it would push out. */
  private admits(key: K, cost: number): boolean {
    const { frequencies } = this;
    if (frequencies === undefined) return true;
    const wanted = frequencies.of(key);
    let room = this.capacity - this.total;
    for (const [victim, slot] of this.map) {
      if (room >= cost) break;
      if (victim !== key && wanted <= ADMISSION_FACTOR * frequencies.of(victim)) return false;
      room += slot.cost;
    }
    return true;
  }

  private evict(): void {
    for (const [oldest, slot] of this.map) {
      if (this.total <= this.capacity) break;
      this.map.delete(oldest);
      this.total -= slot.cost;
      this.evictions += 1;
    }
  }
}
