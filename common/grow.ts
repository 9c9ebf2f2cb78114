/** Typed arrays that grow by doubling (the indexer's chewer and vocabulary, the searcher's card texts). */

export type Growable = Int32Array | Uint32Array | Uint16Array | Uint8Array | Float64Array;

/** The array itself when it holds `size` elements, else a copy at least twice as long. */
export function grow<T extends Growable>(array: T, size: number): T {
  if (size <= array.length) return array;
  const grown = new (array.constructor as new (length: number) => T)(Math.max(2 * array.length, size));
  grown.set(array);
  return grown;
}
