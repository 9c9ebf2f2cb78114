/**
 * The footprint map (shepherd/footprint-map.ts) against a plain Map: every row
 * filed is found through its own footprint, footprints never filed have no
 * match, footprints whose 32-bit keys are equal are told apart by the caller's
 * check, and growing keeps everything.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { FootprintMap, MAX_ROW_ID, footprintKey } from '../../shepherd/footprint-map.js';

function hex(fp: Uint8Array): string {
  return Buffer.from(fp).toString('hex');
}

/** A footprint with the same key as `fp`: the same change in bytes 0–3 and 8–11 cancels out of the xor. */
function sameKey(fp: Uint8Array, change: number): Uint8Array {
  const out = Uint8Array.from(fp);
  for (const at of [0, 8]) out[at] ^= change;
  return out;
}

test('footprintKey mixes all 16 bytes: a change in any byte changes it', () => {
  const fp = Uint8Array.from({ length: 16 }, (_, i) => i * 17);
  const key = footprintKey(fp);
  for (let i = 0; i < 16; i++) {
    const other = Uint8Array.from(fp);
    other[i] ^= 1;
    assert.notEqual(footprintKey(other), key, `byte ${i}`);
  }
  assert.equal(footprintKey(sameKey(fp, 0x5a)), key);
});

test('rows are found by their footprints across growth; absent footprints and equal keys are told apart', () => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ minLength: 16, maxLength: 16 }), { minLength: 1, maxLength: 3000 }),
      fc.array(fc.uint8Array({ minLength: 16, maxLength: 16 }), { maxLength: 50 }),
      fc.integer({ min: 1, max: 255 }),
      (filed, probes, change) => {
        const map = new FootprintMap();
        const rows = new Map<string, number>();
        const byId = new Map<number, string>();
        const file = (fp: Uint8Array) => {
          if (rows.has(hex(fp))) return;
          const id = rows.size + 1;
          rows.set(hex(fp), id);
          byId.set(id, hex(fp));
          map.add(fp, id);
        };
        // Every third footprint also filed with a twin of the same key.
        filed.forEach((fp, i) => {
          file(fp);
          if (i % 3 === 0) file(sameKey(fp, change));
        });
        assert.equal(map.size, rows.size);
        const lookup = (fp: Uint8Array) => map.find(fp, (id) => byId.get(id) === hex(fp));
        for (const [key, id] of rows) assert.equal(lookup(Buffer.from(key, 'hex')), id);
        for (const fp of [...probes, ...filed.map((fp) => sameKey(fp, change ^ 0xff))]) assert.equal(lookup(fp), rows.get(hex(fp)));
      },
    ),
    { numRuns: 60 },
  );
});

test('a footprint with no row of its key is answered without asking the caller', () => {
  const map = new FootprintMap(5000);
  const bytesBefore = map.bytes;
  for (let id = 1; id <= 5000; id++) map.add(Buffer.from(`${String(id).padStart(16, '0')}`), id);
  assert.equal(map.bytes, bytesBefore, 'sized for 5,000 rows: no growth');
  let asked = 0;
  assert.equal(map.find(Buffer.from('not-filed-at-all'), () => ++asked > 0), undefined);
  assert.equal(asked, 0);
});

test('row ids outside 1…2^32 − 1 are refused, naming the id', () => {
  const map = new FootprintMap();
  const fp = new Uint8Array(16);
  assert.throws(() => map.add(fp, 0), /row id 0 is outside 1…4294967295/);
  assert.throws(() => map.add(fp, MAX_ROW_ID + 1), /row id 4294967296 is outside/);
  map.add(fp, MAX_ROW_ID);
  assert.equal(map.find(fp, () => true), MAX_ROW_ID);
});
