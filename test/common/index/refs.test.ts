/**
 * Reference chains (common/index/refs.ts): the seed's bit layout byte for
 * byte, round trips at and around every limit, and every malformed chain
 * refused as SHERLOCK_CORRUPT_INDEX at the right offset.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { isSherlockError } from '../../../common/errors.js';
import {
  ChainBuilder,
  decodeChains,
  encodeChain,
  encodeChains,
  MAX_CARD_ID,
  MAX_META_POSITION,
  MAX_WORD_POSITION,
  META_LINE,
  PACKED_CODE_BITS,
  refsOf,
  WORD_EDGE,
  ChainDecoder,
  packRef,
  unpackRef,
  type Chain,
  type Ref,
} from '../../../common/index/refs.js';

const word = (type: number, position: number): Ref => ({ kind: 'word', type, position });
const meta = (type: number, weight: number, position: number): Ref => ({ kind: 'meta', type, weight, position });
const AT = { file: 'WordIndex', offset: 1000 };

/** The ref bytes of a one-chain encoding (after the 4-byte head). */
function refBytes(refs: Ref[]): number[] {
  return [...encodeChain({ cardId: 7, refs }).subarray(4)];
}

function refused(data: Buffer | number[], offset: number, message: RegExp): void {
  assert.throws(
    () => decodeChains(Buffer.from(data), AT),
    (err: unknown) => {
      assert.ok(isSherlockError(err, 'SHERLOCK_CORRUPT_INDEX'), String(err));
      assert.equal(err.place.file, 'WordIndex');
      assert.equal(err.place.offset, AT.offset + offset, err.message);
      assert.match(err.message, message);
      return true;
    },
  );
}

/** A listed chain of card 7 (the first of its list) holding exactly these ref bytes (fewer than 128). */
function rawChain(refs: number[]): Buffer {
  return Buffer.from(refs.length <= 7 ? [7 * 8 + refs.length, ...refs] : [7 * 8, refs.length, ...refs]);
}

/** The one chain alone in `data`, as a list of one. */
function alone(data: Buffer): Chain[] {
  return [new ChainDecoder(data).chainAt(0).chain];
}

test('the head of a chain alone is a little-endian u32: card id in bits 0–27, ref length in bits 28–31', () => {
  assert.deepEqual([...encodeChain({ cardId: 0x0abcdef, refs: [word(0, 0)] })], [0xef, 0xcd, 0xab, 0x10, 0x01]);
  const max = encodeChain({ cardId: MAX_CARD_ID, refs: [word(0, 0)] });
  assert.deepEqual([...max.subarray(0, 4)], [0xff, 0xff, 0xff, 0x1f]);
  assert.deepEqual(alone(max), [{ cardId: MAX_CARD_ID, refs: [word(0, 0)] }]);
  assert.throws(() => encodeChain({ cardId: MAX_CARD_ID + 1, refs: [word(0, 0)] }), RangeError);
  assert.throws(() => encodeChain({ cardId: 1, refs: [] }), RangeError);
});

test('a listed head is the varint of gap << 3 | length: the first card id itself, then gaps; 7 ref bytes in the head, 8 in a varint', () => {
  const one = [word(0, 0)];
  const seven = Array.from({ length: 7 }, (_, i) => word(0, i));
  const eight = Array.from({ length: 8 }, (_, i) => word(0, i));
  const chains: Chain[] = [
    { cardId: 5, refs: one },
    { cardId: 6, refs: seven },
    { cardId: 22, refs: eight },
    { cardId: MAX_CARD_ID, refs: one },
  ];
  const data = encodeChains(chains);
  assert.deepEqual([...data.subarray(0, 2)], [5 * 8 + 1, 0x01]);
  assert.deepEqual([...data.subarray(2, 3)], [1 * 8 + 7]);
  // gap 16: 128, a two-byte utf8_32 varint, then the length 8
  assert.deepEqual([...data.subarray(10, 13)], [0xc2, 0x80, 8]);
  assert.equal(data.length, 2 + 8 + 3 + 8 + 6 + 1, 'a gap of 2^28 − 23 takes six bytes');
  assert.deepEqual(decodeChains(data), chains);
  const max = encodeChains([{ cardId: MAX_CARD_ID, refs: one }]);
  assert.equal(max.length, 6 + 1, 'the largest first card id: a six-byte varint below 2^31');
  assert.deepEqual(decodeChains(max), [{ cardId: MAX_CARD_ID, refs: one }]);
  assert.throws(() => encodeChains([{ cardId: 3, refs: one }, { cardId: 3, refs: one }]), /card order/);
});

test('word deltas: 63 in one byte, 64 in two, 2,047 in two, 2,048 in three; the first word counts from −1', () => {
  // position 62 = delta 63 from −1
  assert.deepEqual(refBytes([word(0, 62)]), [0b0011_1111]);
  assert.deepEqual(refBytes([word(1, 62)]), [0b0111_1111]);
  assert.deepEqual(refBytes([word(0, 63)]), [0b1000_0000, 64]);
  assert.deepEqual(refBytes([word(5, 0)]), [0b1000_0101, 1], 'types 2–5 never use the one-byte form');
  assert.deepEqual(refBytes([word(3, 2046)]), [0b1011_1011, 0xff]);
  assert.deepEqual(refBytes([word(4, 2047)]), [0b1100_0100, 0x00, 0x08]);
  assert.deepEqual(refBytes([word(0, 10), word(0, 11)]), [11, 1]);
});

test('word position 32,767 is the last kept; beyond it only the edge (delta 0) can be written', () => {
  const chain: Chain = { cardId: 3, refs: [word(0, 0), word(2, MAX_WORD_POSITION), word(0, WORD_EDGE), word(3, WORD_EDGE)] };
  const bytes = encodeChain(chain);
  assert.deepEqual([...bytes.subarray(4)], [0x01, 0b1100_0010, 0xff, 0x7f, 0x00, 0b1000_0011, 0x00]);
  assert.deepEqual(alone(bytes), [chain]);
  assert.deepEqual(decodeChains(encodeChains([chain])), [chain]);
  assert.throws(() => encodeChain({ cardId: 3, refs: [word(0, WORD_EDGE + 1)] }), RangeError);
  assert.throws(() => encodeChain({ cardId: 3, refs: [word(0, 5), word(0, 5)] }), /must increase/);
  assert.throws(() => encodeChain({ cardId: 3, refs: [word(0, WORD_EDGE), word(0, 5)] }), /edge refs come last/);
  assert.throws(() => encodeChain({ cardId: 3, refs: [word(6, 5)] }), /word type 6/);
});

test('meta refs: positions 63 and 64 change the form, 2,047 is the limit, metas stand anywhere', () => {
  assert.deepEqual(refBytes([meta(5, 2, 63)]), [0b1110_0101, 0b1011_1111]);
  assert.deepEqual(refBytes([meta(5, 2, 64)]), [0b1111_0010, 0b0000_0101, 64]);
  assert.deepEqual(refBytes([meta(1, 3, MAX_META_POSITION)]), [0b1111_0011, 0b0011_1001, 0xff]);
  assert.throws(() => encodeChain({ cardId: 1, refs: [meta(1, 3, MAX_META_POSITION + 1)] }), RangeError);
  assert.throws(() => encodeChain({ cardId: 1, refs: [meta(6, 0, 0)] }), /meta type 6/);
  assert.throws(() => encodeChain({ cardId: 1, refs: [meta(0, 4, 0)] }), /meta weight 4/);
  const mixed: Chain = { cardId: 9, refs: [meta(0, 3, 4), word(0, 2), meta(2, 0, 0), word(1, 70), meta(0, 1, 1)] };
  assert.deepEqual(alone(encodeChain(mixed)), [mixed]);
  assert.deepEqual(decodeChains(encodeChains([mixed])), [mixed]);
});

test('a chain of 15 ref bytes keeps the length in its head; 16 and more put it in a varint', () => {
  const refs = (n: number) => Array.from({ length: n }, (_, i) => word(0, i));
  const fifteen = encodeChain({ cardId: 1, refs: refs(15) });
  assert.equal(fifteen[3]! >> 4, 15);
  assert.equal(fifteen.length, 4 + 15);
  const sixteen = encodeChain({ cardId: 1, refs: refs(16) });
  assert.equal(sixteen[3]! >> 4, 0);
  assert.equal(sixteen[4], 16);
  const long = encodeChain({ cardId: 1, refs: refs(200) });
  assert.deepEqual([...long.subarray(4, 6)], [0xc3, 0x88], 'libucw utf8_32 of 200');
  assert.deepEqual(alone(long), [{ cardId: 1, refs: refs(200) }]);
});

test('the decoder reads the long forms the encoder never needs (W4, M4)', () => {
  // W4: type 5 (tt=10, t=1), delta 300
  const w4 = [0b1111_1010, 0b1000_0000 | (300 >> 16), 300 & 0xff, (300 >> 8) & 0xff];
  // M4: weight 3, type 4, position 2,000
  const m4 = [0b1111_1101, 0b1000_0100 | ((2000 >> 16) << 4), 2000 & 0xff, 2000 >> 8];
  assert.deepEqual(decodeChains(rawChain([...w4, ...m4])), [{ cardId: 7, refs: [word(5, 299), meta(4, 3, 2000)] }]);
});

const refsArbitrary: fc.Arbitrary<Ref[]> = fc
  .tuple(
    fc.uniqueArray(fc.integer({ min: 0, max: MAX_WORD_POSITION }), { maxLength: 40 }),
    fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 45, maxLength: 45 }),
    fc.nat(3),
    fc.array(fc.record({ type: fc.integer({ min: 0, max: 5 }), weight: fc.nat(3), position: fc.nat(MAX_META_POSITION), at: fc.nat(50) }), { maxLength: 8 }),
  )
  .map(([positions, types, edges, metas]) => {
    const words = [...positions.sort((a, b) => a - b), ...Array<number>(edges).fill(WORD_EDGE)].map((p, i) => word(types[i]!, p));
    const refs: Ref[] = [...words];
    for (const m of metas) refs.splice(Math.min(m.at, refs.length), 0, meta(m.type, m.weight, m.position));
    return refs;
  })
  .filter((refs) => refs.length > 0);

test('any chains within the limits decode to exactly what was encoded', () => {
  fc.assert(
    fc.property(fc.uniqueArray(fc.integer({ min: 0, max: MAX_CARD_ID }), { maxLength: 6 }), fc.array(refsArbitrary, { minLength: 6, maxLength: 6 }), (ids, refs) => {
      const chains = ids.sort((a, b) => a - b).map((cardId, i) => ({ cardId, refs: refs[i]! }));
      assert.deepEqual(decodeChains(encodeChains(chains)), chains);
    }),
    { numRuns: 300 },
  );
});

test('packed chains hold the same cards and refs, in columns, and the first `max` when cut, with an estimate of all', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 0, max: MAX_CARD_ID }), { minLength: 1, maxLength: 6 }),
      fc.array(refsArbitrary, { minLength: 6, maxLength: 6 }),
      fc.nat(7),
      (ids, refs, max) => {
        const chains = ids.sort((a, b) => a - b).map((cardId, i) => ({ cardId, refs: refs[i]! }));
        const packed = new ChainDecoder(encodeChains(chains)).packed(0, undefined, max);
        const kept = chains.slice(0, max);
        assert.equal(packed.count, kept.length);
        // All of them when whole; cut, the chains read scaled by the bytes: at least those read, none when none were.
        if (max >= chains.length) assert.equal(packed.total, chains.length);
        else assert.ok(max === 0 ? packed.total === 0 : packed.total >= max, `${packed.total} of ${chains.length}`);
        assert.deepEqual([...packed.cards], kept.map((c) => c.cardId));
        kept.forEach((chain, i) => {
          const own = [...packed.refs.subarray(packed.starts[i], packed.starts[i + 1])];
          assert.deepEqual(own.map(unpackRef), chain.refs);
          assert.deepEqual(own, chain.refs.map(packRef));
        });
      },
    ),
    { numRuns: 200 },
  );
});

test('a packed ref sorts by its line: word positions, the edge, then metas', () => {
  const line = (ref: Ref) => packRef(ref) >> PACKED_CODE_BITS;
  assert.equal(line(word(5, MAX_WORD_POSITION)), MAX_WORD_POSITION);
  assert.equal(line(word(0, WORD_EDGE)), WORD_EDGE);
  assert.equal(line(meta(5, 3, MAX_META_POSITION)), META_LINE + MAX_META_POSITION);
  const refs = [meta(0, 0, 0), word(1, WORD_EDGE), word(5, 2), meta(3, 1, 1), word(0, 0)];
  assert.deepEqual([...Int32Array.from(refs, packRef).sort()].map(unpackRef), [word(0, 0), word(5, 2), word(1, WORD_EDGE), meta(0, 0, 0), meta(3, 1, 1)]);
});

test('a chain resumed from its refs (refsOf) with meta refs added encodes as the whole chain would; word refs after it are refused', () => {
  const metaRefs = fc.array(fc.record({ type: fc.integer({ min: 0, max: 5 }), weight: fc.integer({ min: 0, max: 3 }), position: fc.integer({ min: 0, max: MAX_META_POSITION }) }), { minLength: 1, maxLength: 40 });
  fc.assert(
    fc.property(fc.integer({ min: 0, max: MAX_CARD_ID }), refsArbitrary, metaRefs, (cardId, refs, added) => {
      const builder = new ChainBuilder();
      builder.resume(refsOf(encodeChain({ cardId, refs })));
      for (const m of added) builder.meta(m.type, m.weight, m.position);
      const out = Buffer.alloc(builder.chainSize);
      builder.writeTo(cardId, out, 0);
      assert.deepEqual(out, encodeChain({ cardId, refs: [...refs, ...added.map((m) => meta(m.type, m.weight, m.position))] }));
      assert.throws(() => builder.word(0, MAX_WORD_POSITION), RangeError);
    }),
    { numRuns: 300 },
  );
});

test('a chain cut at any byte is refused, naming the offset', () => {
  const data = encodeChains([
    { cardId: 1, refs: [word(0, 3), meta(0, 1, 100), word(4, 3000)] },
    { cardId: 2, refs: Array.from({ length: 20 }, (_, i) => word(1, i)) },
  ]);
  const boundary = data.length - (1 + 1 + 20);
  for (let length = 1; length < data.length; length++) {
    if (length === boundary) continue; // a whole first chain: only the entry's size field can tell
    assert.throws(
      () => decodeChains(data.subarray(0, length), AT),
      (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_INDEX') && /cut short|runs past/.test(err.message) && err.place.offset! >= AT.offset,
      `cut at ${length}`,
    );
  }
  const single = encodeChain({ cardId: 2, refs: Array.from({ length: 20 }, (_, i) => word(1, i)) });
  for (let length = 0; length < single.length; length++) {
    assert.throws(
      () => new ChainDecoder(single.subarray(0, length), AT).chainAt(0),
      (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_INDEX') && /cut short/.test(err.message),
      `alone, cut at ${length}`,
    );
  }
});

test('malformed refs are refused at the offending byte', () => {
  refused(rawChain([0x01, 0xc0, 0x00]), 2, /runs past its chain's end/);
  refused(rawChain([0xfe]), 1, /reserved ref byte 0xfe/);
  refused(rawChain([0xff, 0, 0, 0]), 1, /reserved/);
  refused(rawChain([0b1000_0110, 1]), 1, /undefined word type 6/);
  refused(rawChain([0b1110_0110, 0]), 1, /undefined meta type 6/);
  refused(rawChain([0b1100_0000, 0, 0]), 1, /delta 0 in a long form/);
  refused(rawChain([0x00, 0x01]), 2, /after the edge/);
  refused(rawChain([0b1100_1000, 0x00, 0x00]), 1, /word position 65535 beyond the limit 32767/);
  refused(rawChain([0x01, 0b1100_0000, 0x00, 0x80]), 2, /word position 32768 beyond the limit 32767/);
  refused(rawChain([0b1111_0000, 0b0100_0000, 0x00]), 1, /meta position 2048 beyond the limit 2047/);
});

test('a listed gap of 0 or past the last card id, a varint length that the head could hold, a broken varint are refused', () => {
  // card 7, then a head of gap 0 (length 1)
  refused(Buffer.from([7 * 8 + 1, 0x01, 1, 0x01]), 2, /gap 0 after card 7/);
  const last = encodeChains([{ cardId: MAX_CARD_ID, refs: [word(0, 0)] }]);
  refused(Buffer.concat([last, Buffer.from([1 * 8 + 1, 0x01])]), last.length, /card id 268435456 beyond the limit 268435455/);
  refused(Buffer.from([7 * 8, 3, 1, 2, 3]), 1, /chain length 3 in a varint/);
  refused(Buffer.from([7 * 8, 0x80]), 1, /chain length/);
  refused(Buffer.from([7 * 8, 0xc0, 0x90]), 1, /overlong|chain length/);
  refused(Buffer.from([0x80]), 0, /chain head/);
  const head = Buffer.alloc(4);
  head.writeUInt32LE(7);
  assert.throws(() => new ChainDecoder(Buffer.concat([head, Buffer.from([3, 1, 2, 3])]), AT).chainAt(0), /chain length 3 in a varint, where the 4-bit field holds it/);
});

test('markCards sets the bit of every listed chain\'s card, and of bytes that do not decode, refuses the heads the walk refuses', () => {
  fc.assert(
    fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 4095 }), { maxLength: 40 }), fc.array(refsArbitrary, { minLength: 40, maxLength: 40 }), (ids, refs) => {
      const chains = ids.sort((a, b) => a - b).map((cardId, i) => ({ cardId, refs: refs[i]! }));
      const bits = new Uint32Array(128);
      assert.equal(new ChainDecoder(encodeChains(chains)).markCards(bits), chains.length);
      const marked = [...Array(4096).keys()].filter((c) => (bits[c >>> 5]! & (1 << (c & 31))) !== 0);
      assert.deepEqual(marked, ids);
    }),
    { numRuns: 300 },
  );
  // One bitmap for every card id there can be, shared by the runs: a bit left set by one only weakens the next's check.
  const every = new Uint32Array(2 ** 23);
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      let cards: number[] | undefined;
      try {
        cards = decodeChains(Buffer.from(bytes)).map((chain) => chain.cardId);
      } catch {
        // Refs the walk refuses are skipped unread by markCards: only its heads must hold.
      }
      try {
        new ChainDecoder(Buffer.from(bytes), AT).markCards(every);
      } catch (err) {
        assert.ok(isSherlockError(err, 'SHERLOCK_CORRUPT_INDEX'), String(err));
        assert.equal(cards, undefined, 'markCards refused chains the walk reads');
        return;
      }
      if (cards !== undefined) for (const c of cards) assert.ok((every[c >>> 5]! & (1 << (c & 31))) !== 0, `card ${c} not marked`);
    }),
    { numRuns: 2000 },
  );
  assert.throws(() => new ChainDecoder(Buffer.from([7 * 8 + 1, 0x01, 1, 0x01]), AT).markCards(new Uint32Array(1)), /gap 0 after card 7/);
  assert.throws(() => new ChainDecoder(Buffer.from([7 * 8 + 1, 0x01, 2 * 8 + 3, 0x01]), AT).markCards(new Uint32Array(1)), /chain cut short/);
});

test('random bytes decode or fail with SHERLOCK_CORRUPT_INDEX, never anything else', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      try {
        decodeChains(Buffer.from(bytes));
      } catch (err) {
        assert.ok(isSherlockError(err, 'SHERLOCK_CORRUPT_INDEX'), String(err));
      }
    }),
    { numRuns: 2000 },
  );
});
