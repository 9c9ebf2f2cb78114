/**
 * WordIndex and StringIndex (common/index/chains.ts): entries read back at
 * the ref_pos the writer returned, keys and card ids in order, damage refused.
 */

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import { StringIndexReader, StringIndexWriter, stringKey, WORDINDEX_FORMAT, WordIndexReader, WordIndexWriter, STRINGINDEX_FORMAT } from '../../../common/index/chains.js';
import { INDEX_HEADER_SIZE } from '../../../common/index/file.js';
import { MAX_CARD_ID, MAX_WORD_POSITION, WORD_EDGE, type Chain } from '../../../common/index/refs.js';
import { assertCorrupt, assertDamageRefused, assertOldVersionRefused, reframe } from '../../helpers/index-files.js';
import { scratchDir } from '../../helpers/paths.js';

const chainsArbitrary: fc.Arbitrary<Chain[]> = fc
  .uniqueArray(
    fc.record(
      { cardId: fc.integer({ min: 0, max: MAX_CARD_ID }), positions: fc.uniqueArray(fc.nat(MAX_WORD_POSITION), { minLength: 1, maxLength: 12 }), type: fc.nat(5) },
      { noNullPrototype: true },
    ),
    { minLength: 1, maxLength: 5, selector: (c) => c.cardId },
  )
  .map((cards) =>
    cards
      .sort((a, b) => a.cardId - b.cardId)
      .map(({ cardId, positions, type }) => ({ cardId, refs: positions.sort((a, b) => a - b).map((position) => ({ kind: 'word' as const, type, position })) })),
  );

function withReader<R extends { close(): void }, T>(reader: R, body: (reader: R) => T): T {
  try {
    return body(reader);
  } finally {
    reader.close();
  }
}

test('WordIndex entries read back by word id at the ref_pos the writer gave', (t) => {
  const dir = scratchDir(t);
  fc.assert(
    fc.property(fc.uniqueArray(fc.nat({ max: 0xffffffff }), { maxLength: 10 }), fc.array(chainsArbitrary, { minLength: 10, maxLength: 10 }), (ids, chains) => {
      const file = join(dir, 'WordIndex');
      const writer = new WordIndexWriter(file);
      const words = ids.sort((a, b) => a - b).map((id, i) => ({ id, chains: chains[i]!, ...writer.add(id, chains[i]!) }));
      writer.finish();
      withReader(WordIndexReader.open(file), (reader) => {
        assert.equal(reader.count, words.length);
        for (const w of words) assert.deepEqual(reader.chains(w.id, w.refPos), w.chains);
        assert.deepEqual([...reader], words.map((w) => ({ key: w.id, refPos: w.refPos, chains: w.chains })));
      });
    }),
    { numRuns: 40 },
  );
});

test('an entry is the word id, the chains size, then the listed chains (seeds/003 "WordIndex", card ids as gaps: ours)', (t) => {
  const file = join(scratchDir(t), 'WordIndex');
  const writer = new WordIndexWriter(file);
  const first = writer.add(16, [{ cardId: 5, refs: [{ kind: 'word', type: 0, position: 0 }] }]);
  const second = writer.add(24, [{ cardId: MAX_CARD_ID, refs: [{ kind: 'word', type: 3, position: WORD_EDGE }] }]);
  writer.finish();
  assert.deepEqual(first, { refPos: 0, chainSize: 2 });
  assert.deepEqual(second, { refPos: 10, chainSize: 8 });
  const body = readFileSync(file).subarray(INDEX_HEADER_SIZE, INDEX_HEADER_SIZE + 26);
  // card 5 with one ref byte: 5 << 3 | 1; the last card id with two: utf8_32 of (2^28 − 1) << 3 | 2
  assert.deepEqual([...body], [16, 0, 0, 0, 2, 0, 0, 0, 41, 0x01, 24, 0, 0, 0, 8, 0, 0, 0, 0xfd, 0xbf, 0xbf, 0xbf, 0xbf, 0xba, 0x83, 0x00]);
});

test('the WordIndex writer refuses word ids out of order and words without chains', (t) => {
  const writer = new WordIndexWriter(join(scratchDir(t), 'WordIndex'));
  const chains: Chain[] = [{ cardId: 1, refs: [{ kind: 'meta', type: 0, weight: 0, position: 0 }] }];
  writer.add(8, chains);
  assert.throws(() => writer.add(8, chains), /word 8 after word 8/);
  assert.throws(() => writer.add(16, []), /has no chains/);
  assert.throws(() => writer.add(16, [chains[0]!, chains[0]!]), /card id 1 after 1/);
  writer.abort();
});

test('reading a word at the wrong ref_pos, or as another word, is refused', (t) => {
  const file = join(scratchDir(t), 'WordIndex');
  const writer = new WordIndexWriter(file);
  const place = writer.add(8, [{ cardId: 1, refs: [{ kind: 'word', type: 0, position: 1 }] }]);
  writer.finish();
  withReader(WordIndexReader.open(file), (reader) => {
    assertCorrupt(() => reader.chains(16, place.refPos), file, INDEX_HEADER_SIZE, /word 8 found where word 16 should be/);
    assertCorrupt(() => reader.chains(8, 10), file, INDEX_HEADER_SIZE + 10, /entry header of 8 bytes runs past the body/);
  });
});

test('StringIndex finds the chains of a string by its key', (t) => {
  const file = join(scratchDir(t), 'StringIndex');
  const strings = [stringKey('host', 'example.com'), stringKey('domain', 'example.com'), stringKey('url', 'http://example.com/')].sort(Buffer.compare);
  const writer = new StringIndexWriter(file);
  strings.forEach((key, i) => writer.add(key, [{ cardId: i, refs: [{ kind: 'meta', type: 3, weight: 0, position: 0 }] }]));
  writer.finish();
  const other = new StringIndexWriter(`${file}2`);
  assert.throws(() => other.add(Buffer.alloc(4), []), /12 bytes/);
  other.abort();
  withReader(StringIndexReader.open(file), (reader) => {
    strings.forEach((key, i) => assert.deepEqual(reader.chains(key), [{ cardId: i, refs: [{ kind: 'meta', type: 3, weight: 0, position: 0 }] }]));
    assert.deepEqual(reader.chains(stringKey('host', 'example.org')), []);
    assert.equal([...reader].length, 3);
  });
});

test('StringIndex finds every string of a file of several read blocks, entries cut by the ends of blocks among them', (t) => {
  const file = join(scratchDir(t), 'StringIndex');
  // 60,000 entries of 21 to 23 bytes: about 1.3 MiB, past the first 1 MiB block at an odd place.
  const keys = Array.from({ length: 60_000 }, (_, i) => stringKey('url', `http://h${i % 97}.example/${i}`)).sort(Buffer.compare);
  const writer = new StringIndexWriter(file);
  keys.forEach((key, i) => writer.add(key, [{ cardId: i, refs: [{ kind: 'meta', type: 3, weight: 0, position: i % 3 }] }]));
  writer.finish();
  withReader(StringIndexReader.open(file), (reader) => {
    for (let i = 0; i < keys.length; i += 1) assert.deepEqual(reader.cards(keys[i]!), Uint32Array.of(i));
    assert.deepEqual(reader.cards(stringKey('url', 'http://h1.example/none')), new Uint32Array(0));
  });
});

test('damaged WordIndex and StringIndex files are refused: cut anywhere, bad magic, newer version, flipped bits', (t) => {
  const dir = scratchDir(t);
  const words = new WordIndexWriter(join(dir, 'WordIndex'));
  words.add(8, [{ cardId: 2, refs: [{ kind: 'word', type: 1, position: 4 }] }]);
  words.add(16, [{ cardId: 1, refs: [{ kind: 'word', type: 0, position: 0 }, { kind: 'meta', type: 0, weight: 3, position: 100 }] }]);
  words.finish();
  assertDamageRefused(join(dir, 'WordIndex'), join(dir, 'damaged'), WORDINDEX_FORMAT, (f) => withReader(WordIndexReader.open(f), (r) => [...r]));
  const strings = new StringIndexWriter(join(dir, 'StringIndex'));
  strings.add(stringKey('host', 'a'), [{ cardId: 2, refs: [{ kind: 'word', type: 1, position: 4 }] }]);
  strings.finish();
  assertDamageRefused(join(dir, 'StringIndex'), join(dir, 'damaged'), STRINGINDEX_FORMAT, (f) => withReader(StringIndexReader.open(f), (r) => [...r]));
});

test('format 1 WordIndex and StringIndex files (card ids in u32 heads) are refused, naming the file', (t) => {
  const dir = scratchDir(t);
  const words = new WordIndexWriter(join(dir, 'WordIndex'));
  words.add(8, [{ cardId: 2, refs: [{ kind: 'word', type: 1, position: 4 }] }]);
  words.finish();
  assertOldVersionRefused(join(dir, 'WordIndex'), join(dir, 'old'), WORDINDEX_FORMAT, 1, (f) => WordIndexReader.open(f));
  const strings = new StringIndexWriter(join(dir, 'StringIndex'));
  strings.add(stringKey('host', 'a'), [{ cardId: 2, refs: [{ kind: 'word', type: 1, position: 4 }] }]);
  strings.finish();
  assertOldVersionRefused(join(dir, 'StringIndex'), join(dir, 'old'), STRINGINDEX_FORMAT, 1, (f) => StringIndexReader.open(f));
});

test('a damaged chain inside a well-framed entry is refused naming the file offset: a bad head varint, a gap of 0', (t) => {
  const dir = scratchDir(t);
  const file = join(dir, 'WordIndex');
  const writer = new WordIndexWriter(file);
  const place = writer.add(8, [
    { cardId: 3, refs: [{ kind: 'word', type: 0, position: 0 }] },
    { cardId: 4, refs: [{ kind: 'word', type: 0, position: 0 }] },
  ]);
  writer.finish();
  const good = readFileSync(file);
  const chains = INDEX_HEADER_SIZE + place.refPos + 8;
  const badVarint = Buffer.from(good.subarray(INDEX_HEADER_SIZE, good.length - 8));
  badVarint[chains - INDEX_HEADER_SIZE] = 0x80;
  writeFileSync(join(dir, 'bad'), reframe(good, WORDINDEX_FORMAT, badVarint));
  withReader(WordIndexReader.open(join(dir, 'bad')), (reader) => assertCorrupt(() => reader.chains(8, place.refPos), join(dir, 'bad'), chains, /chain head/));
  const gapZero = Buffer.from(good.subarray(INDEX_HEADER_SIZE, good.length - 8));
  gapZero[chains + 2 - INDEX_HEADER_SIZE] = 0 * 8 + 1;
  writeFileSync(join(dir, 'gap'), reframe(good, WORDINDEX_FORMAT, gapZero));
  withReader(WordIndexReader.open(join(dir, 'gap')), (reader) => assertCorrupt(() => reader.chains(8, place.refPos), join(dir, 'gap'), chains + 2, /gap 0 after card 3/));
});
