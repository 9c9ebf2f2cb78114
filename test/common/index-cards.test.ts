/**
 * Cards (common/index-cards.ts): cards read back by position as written,
 * positions aligned to 32 bytes, and damage refused naming file and offset.
 */

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import { BUCKET_TYPE, BucketObject, linearize } from '../../common/bucket.js';
import { TextBuilder } from '../../common/doc-text.js';
import { CARDS_FORMAT, CardsReader, CardsWriter, type Card } from '../../common/index-cards.js';
import { INDEX_HEADER_SIZE } from '../../common/index-file.js';
import { assertCorrupt, assertDamageRefused, reframe } from '../helpers/index-files.js';
import { scratchDir } from '../helpers/paths.js';

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

test('cards read back by position exactly as written; positions are body offsets >> 5', (t) => {
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

test('each card is a length, a linearized V3.3-deflate object and zero padding to 32 bytes', (t) => {
  const file = join(scratchDir(t), 'Cards');
  const positions = write(file, [sample, { ...sample, cardId: 1, title: undefined, text: Buffer.alloc(0) }]);
  const data = readFileSync(file);
  const length = data.readUInt32LE(INDEX_HEADER_SIZE);
  assert.equal(data[INDEX_HEADER_SIZE + 4], BUCKET_TYPE.V33_DEFLATE - BUCKET_TYPE.PLAIN);
  assert.equal(positions[0], 0);
  assert.equal(positions[1], Math.ceil((4 + length) / 32));
  assert.ok(data.subarray(INDEX_HEADER_SIZE + 4 + length, INDEX_HEADER_SIZE + positions[1]! * 32).every((b) => b === 0));
  const reader = CardsReader.open(file);
  assert.equal(reader.get(positions[1]!).title, undefined);
  reader.close();
});

test('a card asked for under the wrong id, or at a position inside another card, is refused', (t) => {
  const file = join(scratchDir(t), 'Cards');
  const positions = write(file, [sample, { ...sample, cardId: 1 }]);
  const reader = CardsReader.open(file);
  assertCorrupt(() => reader.get(positions[1]!, 7), file, INDEX_HEADER_SIZE + positions[1]! * 32, /card 1 found where card 7 should be/);
  assertCorrupt(() => reader.get(1), file);
  assertCorrupt(() => reader.get(10_000), file, undefined, /runs past the body/);
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

test('a card object missing an attribute is refused, naming the card', (t) => {
  const dir = scratchDir(t);
  const object = linearize(BUCKET_TYPE.V33, new BucketObject().add('O', '0').add('U', 'http://example.com/'));
  const writer = new CardsWriter(join(dir, 'good'));
  writer.add(sample);
  writer.finish();
  // Replace the only card with a hand-made one: same framing, new body.
  const good = readFileSync(join(dir, 'good'));
  const body = Buffer.concat([Buffer.alloc(4), object, Buffer.alloc(32 - ((4 + object.length) % 32))]);
  body.writeUInt32LE(object.length);
  const file = join(dir, 'Cards');
  writeFileSync(file, reframe(good, CARDS_FORMAT, body));
  const reader = CardsReader.open(file);
  assertCorrupt(() => reader.get(0), file, INDEX_HEADER_SIZE, /card: no ARC location \(a\)/);
  reader.close();
});
