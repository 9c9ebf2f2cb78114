/**
 * The framing of index files (common/index/file.ts): header, body, footer;
 * a file appears whole or not at all; the reader refuses what is not exactly
 * a finished file of its format.
 */

import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { crc32 } from 'node:zlib';
import { INDEX_HEADER_SIZE, IndexFileReader, IndexFileWriter, readIndexFile, readMagic, type IndexFormat } from '../../../common/index/file.js';
import { assertCorrupt } from '../../helpers/index-files.js';
import { scratchDir } from '../../helpers/paths.js';

const FORMAT: IndexFormat = { magic: 'SHERLOCK-TEST', version: 3, fields: ['a', 'b'], what: 'Test' };

test('header, body and footer are laid out as the byte table says', (t) => {
  const file = join(scratchDir(t), 'Test');
  const writer = new IndexFileWriter(file, FORMAT);
  writer.write(Buffer.from('abc'));
  writer.align(3);
  assert.equal(writer.length, 8);
  writer.finish([7, 0xffffffff]);
  const data = readFileSync(file);
  assert.equal(data.length, INDEX_HEADER_SIZE + 8 + 8);
  assert.equal(data.toString('latin1', 0, 16), 'SHERLOCK-TEST\0\0\0');
  assert.deepEqual([3, 8, 0, 7, 0xffffffff].map((_, i) => data.readUInt32LE(16 + 4 * i)), [3, 8, 0, 7, 0xffffffff]);
  assert.equal(data.readUInt32LE(36), crc32(data.subarray(0, 36)));
  assert.ok(data.subarray(40, 64).every((b) => b === 0));
  assert.deepEqual(data.subarray(64, 72), Buffer.from('abc\0\0\0\0\0'));
  assert.equal(data.readUInt32LE(72), crc32(data.subarray(64, 72)));
  assert.equal(data.readUInt32LE(76), 0xfeedcafe);
  assert.equal(readMagic(file), 'SHERLOCK-TEST');
  assert.deepEqual(readIndexFile(file, FORMAT).fields, [7, 0xffffffff]);
});

test('a body larger than the write buffer streams through whole, in any write sizes', (t) => {
  const file = join(scratchDir(t), 'Test');
  const body = Buffer.alloc(3 * 1024 * 1024 + 17);
  for (let i = 0; i < body.length; i++) body[i] = (i * 31) & 0xff;
  const writer = new IndexFileWriter(file, FORMAT);
  for (let at = 0, step = 1; at < body.length; at += step, step = (step * 7) % 1_500_000 || 1) writer.write(body.subarray(at, Math.min(at + step, body.length)));
  writer.finish([0, 0]);
  assert.ok(readIndexFile(file, FORMAT).body.equals(body));
  const reader = IndexFileReader.open(file, FORMAT);
  assert.ok(Buffer.concat([...reader.blocks(1000)].map((b) => b.data)).equals(body));
  reader.close();
});

test('a file appears only when finished; abort leaves nothing', (t) => {
  const dir = scratchDir(t);
  const writer = new IndexFileWriter(join(dir, 'Test'), FORMAT);
  writer.write(Buffer.from('x'));
  assert.ok(!existsSync(join(dir, 'Test')));
  assert.ok(existsSync(join(dir, 'Test.tmp')));
  writer.abort();
  assert.ok(!existsSync(join(dir, 'Test.tmp')));
  assert.throws(() => new IndexFileWriter(join(dir, 'Test'), FORMAT).finish([1]), /2 header fields expected/);
});

test('bytes after the footer, another format, or a missing file are refused', (t) => {
  const dir = scratchDir(t);
  const file = join(dir, 'Test');
  const writer = new IndexFileWriter(file, FORMAT);
  writer.write(Buffer.from('abc'));
  writer.finish([0, 0]);
  assertCorrupt(() => IndexFileReader.open(file, { ...FORMAT, magic: 'SHERLOCK-OTHER' }), file, 0, /not a Test file \(bad magic\)/);
  appendFileSync(file, 'x');
  assertCorrupt(() => IndexFileReader.open(file, FORMAT), file, 75, /has bytes after its footer: 76 bytes, the header says 75/);
  assert.throws(() => IndexFileReader.open(join(dir, 'none'), FORMAT), { code: 'SHERLOCK_NOT_FOUND' });
});
