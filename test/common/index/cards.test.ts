/**
 * Cards (common/index/cards.ts): cards read back by position as written,
 * blocks of cards deflated together at positions aligned to 32 bytes, and
 * damage refused naming file and offset.
 */

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import test from 'node:test';
import fc from 'fast-check';
import { BUCKET_TYPE, BucketObject, linearize } from '../../../common/bucket/bucket.js';
import { TextBuilder } from '../../../common/bucket/doc-text.js';
import { CARD_BLOCK_SIZE, CARDS_FORMAT, CardBlocks, CardsReader, CardsWriter, type Card } from '../../../common/index/cards.js';
import { INDEX_HEADER_SIZE } from '../../../common/index/file.js';
import { assertCorrupt, assertDamageRefused, assertOldVersionRefused, reframe } from '../../helpers/index-files.js';
import { scratchDir } from '../../helpers/paths.js';

function text(words: string): Buffer {
  const builder = new TextBuilder(1 << 16);
  builder.append(words);
  return builder.finish();
}

const sample: Card = {
  cardId: 0,
  url: 'http://example.com/a',
  title: 'Ein Beispiel — ünïcödé',
  text: text('Hello world, this is a card.'),
  type: 'text/html',
  size: 1591,
  date: 1_392_526_941,
  arc: { file: 'sherlock-20140216050221-00000.arc.gz', offset: 171, length: 856 },
};

function write(file: string, cards: readonly Card[]): number[] {
  const writer = new CardsWriter(file);
  const positions = cards.map((card) => writer.add(card));
  writer.finish();
  return positions;
}

const cardArbitrary: fc.Arbitrary<Omit<Card, 'cardId'>> = fc.record(
  {
    url: fc.webUrl(),
    title: fc.string({ unit: 'grapheme', maxLength: 40 }),
    text: fc.string({ maxLength: 300 }).map(text),
    type: fc.constantFrom('text/html', 'text/plain', 'application/pdf'),
    size: fc.nat(),
    date: fc.nat({ max: 0xffffffff }),
    arc: fc.record({ file: fc.stringMatching(/^[a-z0-9.-]{1,30}$/), offset: fc.nat(), length: fc.nat() }, { noNullPrototype: true }),
  },
  { requiredKeys: ['url', 'text', 'type', 'size', 'date', 'arc'], noNullPrototype: true },
);

test('cards read back by position exactly as written; positions are body offsets of their blocks >> 5', (t) => {
  const dir = scratchDir(t);
  fc.assert(
    fc.property(fc.array(cardArbitrary, { maxLength: 12 }), (drafts) => {
      const cards = drafts.map((draft, cardId) => ({ cardId, ...draft }));
      const file = join(dir, 'Cards');
      const positions = write(file, cards);
      const reader = CardsReader.open(file);
      try {
        assert.equal(reader.count, cards.length);
        cards.forEach((card, i) => assert.deepEqual(reader.get(positions[i]!, card.cardId), card));
        assert.deepEqual([...reader], cards.map((card, i) => ({ position: positions[i]!, card })));
      } finally {
        reader.close();
      }
    }),
    { numRuns: 40 },
  );
});

/** The body of a Cards file of one block at position 0 holding these linearized objects (from card 0), with right lengths and CRC. */
function oneBlock(objects: Buffer[], mend: (plain: Buffer, head: Buffer) => Buffer = (plain) => deflateRawSync(plain)): Buffer {
  const table = Buffer.alloc(4 * objects.length);
  let end = 0;
  objects.forEach((object, k) => table.writeUInt32LE((end += object.length), 4 * k));
  const plain = Buffer.concat([table, ...objects]);
  const head = Buffer.alloc(20);
  head.writeUInt32LE(plain.length, 4);
  head.writeUInt32LE(objects.length, 12);
  head.writeUInt32LE(crc32(plain), 16);
  const deflated = mend(plain, head);
  head.writeUInt32LE(deflated.length, 0);
  const body = Buffer.concat([head, deflated]);
  return Buffer.concat([body, Buffer.alloc(-body.length & 31)]);
}

test('cards are deflated in blocks: a head (stored and plain length, first card, count, CRC-32), then the card table and linearized V3.3 objects; zero padding to 32 bytes', (t) => {
  const file = join(scratchDir(t), 'Cards');
  const positions = write(file, [sample, { ...sample, cardId: 1, title: undefined, text: Buffer.alloc(0) }]);
  assert.deepEqual(positions, [0, 0]);
  const body = readFileSync(file).subarray(INDEX_HEADER_SIZE, -8);
  const stored = body.readUInt32LE(0);
  assert.deepEqual([body.readUInt32LE(8), body.readUInt32LE(12)], [0, 2]);
  const plain = inflateRawSync(body.subarray(20, 20 + stored));
  assert.equal(plain.length, body.readUInt32LE(4));
  assert.equal(crc32(plain), body.readUInt32LE(16));
  const first = plain.readUInt32LE(0);
  assert.equal(8 + plain.readUInt32LE(4), plain.length);
  assert.equal(plain[8], BUCKET_TYPE.V33 - BUCKET_TYPE.PLAIN);
  assert.equal(plain[8 + first], BUCKET_TYPE.V33 - BUCKET_TYPE.PLAIN);
  assert.equal(body.length, Math.ceil((20 + stored) / 32) * 32);
  assert.ok(body.subarray(20 + stored).every((b) => b === 0));
  const reader = CardsReader.open(file);
  assert.equal(reader.get(positions[1]!, 1).title, undefined);
  reader.close();
});

test('a block closes at the first card that brings it to CARD_BLOCK_SIZE; every card reads back from its block, in any order', (t) => {
  const file = join(scratchDir(t), 'Cards');
  const cards = Array.from({ length: 150 }, (_, cardId) => ({ ...sample, cardId, text: text(`card ${cardId} `.repeat(300 + 50 * (cardId % 7))) }));
  const positions = write(file, cards);
  const blocks = [...new Set(positions)];
  assert.ok(blocks.length >= 3, `${blocks.length} blocks`);
  const body = readFileSync(file).subarray(INDEX_HEADER_SIZE, -8);
  for (const [b, position] of blocks.entries()) {
    const head = body.subarray(position * 32);
    const plain = head.readUInt32LE(4);
    const count = head.readUInt32LE(12);
    assert.equal(head.readUInt32LE(8), positions.indexOf(position));
    if (b < blocks.length - 1) {
      assert.ok(plain >= CARD_BLOCK_SIZE, `block ${b}: ${plain} plain bytes`);
      assert.ok(plain - 4 * count - CARD_BLOCK_SIZE < 10_000, 'it closed at the card that reached the size');
    }
  }
  const reader = CardsReader.open(file);
  try {
    for (const i of [149, 0, 71, 70, 148, 1, 17, 17]) assert.deepEqual(reader.get(positions[i]!, i), cards[i]);
    assert.deepEqual([...reader].map((r) => r.card), cards);
  } finally {
    reader.close();
  }
});

test('the writer refuses cards or blocks out of card order', (t) => {
  const writer = new CardsWriter(join(scratchDir(t), 'Cards'));
  assert.throws(() => writer.add({ ...sample, cardId: 1 }), /card 1 where card 0 comes/);
  writer.abort();
  const blocks: Buffer[] = [];
  const maker = new CardBlocks((block) => blocks.push(block), 5);
  maker.add({ ...sample, cardId: 5 });
  maker.close();
  const other = new CardsWriter(join(scratchDir(t), 'Cards2'));
  assert.throws(() => other.addBlocks(blocks[0]!), /a block from card 5 where card 0 comes/);
  other.abort();
});

test('a card asked for under the wrong id, or at a position inside a block, is refused', (t) => {
  const file = join(scratchDir(t), 'Cards');
  const positions = write(file, [sample, { ...sample, cardId: 1 }]);
  const reader = CardsReader.open(file);
  assertCorrupt(() => reader.get(positions[1]!, 7), file, INDEX_HEADER_SIZE + positions[1]! * 32, /card 7 is not in this block \(cards 0 to 1\)/);
  assertCorrupt(() => reader.get(1, 1), file);
  assertCorrupt(() => reader.get(10_000, 0), file, undefined, /runs past the body/);
  reader.close();
});

test('damaged Cards files are refused: cut anywhere, bad magic, newer version, flipped bits', (t) => {
  const dir = scratchDir(t);
  const file = join(dir, 'Cards');
  write(file, [{ ...sample, text: Buffer.alloc(0), title: 'x' }]);
  assertDamageRefused(file, join(dir, 'damaged'), CARDS_FORMAT, (f) => {
    const reader = CardsReader.open(f);
    try {
      return [...reader];
    } finally {
      reader.close();
    }
  });
});

test('a format 1 Cards file (cards deflated one by one) is refused, naming the file', (t) => {
  const dir = scratchDir(t);
  write(join(dir, 'Cards'), [sample]);
  assertOldVersionRefused(join(dir, 'Cards'), join(dir, 'old'), CARDS_FORMAT, 1, (f) => CardsReader.open(f));
});

test('a block cut short, with a wrong CRC-32, a bad card table or a card missing an attribute is refused, naming the file and the block', (t) => {
  const dir = scratchDir(t);
  const writer = new CardsWriter(join(dir, 'good'));
  writer.add(sample);
  writer.finish();
  const good = readFileSync(join(dir, 'good'));
  const object = linearize(BUCKET_TYPE.V33, new BucketObject().add('O', '0').add('U', 'http://example.com/'));
  const refused = (body: Buffer, offset: number, message: RegExp) => {
    const file = join(dir, 'Cards');
    writeFileSync(file, reframe(good, CARDS_FORMAT, body));
    const reader = CardsReader.open(file);
    try {
      assertCorrupt(() => reader.get(0, 0), file, offset, message);
    } finally {
      reader.close();
    }
  };
  refused(oneBlock([object]), INDEX_HEADER_SIZE, /card: no ARC location \(a\)/);
  refused(
    oneBlock([object], (plain) => deflateRawSync(plain).subarray(0, 5)),
    INDEX_HEADER_SIZE + 20,
    /card block: the deflate stream is cut short/,
  );
  refused(
    oneBlock([object], (plain, head) => {
      head.writeUInt32LE((head.readUInt32LE(16) ^ 1) >>> 0, 16);
      return deflateRawSync(plain);
    }),
    INDEX_HEADER_SIZE,
    /CRC-32 of the plain bytes mismatch/,
  );
  refused(
    oneBlock([object], (plain, head) => {
      plain.writeUInt32LE(0, 0);
      head.writeUInt32LE(crc32(plain), 16);
      return deflateRawSync(plain);
    }),
    INDEX_HEADER_SIZE,
    /card 0 ends at 0, not after the card before/,
  );
});
