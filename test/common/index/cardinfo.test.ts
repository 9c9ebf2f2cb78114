/**
 * CardInfo (common/index/cardinfo.ts): records come back as written, by card
 * id; bad values are refused when written, damage when read.
 */

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { CARD_FLAG, CARD_TYPES, CARDINFO_FORMAT, CardInfoReader, CardInfoWriter, codeLength, lengthCode, rankOfStaticWeight, staticWeight, type CardInfo } from '../../../common/index/cardinfo.js';
import { INDEX_HEADER_SIZE } from '../../../common/index/file.js';
import { LANGUAGE_COUNT, languageOf } from '../../../common/language/codes.js';
import { assertCorrupt, assertDamageRefused } from '../../helpers/index-files.js';
import { scratchDir } from '../../helpers/paths.js';

const infoArbitrary: fc.Arbitrary<CardInfo> = fc.record({
  position: fc.nat({ max: 0xffffffff }),
  site: fc.nat({ max: 0xffffffff }),
  date: fc.nat({ max: 0xffffffff }),
  weight: fc.nat(255),
  flags: fc.subarray(Object.values(CARD_FLAG)).map((flags) => flags.reduce((a, b) => a | b, 0)),
  type: fc.constantFrom(...CARD_TYPES),
  length: fc.nat(255),
  language: fc.integer({ min: 0, max: LANGUAGE_COUNT - 1 }).map(languageOf),
}, { noNullPrototype: true });

function write(file: string, infos: readonly CardInfo[]): void {
  const writer = new CardInfoWriter(file);
  infos.forEach((info, id) => assert.equal(writer.add(info), id));
  writer.finish();
}

test('CardInfo records read back by card id exactly as written', (t) => {
  const dir = scratchDir(t);
  fc.assert(
    fc.property(fc.array(infoArbitrary, { maxLength: 50 }), (infos) => {
      const file = join(dir, 'CardInfo');
      write(file, infos);
      const reader = CardInfoReader.open(file);
      assert.equal(reader.count, infos.length);
      assert.deepEqual([...reader], infos);
      infos.forEach((info, id) => assert.deepEqual(reader.get(id), info));
    }),
    { numRuns: 50 },
  );
});

test('CardInfo is 64 header bytes, 17 per card, 8 footer bytes', (t) => {
  const file = join(scratchDir(t), 'CardInfo');
  write(file, [{ position: 0x01020304, site: 0xa0b0c0d0, date: 1_700_000_000, weight: 200, flags: CARD_FLAG.dup | CARD_FLAG.accented, type: 'pdf', length: 77, language: 'cs' }]);
  const data = readFileSync(file);
  assert.equal(data.length, INDEX_HEADER_SIZE + 17 + 8);
  assert.equal(data.toString('latin1', 0, 16), 'SHERLOCK-CARDINF');
  assert.deepEqual([...data.subarray(64, 81)], [4, 3, 2, 1, 0xd0, 0xc0, 0xb0, 0xa0, 0x00, 0xf1, 0x53, 0x65, 200, 0x0a, 3, 77, 28]);
  assert.equal(data.readUInt32LE(81), crc32(data.subarray(64, 81)));
  assert.equal(data.readUInt32LE(85), 0xfeedcafe);
});

test('out-of-range values are refused when written; an unknown card id when read', (t) => {
  const file = join(scratchDir(t), 'CardInfo');
  const good: CardInfo = { position: 1, site: 2, date: 3, weight: 4, flags: 0, type: 'html', length: 5, language: 'en' };
  const writer = new CardInfoWriter(file);
  assert.throws(() => writer.add({ ...good, weight: 256 }), /weight 256/);
  assert.throws(() => writer.add({ ...good, flags: 0x80 }), /undefined card flags 0x80/);
  assert.throws(() => writer.add({ ...good, position: 2 ** 32 }), /not a u32/);
  assert.throws(() => writer.add({ ...good, type: 'video' as CardInfo['type'] }), /unknown card type/);
  assert.throws(() => writer.add({ ...good, length: 256 }), /length code 256/);
  assert.throws(() => writer.add({ ...good, length: 1.5 }), /length code 1.5/);
  writer.add(good);
  writer.finish();
  assert.throws(() => CardInfoReader.open(file).get(1), RangeError);
});

test('damaged CardInfo files are refused: cut anywhere, bad magic, newer version, flipped bits, bad fields', (t) => {
  const dir = scratchDir(t);
  const file = join(dir, 'CardInfo');
  write(file, [
    { position: 0, site: 1, date: 2, weight: 3, flags: CARD_FLAG.merged, type: 'text', length: 0, language: 'und' },
    { position: 9, site: 8, date: 7, weight: 6, flags: 0, type: 'other', length: 255, language: 'de' },
  ]);
  assertDamageRefused(file, join(dir, 'damaged'), CARDINFO_FORMAT, (f) => [...CardInfoReader.open(f)]);

  // A well-framed file whose record holds an undefined type is refused at that byte.
  const data = readFileSync(file);
  data[64 + 17 + 14] = 99;
  data.writeUInt32LE(crc32(data.subarray(64, 98)), 98);
  const bad = join(dir, 'bad-type');
  writeFileSync(bad, data);
  assertCorrupt(() => CardInfoReader.open(bad).get(1), bad, 64 + 17 + 14, /card 1: undefined type 99/);
});

test('length codes: log scale, within 2% of the words below the cap, monotone, capped at 255', () => {
  assert.equal(lengthCode(0), 0);
  assert.equal(codeLength(0), 0);
  let last = 0;
  for (const words of [1, 2, 3, 10, 57, 100, 999, 1000, 5000, 40_000]) {
    const code = lengthCode(words);
    assert.ok(code >= last, `code of ${words} not below the previous`);
    last = code;
    assert.ok(Math.abs(codeLength(code) - words) <= 0.022 * words + 0.5, `${words} words → ${code} → ${codeLength(code)}`);
  }
  assert.equal(lengthCode(1e9), 255);
  assert.ok(codeLength(255) > 60_000);
});

test('static weights: 28 for a card nobody links to, about 80 for an average one, and back to the rank through a Java float', () => {
  assert.equal(staticWeight(0.15), 28);
  assert.equal(staticWeight(1), 82);
  assert.equal(staticWeight(0), 0);
  assert.equal(staticWeight(1e9), 255);
  for (let weight = 0; weight <= 255; weight++) {
    assert.equal(staticWeight(rankOfStaticWeight(weight)), weight);
    assert.equal(staticWeight(Math.fround(rankOfStaticWeight(weight))), weight, 'the rank as a Nutch score');
  }
});

test('a version 1 or 2 CardInfo (no lengths, no languages) is refused', (t) => {
  const dir = scratchDir(t);
  const file = join(dir, 'CardInfo');
  write(file, [{ position: 0, site: 1, date: 2, weight: 3, flags: 0, type: 'html', length: 40, language: 'en' }]);
  for (const version of [1, 2]) {
    const data = readFileSync(file);
    // The header: magic, then version, body length (two u32), card count, and their CRC (common/file-header.ts).
    assert.equal(data.readUInt32LE(16), 3);
    data.writeUInt32LE(version, 16);
    data.writeUInt32LE(crc32(data.subarray(0, 32)), 32);
    const old = join(dir, `old-${version}`);
    writeFileSync(old, data);
    assert.throws(() => CardInfoReader.open(old), new RegExp(`unsupported format version ${version}`));
  }
});
