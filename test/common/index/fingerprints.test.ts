/**
 * Fingerprints and Links (common/index/fingerprints.ts): 16-byte records
 * read back as written, lookups in a sorted Fingerprints file, damage refused.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import { INDEX_HEADER_SIZE } from '../../../common/index/file.js';
import { Fingerprints, FINGERPRINTS_FORMAT, FingerprintsWriter, LINK_TYPES, LINKS_FORMAT, LinksWriter, readLinks, type LinkRecord } from '../../../common/index/fingerprints.js';
import { MAX_CARD_ID } from '../../../common/index/refs.js';
import { fingerprint } from '../../../common/url.js';
import { assertDamageRefused } from '../../helpers/index-files.js';
import { scratchDir } from '../../helpers/paths.js';

const fp = fc.uint8Array({ minLength: 12, maxLength: 12 }).map((a) => Buffer.from(a));
const cardId = fc.integer({ min: 0, max: MAX_CARD_ID });

test('Fingerprints read back as written; a sorted file answers the lowest card id of a fingerprint', (t) => {
  const dir = scratchDir(t);
  fc.assert(
    fc.property(fc.array(fc.record({ fingerprint: fp, cardId }, { noNullPrototype: true }), { maxLength: 30 }), (records) => {
      const file = join(dir, 'Fingerprints');
      const sorted = [...records].sort((a, b) => Buffer.compare(a.fingerprint, b.fingerprint) || a.cardId - b.cardId);
      const writer = new FingerprintsWriter(file, true);
      sorted.forEach((r) => writer.add(r));
      writer.finish();
      const read = Fingerprints.open(file);
      assert.deepEqual([...read], sorted);
      for (const r of records) assert.equal(read.lookup(r.fingerprint), sorted.find((s) => s.fingerprint.equals(r.fingerprint))!.cardId);
      assert.equal(read.lookup(Buffer.alloc(12, 0xff)), records.some((r) => r.fingerprint.equals(Buffer.alloc(12, 0xff))) ? sorted.find((s) => s.fingerprint.equals(Buffer.alloc(12, 0xff)))!.cardId : undefined);
    }),
    { numRuns: 40 },
  );
});

test('a Fingerprints record is the url.ts fingerprint and a little-endian card id', (t) => {
  const file = join(scratchDir(t), 'Fingerprints');
  const writer = new FingerprintsWriter(file, false);
  writer.add({ fingerprint: fingerprint('http://example.com/'), cardId: MAX_CARD_ID });
  assert.throws(() => writer.add({ fingerprint: Buffer.alloc(12), cardId: MAX_CARD_ID + 1 }), RangeError);
  writer.finish();
  const data = readFileSync(file);
  assert.deepEqual(data.subarray(INDEX_HEADER_SIZE, INDEX_HEADER_SIZE + 12), fingerprint('http://example.com/'));
  assert.equal(data.readUInt32LE(INDEX_HEADER_SIZE + 12), MAX_CARD_ID);
  assert.throws(() => Fingerprints.open(file).lookup(Buffer.alloc(12)), /sorted/);
});

test('Links read back as written, the type in the top two bits', (t) => {
  const dir = scratchDir(t);
  fc.assert(
    fc.property(fc.array(fc.record({ target: fp, source: cardId, type: fc.constantFrom(...LINK_TYPES) }, { noNullPrototype: true }), { maxLength: 30 }), (links: LinkRecord[]) => {
      const file = join(dir, 'Links');
      const writer = new LinksWriter(file);
      links.forEach((l) => writer.add(l));
      writer.finish();
      assert.deepEqual([...readLinks(file)], links);
    }),
    { numRuns: 40 },
  );
  const file = join(dir, 'Links');
  const writer = new LinksWriter(file);
  writer.add({ target: Buffer.alloc(12), source: 5, type: 'I' });
  writer.finish();
  assert.equal(readFileSync(file).readUInt32LE(INDEX_HEADER_SIZE + 12), 0xc0000005);
});

test('damaged Fingerprints and Links files are refused: cut anywhere, bad magic, newer version, flipped bits', (t) => {
  const dir = scratchDir(t);
  const fps = new FingerprintsWriter(join(dir, 'Fingerprints'), true);
  fps.add({ fingerprint: Buffer.alloc(12, 1), cardId: 3 });
  fps.add({ fingerprint: Buffer.alloc(12, 2), cardId: 1 });
  fps.finish();
  assertDamageRefused(join(dir, 'Fingerprints'), join(dir, 'damaged'), FINGERPRINTS_FORMAT, (f) => [...Fingerprints.open(f)]);
  const links = new LinksWriter(join(dir, 'Links'));
  links.add({ target: Buffer.alloc(12, 1), source: 3, type: 'R' });
  links.finish();
  assertDamageRefused(join(dir, 'Links'), join(dir, 'damaged'), LINKS_FORMAT, (f) => [...readLinks(f)]);
});
