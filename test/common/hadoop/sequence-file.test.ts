import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { crc32, inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { isSherlockError } from '../../../common/errors.js';
import { checksumPath, ChecksumBuilder, encodeChecksums, verifyChecksums } from '../../../common/hadoop/crc.js';
import { encodeText } from '../../../common/hadoop/io.js';
import { BYTES, TEXT, decodeWritable } from '../../../common/hadoop/writables.js';
import '../../../common/hadoop/nutch-writables.js';
import {
  bulkCodec,
  codecFor,
  decodeRecord,
  readSequenceFile,
  recordTypes,
  SequenceFileReader,
  SequenceFileWriter,
  storedZlib,
  SYNC_INTERVAL,
  type Compression,
  type SequenceFileWriterOptions,
} from '../../../common/hadoop/sequence-file.js';
import { assertCorruptHadoop, javaClass, nutchData, stockZlib, syncIntervalOf, testFiles } from '../../helpers/nutch-data.js';
import { scratchDir } from '../../helpers/paths.js';

const files = testFiles();

function readAll(path: string) {
  const reader = SequenceFileReader.open(path);
  try {
    return { header: reader.header, records: [...reader.records()].map((r) => ({ ...r, key: Buffer.from(r.key), value: Buffer.from(r.value) })) };
  } finally {
    reader.close();
  }
}

/** Rewrites a file's records with our writer, the original's sync marker and the sync interval of its Hadoop. */
function rewrite(path: string, out: string, name: string, codec = stockZlib): Buffer {
  const { header, records } = readAll(path);
  const writer = SequenceFileWriter.create(out, {
    keyClass: header.keyClass,
    valueClass: header.valueClass,
    compression: header.compression,
    codec,
    metadata: header.metadata,
    syncMarker: header.syncMarker!,
    syncInterval: syncIntervalOf(name),
  });
  for (const record of records) writer.append(record.key, record.value);
  writer.close();
  return readFileSync(out);
}

test('the README lists all 99 SequenceFiles of the test data', () => {
  assert.equal(files.length, 99);
  assert.ok(files.every((f) => existsSync(f.path)));
});

test('every test SequenceFile reads with the header, record count and first key the README gives', () => {
  for (const f of files) {
    const reader = SequenceFileReader.open(f.path);
    try {
      const { header } = reader;
      assert.equal(reader.size, f.bytes, f.name);
      assert.equal(header.version, f.version, f.name);
      assert.equal(header.compression, f.compression, f.name);
      assert.equal(header.codecClass, f.codec === null ? null : `org.apache.hadoop.io.compress.${f.codec}`, f.name);
      assert.equal(header.keyClass, f.version < 4 ? 'UTF8' : javaClass(f.keyClass), f.name);
      if (f.version >= 4) assert.equal(header.valueClass, javaClass(f.valueClass), f.name);
      const types = recordTypes(reader);
      let count = 0;
      for (const record of reader.records()) {
        const { key } = decodeRecord(f.path, types, record);
        const text = Buffer.isBuffer(key) ? key.toString('utf8') : String(key);
        if (count === 0) assert.equal(text, f.firstKey, f.name);
        count += 1;
      }
      assert.equal(count, f.records, f.name);
    } finally {
      reader.close();
    }
  }
});

test('the BytesWritable test files hold Alice → Practice and Bob → Hope in every codec and mode', () => {
  for (const name of ['uncompressed', 'record_compressed_zlib', 'block_compressed_zlib', 'record_compressed_gzip', 'block_compressed_gzip']) {
    const path = nutchData('seqfile-generic', `${name}.sequencefile`);
    const pairs = [...readSequenceFile(path)].map((r) => [decodeWritable(BYTES, r.key, path, 0).toString(), decodeWritable(BYTES, r.value, path, 0).toString()]);
    assert.deepEqual(pairs, [
      ['Alice', 'Practice'],
      ['Bob', 'Hope'],
    ]);
  }
});

test('sync entries sit where Hadoop puts them: every 102400 bytes in Hadoop 3 files, none in small files', () => {
  const syncs = (path: string) => {
    const marker = readAll(path).header.syncMarker!;
    const bytes = readFileSync(path);
    const out: number[] = [];
    for (let at = bytes.indexOf(marker, readAll(path).header.length); at !== -1; at = bytes.indexOf(marker, at + 1)) out.push(at - 4);
    return out;
  };
  assert.deepEqual(syncs(nutchData('nutch-1.21-crawl/segments/20260130202607/crawl_parse/part-r-00000')), [102411, 204846]);
  assert.deepEqual(syncs(nutchData('nutch-1.21-crawl/crawldb/current/part-r-00000/data')), []);
  assert.deepEqual(syncs(nutchData('nutch-1.21-crawl/crawldb/current/part-r-00000/index')), [129]);
});

test('rewriting every version-6 DefaultCodec or uncompressed file with a stock zlib reproduces it byte for byte', (t) => {
  const dir = scratchDir(t);
  let identical = 0;
  for (const f of files.filter((x) => x.version === 6 && x.codec !== 'GzipCodec')) {
    const out = join(dir, 'rewrite');
    assert.ok(rewrite(f.path, out, f.name).equals(readFileSync(f.path)), `${f.name} differs`);
    identical += 1;
  }
  assert.equal(identical, 95);
});

test('with node:zlib every rewrite reads back the same records, and uncompressed ones are byte-identical', (t) => {
  const dir = scratchDir(t);
  for (const f of files) {
    const out = join(dir, 'rewrite');
    const original = readAll(f.path);
    const { header, records } = original;
    const writer = SequenceFileWriter.create(out, {
      keyClass: header.keyClass,
      valueClass: header.valueClass,
      compression: header.compression,
      codec: header.codecClass === null ? undefined : codecFor(header.codecClass),
      syncMarker: header.syncMarker ?? undefined,
      syncInterval: syncIntervalOf(f.name),
    });
    for (const record of records) writer.append(record.key, record.value);
    writer.close();
    const back = readAll(out).records;
    assert.deepEqual(
      back.map((r) => [r.key, r.value]),
      records.map((r) => [r.key, r.value]),
      f.name,
    );
    if (f.compression === 'none' && f.version === 6) assert.ok(readFileSync(out).equals(readFileSync(f.path)), f.name);
  }
});

test('every .crc file of the test data matches its file, and a rewrite with checksum writes the same one', (t) => {
  const dir = scratchDir(t);
  let checked = 0;
  for (const f of files) {
    if (verifyChecksums(f.path)) checked += 1;
  }
  assert.equal(checked, 94, 'every file but the five seqfile-generic ones has a .crc');
  const f = files.find((x) => x.name === 'nutch-1.21-crawl/segments/20260130202607/crawl_parse/part-r-00000')!;
  const out = join(dir, 'part-r-00000');
  const { header, records } = readAll(f.path);
  const writer = SequenceFileWriter.create(out, {
    keyClass: header.keyClass,
    valueClass: header.valueClass,
    compression: 'record',
    codec: stockZlib,
    syncMarker: header.syncMarker!,
    checksum: true,
  });
  for (const record of records) writer.append(record.key, record.value);
  writer.close();
  assert.ok(readFileSync(checksumPath(out)).equals(readFileSync(checksumPath(f.path))));
  assert.equal(verifyChecksums(out), true);
});

test("property: a .crc built from pieces of any size holds zlib's CRC-32 of each 512-byte chunk", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 5000 }), fc.array(fc.nat({ max: 1100 }), { maxLength: 12 }), (data, cuts) => {
      const builder = new ChecksumBuilder();
      let at = 0;
      for (const cut of cuts) {
        builder.update(data.subarray(at, at + cut));
        at = Math.min(data.length, at + cut);
      }
      builder.update(data.subarray(at));
      const chunks = Math.ceil(data.length / 512);
      const expected = Buffer.alloc(8 + 4 * chunks);
      expected.write('crc\0', 'latin1');
      expected.writeInt32BE(512, 4);
      for (let i = 0; i < chunks; i++) expected.writeUInt32BE(crc32(data.subarray(i * 512, (i + 1) * 512)), 8 + 4 * i);
      assert.ok(builder.finish().equals(expected));
    }),
    { numRuns: 300 },
  );
});

test('a stale .crc is never left behind: writing without checksums removes it; a mismatch names file and chunk', (t) => {
  const dir = scratchDir(t);
  const out = join(dir, 'part-00000');
  writeFileSync(out, Buffer.alloc(2000, 1));
  writeFileSync(checksumPath(out), encodeChecksums(Buffer.alloc(2000, 1)));
  assert.equal(verifyChecksums(out), true);
  const changed = Buffer.alloc(2000, 1);
  changed[1500] = 2;
  writeFileSync(out, changed);
  assertCorruptHadoop(() => verifyChecksums(out), out, 1024, /checksum mismatch/);
  const writer = SequenceFileWriter.create(out, { keyClass: TEXT.className, valueClass: TEXT.className });
  assert.equal(existsSync(checksumPath(out)), false);
  writer.append(encodeText('k'), encodeText('v'));
  writer.close();
  assert.equal(verifyChecksums(out), false);
});

test('an empty file of each mode is just its header', (t) => {
  const dir = scratchDir(t);
  for (const compression of ['none', 'record', 'block'] as const) {
    const out = join(dir, compression);
    const writer = SequenceFileWriter.create(out, { keyClass: TEXT.className, valueClass: TEXT.className, compression });
    writer.close();
    const { header, records } = readAll(out);
    assert.equal(records.length, 0);
    assert.equal(readFileSync(out).length, header.length);
  }
});

const record = fc.record({ key: fc.uint8Array({ maxLength: 40 }), value: fc.uint8Array({ maxLength: 300 }) });

test('property: any records round-trip in every mode, with small sync intervals and block sizes', (t) => {
  const dir = scratchDir(t);
  let n = 0;
  fc.assert(
    fc.property(
      fc.array(record, { maxLength: 60 }),
      fc.constantFrom<Compression>('none', 'record', 'block'),
      fc.integer({ min: 20, max: 3000 }),
      fc.integer({ min: 1, max: 2000 }),
      fc.array(fc.tuple(fc.string(), fc.string()), { maxLength: 3 }),
      (records, compression, syncInterval, blockSize, metadata) => {
        const out = join(dir, `p${n++}`);
        const options: SequenceFileWriterOptions = { keyClass: BYTES.className, valueClass: BYTES.className, compression, syncInterval, blockSize, metadata };
        const writer = SequenceFileWriter.create(out, options);
        for (const r of records) writer.append(r.key, r.value);
        writer.close();
        const back = readAll(out);
        assert.deepEqual(
          back.records.map((r) => [Uint8Array.from(r.key), Uint8Array.from(r.value)]),
          records.map((r) => [r.key, r.value]),
        );
        assert.deepEqual(new Set(back.header.metadata.map(([k]) => k)), new Set(metadata.map(([k]) => k)));
      },
    ),
    { numRuns: 150 },
  );
});

test('stored zlib streams inflate to their input at any size, across the 65,535-byte block limit', () => {
  for (const size of [0, 1, 255, 65_535, 65_536, 200_000]) {
    const data = Buffer.alloc(size, 7);
    const stream = storedZlib(data);
    assert.equal(stream.length, 2 + Math.max(1, Math.ceil(size / 65_535)) * 5 + size + 4, `size ${size}`);
    assert.deepEqual(inflateSync(stream), data, `size ${size}`);
  }
});

test('property: RECORD and BLOCK files written with the bulk codec (stored below the threshold, deflated above) read back', (t) => {
  const dir = scratchDir(t);
  let n = 0;
  fc.assert(
    fc.property(fc.array(record, { maxLength: 40 }), fc.constantFrom<Compression>('record', 'block'), fc.integer({ min: 0, max: 400 }), (records, compression, storeBelow) => {
      const out = join(dir, `b${n++}`);
      const writer = SequenceFileWriter.create(out, { keyClass: BYTES.className, valueClass: BYTES.className, compression, codec: bulkCodec(storeBelow) });
      for (const r of records) writer.append(r.key, r.value);
      writer.close();
      assert.equal(readAll(out).header.codecClass, 'org.apache.hadoop.io.compress.DefaultCodec');
      assert.deepEqual(
        readAll(out).records.map((r) => [Uint8Array.from(r.key), Uint8Array.from(r.value)]),
        records.map((r) => [r.key, r.value]),
      );
    }),
    { numRuns: 100 },
  );
});

/** Reads a file to its end, decoding every record. */
function readDecoding(path: string): void {
  const reader = SequenceFileReader.open(path);
  try {
    const types = recordTypes(reader);
    for (const r of reader.records()) decodeRecord(path, types, r);
  } finally {
    reader.close();
  }
}

test('a file cut at any byte is a corrupt-Hadoop error naming the file and an offset, never a crash', (t) => {
  const dir = scratchDir(t);
  const samples = [
    'nutch-1.21-crawl/crawldb/current/part-r-00000/index',
    'nutch-1.10-segments/20150309101625/crawl_fetch/part-00000/data',
    'nutch-1.15-dedup-crawldb/current/part-r-00000/data',
    'seqfile-generic/block_compressed_zlib.sequencefile',
    'legacy-nutch-0.8-crawldb/current/part-00000/index',
  ];
  for (const name of samples) {
    const bytes = readFileSync(nutchData(name));
    // Records (or blocks) start at these offsets, and so do the sync entries just before records.
    const starts = readAll(nutchData(name)).records.map((r) => r.offset);
    const boundaries = new Set(starts.flatMap((o) => (o >= 20 && bytes.readInt32BE(o - 20) === -1 ? [o, o - 20] : [o])));
    const out = join(dir, 'cut');
    for (let cut = 0; cut < bytes.length; cut++) {
      writeFileSync(out, bytes.subarray(0, cut));
      try {
        readDecoding(out);
      } catch (err) {
        assert.ok(isSherlockError(err, 'SHERLOCK_CORRUPT_HADOOP'), `${name} cut at ${cut}: ${String(err)}`);
        assert.equal(err.place.file, out);
        assert.ok(err.place.offset! >= 0 && err.place.offset! <= cut, `${name} cut at ${cut}: offset ${err.place.offset}`);
        continue;
      }
      // Only a cut exactly between records (or blocks) leaves a valid, shorter file.
      assert.ok(boundaries.has(cut), `${name} cut at ${cut} read without error`);
    }
  }
});

test('a flipped byte in a compressed value or block is an error naming the file and the offset of the damage', (t) => {
  const dir = scratchDir(t);
  const out = join(dir, 'flipped');
  const index = readFileSync(nutchData('nutch-1.21-crawl/crawldb/current/part-r-00000/index'));
  const damaged = Buffer.from(index);
  damaged[129 + 20 + 1 + 1 + 5] ^= 0xff; // inside the key-lengths unit of the only block
  writeFileSync(out, damaged);
  assertCorruptHadoop(() => readDecoding(out), out, 129 + 20 + 1, /key lengths does not decompress/);

  const fetch = readFileSync(nutchData('nutch-1.10-segments/20150309101625/crawl_fetch/part-00000/data'));
  for (let at = 129 + 8 + 25; at < fetch.length; at += 7) {
    const copy = Buffer.from(fetch);
    copy[at] ^= 0x55;
    writeFileSync(out, copy);
    assertCorruptHadoop(() => readDecoding(out), out, 129);
  }
});

test('wrong magic, a future version, an unknown codec or class and a foreign sync marker are named errors', (t) => {
  const dir = scratchDir(t);
  const out = join(dir, 'bad');
  const source = nutchData('nutch-1.15-crawl/crawldb/current/part-r-00000/data');
  const bytes = readFileSync(source);
  const variant = (edit: (b: Buffer) => Buffer): string => {
    writeFileSync(out, edit(Buffer.from(bytes)));
    return out;
  };
  assertCorruptHadoop(() => SequenceFileReader.open(variant((b) => Buffer.concat([Buffer.from('PAR1'), b.subarray(4)]))), out, 0, /no "SEQ" magic/);
  assertCorruptHadoop(() => SequenceFileReader.open(variant((b) => (b.writeUInt8(7, 3), b))), out, 3, /version 7/);
  assertCorruptHadoop(() => readDecoding(variant((b) => Buffer.from(b.toString('latin1').replace('nutch.crawl.CrawlDatum', 'nutch.crawl.CrawlDatuX'), 'latin1'))), out, 30, /unknown value class/);
  const marker = readAll(source).header.syncMarker!;
  const foreign = Buffer.concat([bytes.subarray(0, 86), Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.alloc(16, 7), bytes.subarray(86)]);
  assert.notDeepEqual(foreign.subarray(90, 106), marker);
  writeFileSync(out, foreign);
  assertCorruptHadoop(() => readDecoding(out), out, 90, /sync marker differs/);

  const gz = readFileSync(nutchData('seqfile-generic/record_compressed_gzip.sequencefile'));
  writeFileSync(out, Buffer.from(gz.toString('latin1').replace('GzipCodec', 'LzopCodec'), 'latin1'));
  assertCorruptHadoop(() => SequenceFileReader.open(out), out, 76, /unsupported compression codec/);
  copyFileSync(source, out);
  assert.doesNotThrow(() => readDecoding(out));
});

test('the Hadoop 2 sync interval is 2000 bytes and an explicit one is honoured', (t) => {
  const dir = scratchDir(t);
  const out = join(dir, 'syncs');
  const writer = SequenceFileWriter.create(out, { keyClass: TEXT.className, valueClass: TEXT.className, syncInterval: SYNC_INTERVAL.hadoop2 });
  const value = encodeText('x'.repeat(90));
  for (let i = 0; i < 100; i++) writer.append(encodeText(`k${i}`), value);
  writer.close();
  const { header } = readAll(out);
  const bytes = readFileSync(out);
  const syncs: number[] = [];
  for (let at = bytes.indexOf(header.syncMarker!, header.length); at !== -1; at = bytes.indexOf(header.syncMarker!, at + 1)) syncs.push(at - 4);
  assert.ok(syncs.length >= 4);
  for (let i = 1; i < syncs.length; i++) {
    assert.ok(syncs[i]! - (syncs[i - 1]! + 20) >= 2000);
    assert.ok(syncs[i]! - (syncs[i - 1]! + 20) < 2000 + 110);
  }
});

test('appendStored writes what append writes when given the value as the codec stores it; a BLOCK file refuses it', (t) => {
  const dir = scratchDir(t);
  const codec = bulkCodec();
  const syncMarker = Buffer.alloc(16, 7);
  const values = Array.from({ length: 3000 }, (_, i) => Buffer.from(`value ${i} `.repeat(i % 50)));
  const write = (name: string, stored: boolean): Buffer => {
    const path = join(dir, name);
    const w = SequenceFileWriter.create(path, { keyClass: TEXT.className, valueClass: BYTES.className, compression: 'record', codec, syncMarker, syncInterval: SYNC_INTERVAL.hadoop2 });
    values.forEach((v, i) => (stored ? w.appendStored(encodeText(`k${i}`), codec.compress(v)) : w.append(encodeText(`k${i}`), v)));
    w.close();
    return readFileSync(path);
  };
  assert.ok(write('stored', true).equals(write('plain', false)));
  const block = SequenceFileWriter.create(join(dir, 'block'), { keyClass: TEXT.className, valueClass: BYTES.className, compression: 'block', codec });
  assert.throws(() => block.appendStored(encodeText('k'), codec.compress(Buffer.from('v'))), /BLOCK/);
  block.close();
});
