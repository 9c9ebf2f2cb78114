/**
 * The Manifest (common/index/manifest.ts): written over the files of a
 * version, read back, and used to refuse a version whose files changed.
 */

import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { crc32 } from 'node:zlib';
import { CardInfoWriter } from '../../../common/index/cardinfo.js';
import { INDEX_LAYOUT, MANIFEST_FORMAT, MANIFEST_NAME, readManifest, verifyIndexDir, writeManifest } from '../../../common/index/manifest.js';
import { assertCorrupt, assertDamageRefused, reframe } from '../../helpers/index-files.js';
import { scratchDir } from '../../helpers/paths.js';

function version(dir: string) {
  const cardInfo = new CardInfoWriter(join(dir, 'CardInfo'));
  cardInfo.add({ position: 0, site: 1, date: 2, weight: 3, flags: 0, type: 'html', length: 4, language: 'en' });
  cardInfo.finish();
  writeFileSync(join(dir, 'Other'), 'some bytes');
  return writeManifest(dir, { version: 'v1', created: 1_700_000_000, counts: { cards: 1, words: 0 }, files: ['CardInfo', 'Other'] });
}

test('the Manifest lists every file with its size and CRC-32, and reads back as written', (t) => {
  const dir = scratchDir(t);
  const written = version(dir);
  assert.deepEqual(written.files[1], { name: 'Other', size: 10, crc32: crc32('some bytes').toString(16).padStart(8, '0') });
  assert.equal(written.format, INDEX_LAYOUT);
  assert.deepEqual(readManifest(join(dir, MANIFEST_NAME)), written);
  assert.deepEqual(verifyIndexDir(dir), written);
});

test('a version whose file changed size or content is refused, naming that file', (t) => {
  const dir = scratchDir(t);
  version(dir);
  writeFileSync(join(dir, 'Other'), 'some Bytes');
  assertCorrupt(() => verifyIndexDir(dir), join(dir, 'Other'), 0, /CRC-32 [0-9a-f]{8}, the manifest says/);
  appendFileSync(join(dir, 'Other'), '!');
  assertCorrupt(() => verifyIndexDir(dir), join(dir, 'Other'), 10, /11 bytes, the manifest says 10/);
});

test('a manifest of a newer layout, or not matching its schema, is refused', (t) => {
  const dir = scratchDir(t);
  const good = version(dir);
  const data = readFileSync(join(dir, MANIFEST_NAME));
  const file = join(dir, 'bad');
  writeFileSync(file, reframe(data, MANIFEST_FORMAT, Buffer.from(JSON.stringify({ ...good, format: INDEX_LAYOUT + 1 }))));
  assertCorrupt(() => readManifest(file), file, 64, /index layout 2 is newer/);
  writeFileSync(file, reframe(data, MANIFEST_FORMAT, Buffer.from(JSON.stringify({ ...good, files: [{ name: '../x', size: 1, crc32: '00000000' }] }))));
  assertCorrupt(() => readManifest(file), file, 64, /manifest files\.0\.name/);
  writeFileSync(file, reframe(data, MANIFEST_FORMAT, Buffer.from('{')));
  assertCorrupt(() => readManifest(file), file, 64, /not JSON/);
});

test('damaged manifests are refused: cut anywhere, bad magic, newer version, flipped bits', (t) => {
  const dir = scratchDir(t);
  version(dir);
  assertDamageRefused(join(dir, MANIFEST_NAME), join(dir, 'damaged'), MANIFEST_FORMAT, readManifest);
});
