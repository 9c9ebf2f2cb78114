import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import { encodeText, hashPartition, textPayload } from '../../../common/hadoop/io.js';
import { LONG, TEXT, decodeWritable } from '../../../common/hadoop/writables.js';
import { MapFileReader, MapFileWriter } from '../../../common/hadoop/map-file.js';
import '../../../common/hadoop/nutch-writables.js';
import { SequenceFileReader, SequenceFileWriter, type Compression } from '../../../common/hadoop/sequence-file.js';
import { assertCorruptHadoop, nutchData, stockZlib, syncIntervalOf, testFiles } from '../../helpers/nutch-data.js';
import { scratchDir } from '../../helpers/paths.js';

const mapFiles = testFiles()
  .filter((f) => f.name.endsWith('/index'))
  .map((f) => ({ name: dirname(f.name), dir: dirname(f.path) }));

function indexOffsets(dir: string): number[] {
  const reader = SequenceFileReader.open(join(dir, 'index'));
  try {
    return [...reader.records()].map((r) => Number(decodeWritable(LONG, r.value, reader.file, 0, false)));
  } finally {
    reader.close();
  }
}

test('the test data holds 41 MapFiles, and every key of every one is found by lookup', () => {
  assert.equal(mapFiles.length, 41);
  let keys = 0;
  for (const { name, dir } of mapFiles) {
    const map = MapFileReader.open(dir);
    try {
      for (const record of map.records()) {
        const found = map.get(record.key);
        assert.ok(found !== undefined, `${name}: ${record.key.toString()}`);
        assert.ok(found.value.equals(record.value), name);
        keys += 1;
        // Neighbours that are not keys are not found.
        assert.equal(map.get(Buffer.concat([record.key, Buffer.from('~')])), undefined);
      }
      assert.equal(map.get(encodeText('')), undefined);
    } finally {
      map.close();
    }
  }
  assert.ok(keys > 2800, `${keys} keys`);
});

test('crawldb indexes point at records 0, 128, 256, 384 and 512, as the README says', () => {
  const dir = nutchData('nutch-1.21-crawl/crawldb/current/part-r-00000');
  const reader = SequenceFileReader.open(join(dir, 'data'));
  const offsets = [...reader.records()].map((r) => r.offset);
  reader.close();
  assert.deepEqual(indexOffsets(dir), [0, 128, 256, 384, 512].map((i) => offsets[i]));
  assert.deepEqual(indexOffsets(nutchData('legacy-nutch-0.8-crawldb/current/part-00000')).length, 4);
});

test('rewriting every MapFile with its sync markers and a stock zlib reproduces data and index byte for byte', (t) => {
  const scratch = scratchDir(t);
  for (const { name, dir } of mapFiles.filter((m) => !m.name.startsWith('legacy'))) {
    const map = MapFileReader.open(dir);
    const index = SequenceFileReader.open(join(dir, 'index'));
    const out = join(scratch, name);
    const writer = MapFileWriter.create(out, {
      keyClass: map.data.header.keyClass,
      valueClass: map.data.header.valueClass,
      compression: map.data.header.compression,
      codec: stockZlib,
      syncInterval: syncIntervalOf(name),
      dataSyncMarker: map.data.header.syncMarker!,
      indexSyncMarker: index.header.syncMarker!,
      checksum: true,
    });
    index.close();
    for (const record of map.records()) writer.append(record.key, record.value);
    writer.close();
    map.close();
    for (const file of ['data', 'index', '.data.crc', '.index.crc']) {
      assert.ok(readFileSync(join(out, file)).equals(readFileSync(join(dir, file))), `${name}/${file}`);
    }
  }
});

test('the two-part Nutch 1.21 MapFiles put every key in the part its Text hash names', () => {
  const dirs = ['crawldb/current', 'linkdb/current', 'segments/20260130202607/crawl_fetch', 'segments/20260130202607/content', 'segments/20260130202607/parse_data'];
  let keys = 0;
  for (const sub of dirs) {
    const base = nutchData('nutch-1.21-crawl', sub);
    const parts = readdirSync(base).filter((n) => n.startsWith('part-')).sort();
    assert.equal(parts.length, 2);
    parts.forEach((part, i) => {
      const map = MapFileReader.open(join(base, part));
      for (const record of map.records()) {
        assert.equal(hashPartition(textPayload(record.key), parts.length), i, `${sub}/${part}`);
        keys += 1;
      }
      map.close();
    });
  }
  assert.ok(keys > 1600);
});

test('the writer refuses a key out of order or repeated, naming the data file and offset', (t) => {
  const dir = join(scratchDir(t), 'map');
  const writer = MapFileWriter.create(dir, { keyClass: TEXT.className, valueClass: TEXT.className });
  writer.append(encodeText('http://b/'), encodeText('1'));
  assertCorruptHadoop(() => writer.append(encodeText('http://a/'), encodeText('2')), join(dir, 'data'), 98, /key out of order/);
  assertCorruptHadoop(() => writer.append(encodeText('http://b/'), encodeText('2')), join(dir, 'data'), 98, /key out of order/);
  // Text order is unsigned bytes: U+FF61 (EF BD A1) sorts before U+1F600 (F0 9F 98 80), unlike UTF-16 order.
  writer.append(encodeText('http://b/\uff61'), encodeText('3'));
  writer.append(encodeText('http://b/\u{1f600}'), encodeText('4'));
  writer.close();
  const map = MapFileReader.open(dir);
  assert.deepEqual(
    [...map.records()].map((r) => decodeWritable(TEXT, r.key, '', 0)),
    ['http://b/', 'http://b/\uff61', 'http://b/\u{1f600}'],
  );
  map.close();
});

test('reading data whose keys are out of order is an error at the offending record', (t) => {
  const dir = scratchDir(t);
  const data = SequenceFileWriter.create(join(dir, 'data'), { keyClass: TEXT.className, valueClass: TEXT.className });
  const index = SequenceFileWriter.create(join(dir, 'index'), { keyClass: TEXT.className, valueClass: LONG.className, compression: 'block' });
  for (const key of ['a', 'c', 'b']) data.append(encodeText(key), encodeText('v'));
  data.close();
  index.close();
  const map = MapFileReader.open(dir);
  assertCorruptHadoop(() => [...map.records()], join(dir, 'data'), 78 + 2 * 12, /key out of order/);
  map.close();
});

test('an index pointing outside data or with keys out of order is refused when opened', (t) => {
  const dir = scratchDir(t);
  const data = SequenceFileWriter.create(join(dir, 'data'), { keyClass: TEXT.className, valueClass: TEXT.className });
  data.append(encodeText('a'), encodeText('v'));
  data.close();
  const offset = (n: number): Buffer => {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(BigInt(n));
    return b;
  };
  const writeIndex = (entries: Array<[string, number]>): void => {
    const index = SequenceFileWriter.create(join(dir, 'index'), { keyClass: TEXT.className, valueClass: LONG.className, compression: 'block' });
    for (const [key, at] of entries) index.append(encodeText(key), offset(at));
    index.close();
  };
  writeIndex([['a', 5000]]);
  assertCorruptHadoop(() => MapFileReader.open(dir), join(dir, 'index'), undefined, /outside/);
  writeIndex([
    ['b', 78],
    ['a', 90],
  ]);
  assertCorruptHadoop(() => MapFileReader.open(dir), join(dir, 'index'), undefined, /out of order/);
  writeFileSync(join(dir, 'index'), 'not a sequence file');
  assertCorruptHadoop(() => MapFileReader.open(dir), join(dir, 'index'), 0, /magic/);
});

test('property: MapFiles of any sorted keys, in every mode, find every key and no other', (t) => {
  const scratch = scratchDir(t);
  let n = 0;
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.string({ maxLength: 12 }), { maxLength: 400 }),
      fc.constantFrom<Compression>('none', 'record', 'block'),
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 50, max: 5000 }),
      (keys, compression, indexInterval, blockSize) => {
        const encoded = [...new Set(keys.map((k) => encodeText(k).toString('hex')))].map((h) => Buffer.from(h, 'hex')).sort((a, b) => Buffer.compare(textPayload(a), textPayload(b)));
        const dir = join(scratch, `m${n++}`);
        const writer = MapFileWriter.create(dir, { keyClass: TEXT.className, valueClass: TEXT.className, compression, indexInterval, blockSize, syncInterval: 200 });
        encoded.forEach((key, i) => writer.append(key, encodeText(String(i))));
        writer.close();
        const map = MapFileReader.open(dir);
        try {
          encoded.forEach((key, i) => assert.equal(decodeWritable(TEXT, map.get(key)!.value, '', 0), String(i)));
          assert.equal(map.get(encodeText('\u{10ffff}\u{10ffff}')), undefined);
          assert.equal([...map.records()].length, encoded.length);
        } finally {
          map.close();
        }
      },
    ),
    { numRuns: 60 },
  );
});
