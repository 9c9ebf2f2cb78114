/**
 * Which row of the URL table holds a footprint: an open-addressing hash table
 * in memory, 8 bytes a slot, that UrlDb (urldb.ts) fills from the table when it
 * opens the database and keeps up to date as it adds rows.
 *
 * Why not SQLite's index: a unique index on the 16-byte footprint takes every
 * new URL at a random place of a B-tree that outgrows the page cache, and at
 * 10 million URLs each 100,000-URL commit rewrote most of it (docs/decisions.md,
 * "Shepherd", "The footprint map"). Here a new URL costs a probe in memory and
 * an append to the table.
 *
 * A slot is two u32: a 32-bit key made from all 16 bytes of the footprint
 * (they are MD5 halves, so any 32 of their bits are evenly spread) and the
 * row id; id 0 marks an empty slot (rowids start at 1). The key chooses the
 * slot by its top bits and is kept, so the table can grow without the
 * footprints. Keys of different footprints can be equal, so the map only
 * names candidate rows: find() asks the caller to check each against the
 * table. A footprint with no candidate is certainly not in the table, which is
 * the answer a new URL needs.
 */

/** Slots in use above this share of the table make it double. */
const MAX_LOAD = 0.75;
const MIN_BITS = 10;
/** Row ids are kept in a u32. */
export const MAX_ROW_ID = 0xffff_ffff;

/** The 32-bit key of the 16-byte footprint at `at` of `bytes`. */
export function footprintKey(bytes: Uint8Array, at = 0): number {
  let key = 0;
  for (let k = at; k < at + 16; k += 4) key ^= bytes[k]! | (bytes[k + 1]! << 8) | (bytes[k + 2]! << 16) | (bytes[k + 3]! << 24);
  return key >>> 0;
}

export class FootprintMap {
  private bits: number;
  private slots: Uint32Array;
  private count = 0;

  /** A map with room for `expected` rows before it first grows. */
  constructor(expected = 0) {
    this.bits = MIN_BITS;
    while (expected > MAX_LOAD * 2 ** this.bits) this.bits++;
    this.slots = new Uint32Array(2 ** (this.bits + 1));
  }

  /** Rows filed. */
  get size(): number {
    return this.count;
  }

  /** Memory held by the slots. */
  get bytes(): number {
    return this.slots.byteLength;
  }

  /** Files row `id` under footprint `fp` (a row is filed once: when it is inserted, or when the map is built). */
  add(fp: Uint8Array, id: number): void {
    this.addKey(footprintKey(fp), id);
  }

  /** add() with the key already made. */
  addKey(key: number, id: number): void {
    if (!Number.isInteger(id) || id < 1 || id > MAX_ROW_ID) throw new RangeError(`row id ${id} is outside 1…${MAX_ROW_ID}, what the footprint map holds`);
    if (this.count + 1 > MAX_LOAD * 2 ** this.bits) this.grow();
    this.place(key, id);
    this.count++;
  }

  /**
   * The first row filed under `fp`'s key for which `matches(id)` holds (the
   * caller compares the row's footprint), or undefined: then no row of the
   * table has this footprint.
   */
  find(fp: Uint8Array, matches: (id: number) => boolean): number | undefined {
    const key = footprintKey(fp);
    const { slots } = this;
    const mask = 2 ** this.bits - 1;
    for (let s = key >>> (32 - this.bits); ; s = (s + 1) & mask) {
      const id = slots[2 * s + 1]!;
      if (id === 0) return undefined;
      if (slots[2 * s] === key && matches(id)) return id;
    }
  }

  private place(key: number, id: number): void {
    const { slots } = this;
    const mask = 2 ** this.bits - 1;
    let s = key >>> (32 - this.bits);
    while (slots[2 * s + 1] !== 0) s = (s + 1) & mask;
    slots[2 * s] = key;
    slots[2 * s + 1] = id;
  }

  private grow(): void {
    if (this.bits >= 31) throw new RangeError('the footprint map cannot grow past 2^31 slots');
    const old = this.slots;
    this.bits++;
    this.slots = new Uint32Array(2 ** (this.bits + 1));
    for (let s = 0; s < old.length; s += 2) {
      if (old[s + 1] !== 0) this.place(old[s]!, old[s + 1]!);
    }
  }
}
