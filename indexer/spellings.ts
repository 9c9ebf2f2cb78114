/**
 * Spellings met → a number, looked up by a stretch of a text without making
 * a string: what turns the words cutWords (common/words.ts) cuts into word
 * numbers, for the chewing workers (chew-worker.ts) and the bench's bare
 * indexer.
 */

/** What find() gives for a spelling not met yet. */
export const ABSENT = -2;
/** Entries of Spellings' front cache, and the units of a row: the length, then the spelling. */
const FRONT_ENTRIES = 4096;
const FRONT_ROW = 16;
const FRONT_CHARS = FRONT_ROW - 1;
/** A free slot's value (the callers' values are ≥ −1: numbers, or the chewer's GARBAGE). */
const FREE = -3;

/**
 * Open addressing on the FNV-1a hash of the UTF-16 units that cutWords
 * makes as it cuts. Each slot's hash and value lie side by side in one array, so a probe
 * touches one cache line and the spelling itself only when the hashes agree.
 */
export class Spellings {
  private keys: string[] = new Array<string>(1 << 16);
  /** Per slot: hash, value (FREE when the slot is free). */
  private table = new Int32Array(2 << 16).fill(FREE);
  size = 0;
  /**
   * A direct-mapped cache in front of the table, small enough to stay in the
   * processor's cache: per entry (hash & (FRONT_ENTRIES − 1)) a row of the
   * spelling's length and UTF-16 units, and its hash and value. The table
   * is megabytes, and a lookup there misses the cache (slot, then key
   * string) for nearly every word; most words are a few frequent ones.
   */
  private readonly front = new Uint16Array(FRONT_ENTRIES * FRONT_ROW);
  private readonly frontValues = new Int32Array(2 * FRONT_ENTRIES);
  /** Hash and slot of the last find() that missed: where insert() puts it. */
  private hash = 0;
  private slot = 0;

  /** The value of text[start, end), whose words.ts spellingHash() is `h`, or ABSENT. */
  find(text: string, start: number, end: number, h: number): number {
    const length = end - start;
    const short = length <= FRONT_CHARS;
    const entry = h & (FRONT_ENTRIES - 1);
    const { front, frontValues } = this;
    if (short && frontValues[2 * entry] === h && front[entry * FRONT_ROW] === length) {
      const row = entry * FRONT_ROW + 1;
      let i = 0;
      while (i < length && front[row + i] === text.charCodeAt(start + i)) i++;
      if (i === length) return frontValues[2 * entry + 1]!;
    }
    const { table } = this;
    const mask = this.keys.length - 1;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const value = table[2 * slot + 1]!;
      if (value === FREE) {
        this.hash = h;
        this.slot = slot;
        return ABSENT;
      }
      if (table[2 * slot] === h) {
        const key = this.keys[slot]!;
        if (key.length === length) {
          let i = 0;
          while (i < length && key.charCodeAt(i) === text.charCodeAt(start + i)) i++;
          if (i === length) {
            if (short) {
              // Frequent words come back soon: the last one met takes the front entry.
              const row = entry * FRONT_ROW;
              front[row] = length;
              for (let k = 0; k < length; k++) front[row + 1 + k] = key.charCodeAt(k);
              frontValues[2 * entry] = h;
              frontValues[2 * entry + 1] = value;
            }
            return value;
          }
        }
      }
    }
  }

  /** Adds the spelling the last find() missed. */
  insert(spelling: string, value: number): void {
    this.keys[this.slot] = spelling;
    this.table[2 * this.slot] = this.hash;
    this.table[2 * this.slot + 1] = value;
    this.size += 1;
    if (2 * this.size > this.keys.length) this.rehash(2 * this.keys.length);
  }

  clear(): void {
    this.front.fill(0);
    this.keys.fill('');
    this.table.fill(FREE);
    this.size = 0;
  }

  private rehash(capacity: number): void {
    const { keys, table } = this;
    this.keys = new Array<string>(capacity);
    this.table = new Int32Array(2 * capacity).fill(FREE);
    const mask = capacity - 1;
    for (let old = 0; old < keys.length; old++) {
      if (table[2 * old + 1] === FREE) continue;
      let slot = table[2 * old]! & mask;
      while (this.table[2 * slot + 1] !== FREE) slot = (slot + 1) & mask;
      this.keys[slot] = keys[old]!;
      this.table[2 * slot] = table[2 * old]!;
      this.table[2 * slot + 1] = table[2 * old + 1]!;
    }
  }
}
