import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { openArchive, sniffArchive } from '../../../common/archive/archive-read.js';
import { ArcReader } from '../../../common/archive/arc-read.js';
import { WarcReader, warcDateDigits, warcField, warcTargetUri, type WarcRecord } from '../../../common/archive/warc-read.js';
import { isSherlockError, type SherlockError } from '../../../common/errors.js';
import { scratchDir, testdata } from '../../helpers/paths.js';

const exampleWarc = testdata('arc', 'pywb', 'example.warc.gz');
const wgetWarc = testdata('arc', 'wget-warc', 'wget-sample.warc.gz');

function readAll(path: string, problems?: SherlockError[]): WarcRecord[] {
  const reader = WarcReader.open(path, problems === undefined ? {} : { onProblem: (p) => problems.push(p) });
  try {
    return [...reader.records()];
  } finally {
    reader.close();
  }
}

/** The first error strict reading throws. */
function strictError(path: string): SherlockError {
  try {
    readAll(path);
  } catch (err) {
    assert.ok(isSherlockError(err), String(err));
    return err;
  }
  assert.fail(`${path} read without error`);
}

/** The members of a record-per-member .warc.gz, as buffers (our reader gives their extents). */
function members(path: string): Buffer[] {
  const bytes = readFileSync(path);
  return readAll(path).map((r) => bytes.subarray(r.offset, r.offset + r.length));
}

test('pywb’s example.warc.gz: six records at the member offsets and sizes pywb’s index gives, fields and block as stored', () => {
  const records = readAll(exampleWarc);
  assert.deepEqual(records.map((r) => [r.offset, r.length, warcField(r, 'warc-type')]), [
    [0, 333, 'warcinfo'],
    [333, 1043, 'response'],
    [1376, 488, 'request'],
    [1864, 553, 'revisit'],
    [2417, 490, 'request'],
    [2907, 577, 'response'],
  ]);
  const revisit = records[3]!;
  assert.equal(revisit.version, 'WARC/1.0');
  assert.equal(warcField(revisit, 'WARC-Refers-To-Date'), '2014-01-03T03:03:21Z');
  assert.equal(warcTargetUri(revisit), 'http://example.com?example=1');
  assert.equal(revisit.block.length, Number(warcField(revisit, 'Content-Length')));
  assert.match(revisit.head, /^WARC\/1\.0\r\n[^]*\r\n\r\n$/);
  assert.match(records[1]!.block.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n/);
});

test('Wget’s WARC: <> around WARC-Target-URI are not part of the URI; dates read as 14 digits', () => {
  const records = readAll(wgetWarc);
  assert.equal(records.length, 9);
  assert.equal(warcField(records[2]!, 'WARC-Target-URI'), '<http://127.0.0.1:18931/>');
  assert.equal(warcTargetUri(records[2]!), 'http://127.0.0.1:18931/');
  assert.equal(warcDateDigits(warcField(records[2]!, 'WARC-Date')!), '20261122090818');
  assert.equal(warcDateDigits('2014-01-03T03:03:21.123456Z'), '20140103030321');
  assert.equal(warcDateDigits('2014-01-03'), undefined);
});

test('a plain WARC: offsets of version lines, lengths without the closing CRLF CRLF (pywb: 460 + 1987 + 4)', (t) => {
  const dir = scratchDir(t);
  const plain = join(dir, 'example.warc');
  writeFileSync(plain, gunzipSync(readFileSync(exampleWarc)));
  const records = readAll(plain);
  assert.equal(records.length, 6);
  const response = records[1]!;
  assert.deepEqual([response.offset, response.length], [460, 1987]);
  assert.equal(records[2]!.offset, 460 + 1987 + 4);
  assert.deepEqual(
    records.map((r) => r.block),
    readAll(exampleWarc).map((r) => r.block),
  );
  const reader = WarcReader.open(plain);
  t.after(() => reader.close());
  assert.equal(warcField(reader.recordAt(460), 'WARC-Type'), 'response');
  assert.throws(() => reader.recordAt(461), (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_WARC') && err.place.offset === 461);
});

test('the format is told by content: every testdata ARC is ARC and every WARC is WARC, whatever the name', (t) => {
  let arcs = 0;
  for (const dir of ['pywb', 'warcio', 'ukwa', 'webarchive-commons', 'cdx-writer', 'wget-warc']) {
    for (const name of readdirSync(testdata('arc', dir))) {
      const format = /\.warc(\.gz)?$/.test(name) ? 'warc' : /\.arc(\.gz)?$/.test(name) ? 'arc' : undefined;
      if (format === undefined) continue;
      assert.equal(sniffArchive(testdata('arc', dir, name)), format, name);
      arcs += format === 'arc' ? 1 : 0;
    }
  }
  assert.equal(arcs, 31);
  const renamed = join(scratchDir(t), 'misnamed.arc.gz');
  writeFileSync(renamed, readFileSync(exampleWarc));
  const reader = openArchive(renamed);
  t.after(() => reader.close());
  assert.ok(reader instanceof WarcReader);
  assert.ok(openArchive(testdata('arc', 'pywb', 'example.arc')) instanceof ArcReader);
});

test('damaged .warc.gz: each damage names the file and the record’s offset; lenient reading reports it and goes on', (t) => {
  const dir = scratchDir(t);
  const parts = members(exampleWarc);
  const at = (i: number): number => parts.slice(0, i).reduce((n, p) => n + p.length, 0);
  const cases: Array<{ name: string; bytes: Buffer; offset: number; code: string; message: RegExp; records: number }> = [
    { name: 'cut.warc.gz', bytes: Buffer.concat([...parts.slice(0, 3), parts[3]!.subarray(0, 100)]), offset: at(3), code: 'SHERLOCK_CORRUPT_GZIP', message: /truncated gzip member/, records: 3 },
    {
      name: 'flipped.warc.gz',
      bytes: Buffer.concat([parts[0]!, Buffer.from(parts[1]!).fill(0x55, 40, 60), ...parts.slice(2)]),
      offset: at(1),
      code: 'SHERLOCK_CORRUPT_GZIP',
      message: /inflate|CRC/,
      records: 5,
    },
    {
      name: 'no-length.warc.gz',
      bytes: Buffer.concat([parts[0]!, gzipSync('WARC/1.0\r\nWARC-Type: resource\r\n\r\nabc\r\n\r\n'), ...parts.slice(1)]),
      offset: at(1),
      code: 'SHERLOCK_CORRUPT_WARC',
      message: /no Content-Length/,
      records: 6,
    },
    {
      name: 'bad-length.warc.gz',
      bytes: Buffer.concat([parts[0]!, gzipSync('WARC/1.0\r\nWARC-Type: resource\r\nContent-Length: -3\r\n\r\nabc\r\n\r\n'), ...parts.slice(1)]),
      offset: at(1),
      code: 'SHERLOCK_CORRUPT_WARC',
      message: /bad Content-Length "-3"/,
      records: 6,
    },
    {
      name: 'short.warc.gz',
      bytes: Buffer.concat([parts[0]!, gzipSync('WARC/1.0\r\nWARC-Type: resource\r\nContent-Length: 300\r\n\r\nabc\r\n\r\n'), ...parts.slice(1)]),
      offset: at(1),
      code: 'SHERLOCK_CORRUPT_WARC',
      message: /Content-Length 300 runs 293 bytes past the end of its gzip member/,
      records: 7,
    },
    {
      name: 'not-warc.warc.gz',
      bytes: Buffer.concat([parts[0]!, gzipSync('HTTP/1.1 200 OK\r\n\r\n'), ...parts.slice(1)]),
      offset: at(1),
      code: 'SHERLOCK_CORRUPT_WARC',
      message: /no WARC version line/,
      records: 6,
    },
    {
      // A whole file in one gzip stream: only its first record has an offset of its own.
      name: 'one-member.warc.gz',
      bytes: gzipSync(gunzipSync(readFileSync(exampleWarc))),
      offset: 0,
      code: 'SHERLOCK_CORRUPT_WARC',
      message: /more than one WARC record/,
      records: 1,
    },
  ];
  for (const c of cases) {
    const path = join(dir, c.name);
    writeFileSync(path, c.bytes);
    const err = strictError(path);
    assert.equal(err.code, c.code, `${c.name}: ${err.message}`);
    assert.equal(err.place.file, path);
    assert.equal(err.place.offset, c.offset, c.name);
    assert.match(err.message, c.message, c.name);
    const problems: SherlockError[] = [];
    const records = readAll(path, problems);
    assert.equal(problems.length, 1, c.name);
    assert.equal(problems[0]!.place.offset, c.offset, c.name);
    assert.equal(records.length, c.records, c.name);
  }
});

test('damaged plain WARC: a block running past the end, garbage between records; lenient reading resynchronises at the next version line', (t) => {
  const dir = scratchDir(t);
  const text = gunzipSync(readFileSync(exampleWarc));
  const garbage = join(dir, 'garbage.warc');
  writeFileSync(garbage, Buffer.concat([text.subarray(0, 460), Buffer.from('junk line\nmore WARC/ junk\n'), text.subarray(460)]));
  let err = strictError(garbage);
  assert.equal(err.code, 'SHERLOCK_CORRUPT_WARC');
  assert.equal(err.place.offset, 460);
  const problems: SherlockError[] = [];
  assert.equal(readAll(garbage, problems).length, 6);
  assert.deepEqual(problems.map((p) => p.place.offset), [460]);

  const cut = join(dir, 'cut.warc');
  writeFileSync(cut, text.subarray(0, 1000));
  err = strictError(cut);
  assert.equal(err.place.offset, 460);
  assert.match(err.message, /Content-Length 1610 runs \d+ bytes past the end of the file/);
  problems.length = 0;
  const records = readAll(cut, problems);
  assert.deepEqual(records.map((r) => r.truncated), [false, true]);
  assert.equal(problems.length, 1);
});

test('any flipped byte or cut in a WARC, plain or gzipped: strictly a SherlockError naming the file, leniently no throw at all', (t) => {
  const dir = scratchDir(t);
  const gz = readFileSync(exampleWarc);
  const plain = gunzipSync(gz);
  const path = join(dir, 'damaged');
  fc.assert(
    fc.property(fc.boolean(), fc.nat(), fc.integer({ min: 1, max: 255 }), fc.boolean(), (compressed, at, xor, cut) => {
      const bytes = Buffer.from(compressed ? gz : plain);
      const i = at % bytes.length;
      writeFileSync(path, cut ? bytes.subarray(0, i) : (bytes.fill(bytes[i]! ^ xor, i, i + 1), bytes));
      try {
        readAll(path);
      } catch (err) {
        assert.ok(isSherlockError(err) && err.place.file === path, String(err));
      }
      readAll(path, []);
    }),
    { numRuns: 300 },
  );
});
