import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import test, { type TestContext } from 'node:test';
import { pathToFileURL } from 'node:url';
import { deflateRawSync, gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import {
  arcDate,
  arcMime,
  captureDate,
  escapeUrlBytes,
  looksLikeArcHeader,
  normalizeArcDate,
  parseArcHeader,
  UNKNOWN_DATE,
  V1_FIELDS,
  versionBlock,
  type ArcHeader,
} from '../../../common/archive/arc.js';
import { ArcReader, readArc, type ArcReadOptions, type ArcRecord } from '../../../common/archive/arc-read.js';
import { ArcWriter, frameArcRecord, type ArcRecordInput, type ArcWritten } from '../../../common/archive/arc-write.js';
import { EMPTY_SHA1_BASE32, httpStatus, payloadDigest, sha1Base32 } from '../../../common/archive/digest.js';
import { isSherlockError, type SherlockError } from '../../../common/errors.js';
import { setLogSink } from '../../../common/log.js';
import { repoRoot, scratchDir, testdata } from '../../helpers/paths.js';

// ---------------------------------------------------------------- helpers

interface CdxLine {
  b: string;
  a: string;
  s: string;
  k: string;
  S: number;
  V: number;
}

/** An 11-field CDX file (legend ` CDX N b a m s k r M S V g`); fields after `a` are taken from the right, since `a` may hold raw bytes. */
function readCdx(path: string): CdxLine[] {
  const lines = readFileSync(path, 'latin1').split('\n').slice(1).filter((line) => line !== '');
  return lines.map((line) => {
    const t = line.split(' ');
    const n = t.length;
    return { b: t[1]!, a: t.slice(2, n - 8).join(' '), s: t[n - 7]!, k: t[n - 6]!, S: Number(t[n - 3]), V: Number(t[n - 2]) };
  });
}

/** Reads leniently: every record and every problem. */
function readAll(path: string, options: Omit<ArcReadOptions, 'onProblem'> = {}): { records: ArcRecord[]; problems: SherlockError[] } {
  const problems: SherlockError[] = [];
  const records = [...readArc(path, { ...options, onProblem: (p) => problems.push(p) })];
  return { records, problems };
}

/** Reads strictly, keeping what came before the error. */
function readStrict(path: string, options: ArcReadOptions = {}): { records: ArcRecord[]; error?: SherlockError } {
  const records: ArcRecord[] = [];
  try {
    for (const record of readArc(path, options)) records.push(record);
  } catch (err) {
    if (!isSherlockError(err)) throw err;
    return { records, error: err };
  }
  return { records };
}

const extents = (records: ArcRecord[]) => records.map((r) => [r.offset, r.length]);
const where = (problems: SherlockError[]) => problems.map((p) => [p.code, p.place.offset]);

function assertError(err: SherlockError | undefined, code: string, file: string, offset: number, message?: RegExp): void {
  assert.ok(err, 'expected an error');
  assert.equal(err.code, code, err.describe());
  assert.equal(err.place.file, file);
  assert.equal(err.place.offset, offset, err.describe());
  if (message) assert.match(err.message, message);
}

/** IA's CDX-Writer digests a version block's content after its two lines (the v1.1 XML, else nothing or the extra LF). */
function iaFiledescDigest(content: Buffer): string {
  const second = content.indexOf(0x0a, content.indexOf(0x0a) + 1);
  return sha1Base32(second === -1 ? Buffer.alloc(0) : content.subarray(second + 1));
}

const cdxWriter = (name: string) => testdata('arc', 'cdx-writer', name);
const fixedClock = () => new Date(Date.UTC(2024, 0, 2, 3, 4, 5));

function response(body: string, status = 200): Buffer {
  return Buffer.from(`HTTP/1.1 ${status} X\r\nContent-Type: text/html\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

function input(i: number, content = response(`<p>document ${i}</p>`)): ArcRecordInput {
  return { url: `http://example.com/${i}`, ip: '192.0.2.1', date: new Date(Date.UTC(2024, 0, 2, 3, 4, i % 60)), contentType: 'text/html; charset=utf-8', content };
}

function arcFiles(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.includes('.arc')).sort();
}

/** Each written record read back has the facts `write` returned. */
function assertWrittenRecords(dir: string, written: ArcWritten[], inputs: ArcRecordInput[]): void {
  const byFile = new Map<string, ArcRecord[]>();
  for (const name of arcFiles(dir)) byFile.set(name, [...readArc(join(dir, name))]);
  written.forEach((w, i) => {
    const record = byFile.get(w.file)?.find((r) => r.offset === w.offset);
    assert.ok(record, `record ${i} at ${w.file}:${w.offset}`);
    assert.equal(record.length, w.length);
    assert.equal(record.header.url, w.url);
    assert.equal(record.header.ip, inputs[i]!.ip);
    assert.equal(record.header.date, w.date);
    assert.equal(record.header.mime, w.mime);
    assert.deepEqual(record.content, inputs[i]!.content);
    assert.equal(payloadDigest(record.content), w.digest);
    assert.equal(httpStatus(record.content), w.status);
  });
}

// ---------------------------------------------------------------- header lines

test('header lines: five fields, spaces in URL or MIME, transposed date and IP, v2, odd dates (spec §1.2)', () => {
  const parse = (line: string): Partial<ArcHeader> => {
    const parsed = parseArcHeader(line);
    assert.ok('header' in parsed, `${line}: ${'problem' in parsed ? parsed.problem : ''}`);
    const { url, ip, date, mime, length, version } = parsed.header;
    return { url, ip, date, mime, length, version };
  };
  const v1 = (url: string, ip: string, date: string, mime: string, length: number) => ({ url, ip, date, mime, length, version: 1 });
  assert.deepEqual(parse('http://example.com/ 93.184.216.119 20140216050221 text/html 1591'), v1('http://example.com/', '93.184.216.119', '20140216050221', 'text/html', 1591));
  assert.deepEqual(parse('http://a/b c d 1.2.3.4 20140216050221 text/html 5'), v1('http://a/b c d', '1.2.3.4', '20140216050221', 'text/html', 5));
  assert.deepEqual(parse('http://a/ 195.68.112.49 20000824015105 text/html; Charset=iso-8859-1 20567'), v1('http://a/', '195.68.112.49', '20000824015105', 'text/html; Charset=iso-8859-1', 20567));
  assert.deepEqual(parse('http://a/ x 1 2.3.4.5 20000824015105 text/html; a=b c 7'), v1('http://a/ x 1', '2.3.4.5', '20000824015105', 'text/html; a=b c', 7));
  assert.deepEqual(parse('http://a/ 211.111.217.29 20110804181142  39'), v1('http://a/', '211.111.217.29', '20110804181142', '', 39));
  assert.deepEqual(parse('http://a/ 20031219215023 63.241.16.130 text/plain 285'), v1('http://a/', '63.241.16.130', '20031219215023', 'text/plain', 285));
  assert.deepEqual(parse('http://a/ 130.237.109.120 a0d1fdddf3165d0447b1f7a285c61c1c9 text/html 3016'), v1('http://a/', '130.237.109.120', 'a0d1fdddf3165d0447b1f7a285c61c1c9', 'text/html', 3016));
  assert.deepEqual(parse('https://a/ None 2016020900 text/html 408966'), v1('https://a/', 'None', '2016020900', 'text/html', 408966));
  assert.deepEqual(parse('http://a/ 2001:db8::1 20240102030405 text/html 0'), v1('http://a/', '2001:db8::1', '20240102030405', 'text/html', 0));
  assert.deepEqual(parse('http://a/ 1.2.3.4 20160211000000jpg text/html 1\r'), v1('http://a/', '1.2.3.4', '20160211000000jpg', 'text/html', 1));
  const v2 = parseArcHeader('http://a/ 1.2.3.4 20001110112000 text/html 200 - - 1234 x.arc 99');
  assert.ok('header' in v2);
  assert.equal(v2.header.version, 2);
  assert.equal(v2.header.length, 99);
  assert.deepEqual(v2.header.v2, { resultCode: '200', checksum: '-', location: '-', offset: '1234', filename: 'x.arc' });
  assert.equal(v2.header.line, 'http://a/ 1.2.3.4 20001110112000 text/html 200 - - 1234 x.arc 99');
  // Ten tokens but the second is no IP: a v1 line with spaces in its URL.
  assert.deepEqual(parse('http://a/ b c d e f 1.2.3.4 20001110112000 text/html 9'), v1('http://a/ b c d e f', '1.2.3.4', '20001110112000', 'text/html', 9));
});

test('header lines that are no header lines say what is wrong', () => {
  const problem = (line: string) => {
    const parsed = parseArcHeader(line);
    assert.ok('problem' in parsed, line);
    return parsed.problem;
  };
  assert.match(problem('http://example.com/ 93.184.216.119 201404010000000000 text/html -1'), /negative length -1/);
  assert.match(problem('http://example.com/ 93.184.216.119 201404010000000000 text/html abc'), /"abc" is not a number/);
  assert.match(problem('http://a/ 1.2.3.4 20140101000000 text/html 99999999999999999999'), /out of range/);
  assert.match(problem('1 0 Bad Capture'), /4 fields/);
  assert.match(problem(''), /1 fields/);
  assert.match(problem('URL IP-address Archive-date Content-type Archive-length'), /not a number/);
  assert.match(problem('a b c d e f 12'), /no IP address and date/);
});

test('only credible header lines count when resynchronising', () => {
  assert.ok(looksLikeArcHeader('http://example.com/ 127.0.0.1 20140102000000 text/plain 1'));
  assert.ok(looksLikeArcHeader('http://example.com/ 93.184.216.119 201404010000000000 text/html -1'), 'negative lengths are found, then reported');
  assert.ok(looksLikeArcHeader('dns:www.archive.org 68.87.76.178 20080430204825 text/dns 56'));
  for (const line of [V1_FIELDS, '1 0 Bad Capture', '', '<html><body>hello 1.2.3.4 20240101000000 x 5</body>', 'http://a/ 1.2.3.4 20240101000000 text/html abc', 'HTTP/1.1 200 OK']) {
    assert.equal(looksLikeArcHeader(line), false, line);
  }
});

test('dates normalise to 14 digits as IA does, then to a real instant as warcio clamps; garbage has none', () => {
  const cases: Array<[string, string | undefined]> = [
    ['20140216050221', '20140216050221'],
    ['2016020900', '20160209000000'],
    ['200011101120', '20001110112000'],
    // IA keeps day 00 (20151200000000); no WARC-Date can say it, so 00 becomes 01 as in warcio's ARC-to-WARC.
    ['201512000000000', '20151201000000'],
    ['20150000000000', '20150101000000'],
    ['20150231120000', '20150228120000'],
    ['20160231120000', '20160229120000'],
    ['20161332246161', '20161231235959'],
    ['00001012262000', '19001012232000'],
    ['30001012262000', '29991012232000'],
    ['2000082305410049', '20000823054100'],
    ['200009180023002953', '20000918002300'],
    ['20160211000000jpg', '20160211000000'],
    ['a0d1fdddf3165d0447b1f7a285c61c1c9', undefined],
    ['2016020', undefined],
    ['1234567890123', undefined],
    ['2016021100000jpg', undefined],
    ['', undefined],
    ['1234567890123456789', undefined],
  ];
  for (const [raw, expected] of cases) assert.equal(normalizeArcDate(raw), expected, raw);
  assert.equal(captureDate('a0d1fdddf3165d0447b1f7a285c61c1c9', '19970801000000'), '19970801000000', 'no date of its own: the file’s');
  assert.equal(captureDate('a0d1fdddf3165d0447b1f7a285c61c1c9', undefined), UNKNOWN_DATE, 'no date anywhere: the epoch');
  assert.equal(captureDate('201512000000000', '19970801000000'), '20151201000000');
});

test('the writer’s field rules: MIME cut, URL escaping, 14-digit UTC dates, exact version block length', () => {
  assert.equal(arcMime('text/html; charset=UTF-8'), 'text/html');
  assert.equal(arcMime(' text/plain,text/html'), 'text/plain');
  assert.equal(arcMime('image/png'), 'image/png');
  assert.equal(arcMime(undefined), 'no-type');
  assert.equal(arcMime(''), 'no-type');
  assert.equal(arcMime('  ;charset=x'), 'no-type');
  assert.equal(arcMime('text/h\u00e9ml'), 'no-type');
  assert.equal(escapeUrlBytes(Buffer.from('http://example.com/a b\r\n/caf\u00e9?q=%41\x7f', 'utf8')), 'http://example.com/a%20b%0D%0A/caf%C3%A9?q=%41%7F');
  assert.equal(arcDate(new Date(Date.UTC(2014, 1, 16, 5, 2, 21, 999))), '20140216050221');
  assert.equal(arcDate(new Date(Date.UTC(999, 0, 1))), '09990101000000');
  assert.throws(() => arcDate(new Date(Number.NaN)), RangeError);
  for (const origin of ['InternetArchive', 'LiveWeb Capture', 'sherlock', 'x']) {
    const block = versionBlock('f.arc.gz', '0.0.0.0', '20240101000000', origin);
    const expected = `1 0 ${origin}\n${V1_FIELDS}\n`;
    assert.equal(block.content.toString('latin1'), expected);
    assert.equal(block.line.toString('latin1'), `filedesc://f.arc.gz 0.0.0.0 20240101000000 text/plain ${Buffer.byteLength(expected)}\n`);
  }
  assert.equal(versionBlock('f', '0.0.0.0', '20240101000000', 'InternetArchive').content.length, 76, 'spec §1.3: 20 + 56 bytes');
});

// ---------------------------------------------------------------- real files

test('cdx-writer files: offsets, lengths, dates, statuses and digests equal IA’s all-records CDX', () => {
  const names = readdirSync(testdata('arc', 'cdx-writer')).filter((name) => /\.arc(\.gz)?$/.test(name));
  assert.equal(names.length, 25);
  for (const name of names) {
    const path = cdxWriter(name);
    const expected = readCdx(testdata('arc', 'cdx-writer', 'expected', `${name}.cdx-writer-all-records.cdx`));
    const { records, error } = readStrict(path);
    if (name === 'negative_content_length.arc.gz') {
      // IA stops at the negative length too: its CDX lists only what comes before.
      assertError(error, 'SHERLOCK_CORRUPT_ARC', path, 399, /negative length -2046788874/);
    } else {
      assert.equal(error, undefined, `${name}: ${error?.describe()}`);
    }
    assert.deepEqual(extents(records), expected.map((e) => [e.V, e.S]), name);
    records.forEach((record, i) => {
      const cdx = expected[i]!;
      const filedesc = record.header.url.startsWith('filedesc:');
      // IA keeps a day 00, which is no instant (see the dates test).
      const date = name === '15_digit_date.arc.gz' && !filedesc ? '20151201000000' : cdx.b;
      assert.equal(normalizeArcDate(record.header.date) ?? '-', date, `${name} @${record.offset}: date`);
      assert.equal(String(httpStatus(record.content) ?? '-'), cdx.s, `${name} @${record.offset}: status`);
      if (/^[\x21-\x7e]+$/.test(record.header.url)) assert.equal(record.header.url, cdx.a, `${name} @${record.offset}: url`);
      let digest = filedesc ? iaFiledescDigest(record.content) : payloadDigest(record.content);
      // Known divergence (spec §4): IA digests a CR LF left over after `410 Gone\r\r\n\r\n`; we give the empty payload.
      if (name === 'empty_record.arc.gz' && !filedesc) {
        assert.equal(digest, EMPTY_SHA1_BASE32);
        digest = 'XKFLLIBIBOKTVKLUGX7YSRWLZOZHKWRH';
      }
      assert.equal(digest, cdx.k, `${name} @${record.offset}: digest`);
    });
  }
});

test('cdx-writer header oddities come out as stored', () => {
  const only = (name: string) => [...readArc(cdxWriter(name))].at(-1)!.header;
  assert.equal(only('alexa_charset_in_header.arc.gz').mime, 'text/html; Charset=iso-8859-1');
  assert.equal(only('alexa_short_header.arc.gz').mime, '');
  assert.equal(only('transposed_header.arc.gz').ip, '63.241.16.130');
  assert.equal(only('transposed_header.arc.gz').date, '20031219215023');
  assert.equal(only('carriage_return_in_url.arc.gz').url, 'http://cheapchicks.org/cgi-\rbin/count/slcnt.cgi?c=3');
  assert.equal(only('non_ascii_url.arc.gz').url, 'http://arevebebe.free.fr/php3/selcateg.php3?selec=\u00e9cole');
  assert.equal(only('bad_mime_type.arc.gz').mime, 'imag\xef\xbf\xbdm)');
  assert.equal(only('10_digit_date.arc.gz').ip, 'None');
  assert.match(only('spaces_in_url.arc.gz').url, /^http:\/\/www3\.fdic\.gov\/.*paddr=MAIN STREET {61}&pCity=.*Cheneyville\++$/);
  assert.equal(only('arc_v1_with_v2_header.arc.gz').version, 1);
});

test('negative_content_length.arc.gz: lenient reading reports the record and goes on with the next member', () => {
  const path = cdxWriter('negative_content_length.arc.gz');
  const { records, problems } = readAll(path);
  assert.deepEqual(where(problems), [['SHERLOCK_CORRUPT_ARC', 399]]);
  assert.equal(problems[0]!.place.file, path);
  assert.deepEqual(extents(records), [
    [0, 155],
    [155, 244],
    [520, 103],
  ]);
  assert.equal(httpStatus(records[2]!.content), 502, 'IA’s `HTTP 502` status line');
});

test('pywb example.arc and example.arc.gz: the record pywb indexes, and the version block before it', () => {
  for (const [name, filedesc] of [
    ['example.arc', [0, 149]],
    ['example.arc.gz', [0, 171]],
  ] as const) {
    const [cdx] = readCdx(testdata('arc', 'pywb', 'expected', `${name}.pywb-cdx-indexer.cdx`));
    const records = [...readArc(testdata('arc', 'pywb', name))];
    assert.deepEqual(extents(records), [filedesc, [cdx!.V, cdx!.S]], name);
    const record = records[1]!;
    assert.equal(payloadDigest(record.content), cdx!.k);
    assert.equal(record.header.url, cdx!.a);
    assert.equal(record.header.date, cdx!.b);
    // The version block declares 75 for its 76 bytes; the missing LF is taken as a separator.
    assert.equal(records[0]!.header.length, 75);
    assert.equal(records[0]!.content.toString(), `1 0 LiveWeb Capture\n${V1_FIELDS}`);
  }
  assert.deepEqual(extents([...readArc(testdata('arc', 'pywb', 'example.arc'))]).at(-1), [151, 1656]);
});

test('ukwa blackbook .arc.gz (members without the LF) and its separator-less plain twin give the same records', () => {
  const gz = testdata('arc', 'ukwa', 'IAH-20080430204825-00000-blackbook-truncated.arc.gz');
  const plain = testdata('arc', 'webarchive-commons', 'IAH-20080430204825-00000-blackbook-truncated.arc');
  const expected = readCdx(testdata('arc', 'ukwa', 'expected', `${basename(gz)}.pywb-cdx-indexer.cdx`));
  const gzRecords = [...readArc(gz)];
  assert.deepEqual(extents(gzRecords), [[0, 668], ...expected.map((e) => [e.V, e.S])]);
  const plainRecords = [...readArc(plain)];
  assert.deepEqual(extents(plainRecords), [
    [0, 1399],
    [1399, 116],
    [1515, 861],
    [2376, 748],
    [3124, 29079],
    [32203, 2049],
    [34252, 1521],
    [35773, 647],
    [36420, 50928],
  ]);
  assert.equal(plainRecords.at(-1)!.offset + plainRecords.at(-1)!.length, statSync(plain).size);
  expected.forEach((cdx, i) => {
    for (const record of [gzRecords[i + 1]!, plainRecords[i + 1]!]) {
      assert.equal(record.header.url, cdx.a);
      assert.equal(record.header.date, cdx.b);
      assert.equal(payloadDigest(record.content), cdx.k, cdx.a);
    }
    assert.deepEqual(gzRecords[i + 1]!.content, plainRecords[i + 1]!.content);
  });
  assert.equal(httpStatus(gzRecords[1]!.content), undefined, 'the dns: record is not HTTP');
});

test('warcio example-space-in-url.arc: the length running past EOF is a strict error; lenient gives what cdxj-indexer gives', () => {
  const path = testdata('arc', 'warcio', 'example-space-in-url.arc');
  const strict = readStrict(path);
  assertError(strict.error, 'SHERLOCK_CORRUPT_ARC', path, 151, /declared length 1591 runs 12 bytes past the end of the file/);
  assert.deepEqual(extents(strict.records), [[0, 149]]);

  const cdxj = readFileSync(testdata('arc', 'warcio', 'expected', 'example-space-in-url.arc.cdxj-indexer.cdxj'), 'utf8');
  const fields = JSON.parse(cdxj.slice(cdxj.indexOf('{'))) as Record<string, string>;
  const { records, problems } = readAll(path);
  assert.deepEqual(where(problems), [['SHERLOCK_CORRUPT_ARC', 151]]);
  const record = records[1]!;
  assert.deepEqual([record.offset, record.length], [Number(fields['offset']), Number(fields['length'])]);
  assert.equal(record.truncated, true);
  assert.equal(record.content.length, 1579);
  assert.equal(`sha1:${payloadDigest(record.content)}`, fields['digest']);
  assert.equal(record.header.url, decodeURIComponent(fields['url']!));
  assert.equal(record.header.url, 'http://example.com/index.cfm?FuseAction=Email&EmailTitle=Examples From The Live Web&IsPopUp=False');
  assert.equal(String(httpStatus(record.content)), fields['status']);
});

test('pywb bad.arc: strict mode stops at offset 0; lenient mode reports 0, 134, 262 and reads the record at 202', () => {
  const path = testdata('arc', 'pywb', 'bad.arc');
  const strict = readStrict(path);
  assertError(strict.error, 'SHERLOCK_CORRUPT_ARC', path, 0, /negative length -1/);
  assert.equal(strict.error!.describe(), `${path}: offset 0: bad header line: negative length -1`);
  const { records, problems } = readAll(path);
  assert.deepEqual(where(problems), [
    ['SHERLOCK_CORRUPT_ARC', 0],
    ['SHERLOCK_CORRUPT_ARC', 134],
    ['SHERLOCK_CORRUPT_ARC', 262],
  ]);
  assert.match(problems[2]!.message, /"abc" is not a number/);
  assert.deepEqual(extents(records), [[202, 59]]);
  assert.equal(records[0]!.header.date, '20140102000000');
});

test('recordAt reads the record at an offset CDX gives, and names the offset when there is none', () => {
  const path = cdxWriter('uncompressed.arc');
  const reader = ArcReader.open(path);
  try {
    assert.equal(reader.compressed, false);
    const record = reader.recordAt(79332);
    assert.equal(record.length, 51406);
    assert.equal(payloadDigest(record.content), 'BQJDX42R5GFX4OIXPGNHZG3QFM5X3KQR');
    assert.throws(() => reader.recordAt(80000), (err: unknown) => isSherlockError(err, "SHERLOCK_CORRUPT_ARC") && err.place.offset === 80000);
    assert.throws(() => reader.recordAt(reader.size), (err: unknown) => isSherlockError(err, 'SHERLOCK_NOT_FOUND') && err.place.file === path);
  } finally {
    reader.close();
  }
  const gz = ArcReader.open(testdata('arc', 'pywb', 'example.arc.gz'));
  try {
    assert.equal(gz.compressed, true);
    assert.equal(gz.recordAt(171).length, 856);
    assert.throws(() => gz.recordAt(172), (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_ARC') && err.place.offset === 172);
  } finally {
    gz.close();
  }
});

test('a record over maxRecordSize is SHERLOCK_TOO_LARGE naming file and offset; lenient reading skips it', () => {
  const gz = testdata('arc', 'ukwa', 'IAH-20080430204825-00000-blackbook-truncated.arc.gz');
  const plain = testdata('arc', 'webarchive-commons', 'IAH-20080430204825-00000-blackbook-truncated.arc');
  assertError(readStrict(gz, { maxRecordSize: 10_000 }).error, 'SHERLOCK_TOO_LARGE', gz, 1776);
  assertError(readStrict(plain, { maxRecordSize: 10_000 }).error, 'SHERLOCK_TOO_LARGE', plain, 3124);
  const lenientGz = readAll(gz, { maxRecordSize: 10_000 });
  assert.deepEqual(where(lenientGz.problems), [
    ['SHERLOCK_TOO_LARGE', 1776],
    ['SHERLOCK_TOO_LARGE', 11441],
  ]);
  assert.equal(lenientGz.records.length, 7);
  const lenientPlain = readAll(plain, { maxRecordSize: 10_000 });
  assert.deepEqual(where(lenientPlain.problems), [
    ['SHERLOCK_TOO_LARGE', 3124],
    ['SHERLOCK_TOO_LARGE', 36420],
  ]);
  assert.deepEqual(lenientPlain.records.map((r) => r.offset), [0, 1399, 1515, 2376, 32203, 34252, 35773]);
  // The 17 MB record inflates only up to the cap, then stops.
  const big = cdxWriter('15_digit_date.arc.gz');
  assertError(readStrict(big, { maxRecordSize: 1_000_000 }).error, 'SHERLOCK_TOO_LARGE', big, 673);
  assert.equal(readStrict(big).records[1]!.content.length, 17_327_214);
});

// ---------------------------------------------------------------- damage and tolerance, made by hand

function plainRecord(url: string, content: string): string {
  return `${url} 10.0.0.1 20240102030405 text/plain ${Buffer.byteLength(content)}\n${content}`;
}

test('plain files: any run of LF/CR between records, garbage between records reported and skipped', (t) => {
  const dir = scratchDir(t);
  const path = join(dir, 'sep.arc');
  const a = plainRecord('http://a/', 'first\n');
  const b = plainRecord('http://b/', 'second');
  const c = plainRecord('http://c/', '');
  writeFileSync(path, `${a}${b}\r\n\n\r\n${c}\n`);
  assert.deepEqual(extents([...readArc(path)]), [
    [0, a.length],
    [a.length, b.length],
    [a.length + b.length + 5, c.length],
  ]);
  const garbage = 'this is not an ARC header line\nnor this one\n';
  writeFileSync(path, `${a}\n${garbage}${b}\n`);
  assertError(readStrict(path).error, 'SHERLOCK_CORRUPT_ARC', path, a.length + 1, /bad header line/);
  const { records, problems } = readAll(path);
  assert.deepEqual(where(problems), [['SHERLOCK_CORRUPT_ARC', a.length + 1]]);
  assert.deepEqual(records.map((r) => r.header.url), ['http://a/', 'http://b/']);
  assert.equal(records[1]!.offset, a.length + 1 + garbage.length);
});

test('plain files: a header line cut by the end of the file, and one too long to be a header line', (t) => {
  const dir = scratchDir(t);
  const path = join(dir, 'cut.arc');
  const a = plainRecord('http://a/', 'x');
  writeFileSync(path, `${a}\nhttp://b/ 10.0.0.1 2024`);
  assertError(readStrict(path).error, 'SHERLOCK_CORRUPT_ARC', path, a.length + 1, /ends inside a header line/);
  writeFileSync(path, `${a}\n${'x'.repeat(200_000)}\n${a}\n`);
  assertError(readStrict(path).error, 'SHERLOCK_CORRUPT_ARC', path, a.length + 1, /no LF within/);
  const { records, problems } = readAll(path);
  assert.equal(problems.length, 1);
  assert.deepEqual(records.map((r) => r.offset), [0, a.length + 1 + 200_001]);
});

test('a version block declaring one byte too many (Heritrix counts the separator) is taken back by one', (t) => {
  const path = join(scratchDir(t), 'heritrix.arc');
  const body = `1 0 InternetArchive\n${V1_FIELDS}\n`;
  const next = plainRecord('http://a/', 'x');
  // 77 declared, 76 present, and no separator before the next header line.
  writeFileSync(path, `filedesc://h.arc 0.0.0.0 20240102030405 text/plain 77\n${body}${next}\n`);
  const records = [...readArc(path)];
  assert.equal(records[0]!.content.toString(), body);
  assert.equal(records[1]!.header.url, 'http://a/');
});

test('gz files: LF between members tolerated; garbage, empty members, two records in one member, short members reported', (t) => {
  const dir = scratchDir(t);
  const path = join(dir, 'members.arc.gz');
  const a = gzipSync(plainRecord('http://a/', 'first') + '\n');
  const b = gzipSync(plainRecord('http://b/', 'second'));
  const write = (...parts: Buffer[]) => writeFileSync(path, Buffer.concat(parts));
  const nl = Buffer.from('\n\r\n');
  write(a, nl, b);
  assert.deepEqual(extents([...readArc(path)]), [
    [0, a.length],
    [a.length + 3, b.length],
  ]);

  const junk = Buffer.from('junk between members');
  write(a, junk, b);
  assertError(readStrict(path).error, 'SHERLOCK_CORRUPT_ARC', path, a.length, /expected a gzip member/);
  let lenient = readAll(path);
  assert.deepEqual(where(lenient.problems), [['SHERLOCK_CORRUPT_ARC', a.length]]);
  assert.deepEqual(extents(lenient.records), [
    [0, a.length],
    [a.length + junk.length, b.length],
  ]);

  const empty = gzipSync(Buffer.alloc(0));
  write(a, empty, b);
  assertError(readStrict(path).error, 'SHERLOCK_CORRUPT_ARC', path, a.length, /empty gzip member/);
  assert.equal(readAll(path).records.length, 2);

  const two = gzipSync(plainRecord('http://c/', 'one') + '\n' + plainRecord('http://d/', 'two') + '\n');
  write(a, two, b);
  assertError(readStrict(path).error, 'SHERLOCK_CORRUPT_ARC', path, a.length, /bytes after the record inside its gzip member/);
  lenient = readAll(path);
  assert.deepEqual(lenient.records.map((r) => r.header.url), ['http://a/', 'http://c/', 'http://b/']);

  const short = gzipSync('http://e/ 10.0.0.1 20240102030405 text/plain 100\nonly this\n');
  write(a, short, b);
  assertError(readStrict(path).error, 'SHERLOCK_CORRUPT_ARC', path, a.length, /runs 90 bytes past the end of its gzip member/);
  lenient = readAll(path);
  assert.deepEqual(lenient.records.map((r) => [r.header.url, r.truncated]), [
    ['http://a/', false],
    ['http://e/', true],
    ['http://b/', false],
  ]);

  write(a, b.subarray(0, b.length - 3));
  assertError(readStrict(path).error, 'SHERLOCK_CORRUPT_GZIP', path, a.length, /truncated gzip member/);
  assert.deepEqual(where(readAll(path).problems), [['SHERLOCK_CORRUPT_GZIP', a.length]]);
});

test('a gzip member with every header flag set holds a record like any other', (t) => {
  const path = join(scratchDir(t), 'flags.arc.gz');
  const content = Buffer.from(plainRecord('http://a/', 'x') + '\n');
  const header = Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 4 | 8 | 16, 0, 0, 0, 0, 0, 3, 8, 0]), Buffer.from('LX\x04\x00\x00\x00\x00\x00name\0comment\0', 'latin1')]);
  const trailer = gzipSync(content).subarray(-8);
  writeFileSync(path, Buffer.concat([header, deflateRawSync(content), trailer, gzipSync(content)]));
  const records = [...readArc(path)];
  assert.equal(records.length, 2);
  assert.equal(records[0]!.length, statSync(path).size - gzipSync(content).length);
});

test('files without a version block read fine', () => {
  for (const name of ['bad_url_with_colon_1.arc.gz', 'bad_url_with_colon_2.arc.gz', 'empty_payload_header_ending_with_lf.arc.gz']) {
    const records = [...readArc(cdxWriter(name))];
    assert.equal(records.length, 1);
    assert.equal(records[0]!.offset, 0);
  }
});

// ---------------------------------------------------------------- writer

const recordArbitrary: fc.Arbitrary<ArcRecordInput> = fc.record({
  url: fc.webUrl({ withQueryParameters: true, withFragments: true }),
  ip: fc.oneof(fc.ipV4(), fc.ipV6()),
  date: fc.date({ min: new Date(Date.UTC(1000, 0, 1)), max: new Date(Date.UTC(9999, 11, 31, 23, 59, 59)), noInvalidDate: true }),
  contentType: fc.option(fc.oneof(fc.constantFrom('text/html; charset=utf-8', 'image/png', 'text/plain,text/html', ' application/json '), fc.string()), {
    nil: undefined,
  }),
  content: fc.oneof(
    fc.uint8Array({ maxLength: 3000 }).map((bytes) => Buffer.from(bytes)),
    fc.tuple(fc.integer({ min: 100, max: 599 }), fc.string({ unit: 'binary' })).map(([status, body]) => response(body, status)),
    fc.constantFrom(Buffer.alloc(0), Buffer.from('\n'), Buffer.from('\n\n\r\n'), Buffer.from('http://x/ 1.2.3.4 20240101000000 text/html 3\n')),
  ),
});

for (const compress of [true, false]) {
  test(`round trip (${compress ? '.arc.gz' : 'plain .arc'}): what the writer wrote, the reader gives back, with the facts write returned`, async (t) => {
    const dir = scratchDir(t);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(recordArbitrary, { minLength: 1, maxLength: 6 }), async (inputs) => {
        const runDir = join(dir, String(run++));
        const writer = await ArcWriter.open({ dir: runDir, prefix: 'rt', compress, clock: fixedClock });
        const written: ArcWritten[] = [];
        for (const record of inputs) written.push(await writer.write(record));
        await writer.close();
        const [name, ...others] = arcFiles(runDir);
        assert.deepEqual(others, []);
        assert.equal(name, `rt-20240102030405-00000.arc${compress ? '.gz' : ''}`);
        const records = [...readArc(join(runDir, name!))];
        assert.equal(records.length, inputs.length + 1);
        inputs.forEach((record, i) => {
          const read = records[i + 1]!;
          const w = written[i]!;
          assert.equal(w.file, name);
          assert.deepEqual([read.offset, read.length], [w.offset, w.length]);
          assert.equal(read.header.url, w.url);
          if (/^[\x21-\x7e]+$/.test(record.url)) assert.equal(w.url, record.url);
          assert.equal(read.header.ip, record.ip);
          assert.equal(read.header.date, arcDate(record.date));
          assert.equal(read.header.mime, arcMime(record.contentType));
          assert.equal(read.header.mime, w.mime);
          assert.deepEqual(read.content, record.content);
          assert.equal(w.digest, payloadDigest(record.content));
          assert.equal(w.status, httpStatus(record.content));
        });
        // Plain: records are separated by exactly one LF, and the file ends with one.
        if (!compress) assert.equal(records.at(-1)!.offset + records.at(-1)!.length + 1, statSync(join(runDir, name!)).size);
      }),
      { numRuns: 40 },
    );
  });
}

test('every file starts with a version block of exactly its two lines, naming the file', async (t) => {
  const dir = scratchDir(t);
  const writer = await ArcWriter.open({ dir, prefix: 'vb', clock: fixedClock, ip: '192.0.2.7', origin: 'Sherlock Test' });
  const w = await writer.write(input(1));
  await writer.close();
  const [first, second] = [...readArc(join(dir, w.file))];
  assert.equal(first!.offset, 0);
  assert.equal(first!.length, w.offset);
  assert.equal(first!.header.line, `filedesc://vb-20240102030405-00000.arc.gz 192.0.2.7 20240102030405 text/plain ${first!.content.length}`);
  assert.equal(first!.content.toString(), `1 0 Sherlock Test\n${V1_FIELDS}\n`);
  assert.equal(second!.header.line, `http://example.com/1 192.0.2.1 20240102030401 text/html ${input(1).content.length}`);
  assert.equal(w.status, 200);
});

test('URLs are escaped, not rejected; empty URLs, oversized content and bad IPs are refused', async (t) => {
  const dir = scratchDir(t);
  const writer = await ArcWriter.open({ dir, prefix: 'esc', maxRecordSize: 1000 });
  const w = await writer.write({ ...input(1), url: 'http://example.com/a b/caf\u00e9?x=%20\n' });
  assert.equal(w.url, 'http://example.com/a%20b/caf%C3%A9?x=%20%0A');
  await assert.rejects(writer.write({ ...input(2), url: '' }), (err: unknown) => isSherlockError(err, 'SHERLOCK_BAD_URL'));
  await assert.rejects(writer.write({ ...input(3), content: Buffer.alloc(1001) }), (err: unknown) => isSherlockError(err, 'SHERLOCK_TOO_LARGE') && err.place.url === 'http://example.com/3');
  await assert.rejects(writer.write({ ...input(4), ip: 'a b' }), RangeError);
  const after = await writer.write(input(5));
  await writer.close();
  assert.equal(after.offset, w.offset + w.length, 'refused records leave nothing behind');
  assert.deepEqual([...readArc(join(dir, w.file))].map((r) => r.header.url), ['filedesc://' + w.file, w.url, 'http://example.com/5']);
  await assert.rejects(writer.write(input(6)), /closed/);
});

test('a record framed elsewhere with the writer\'s framing is stored as write() would store it; one framed otherwise is refused', async (t) => {
  const direct = scratchDir(t);
  const handed = scratchDir(t);
  const a = await ArcWriter.open({ dir: direct, prefix: 'f', clock: fixedClock, level: 1 });
  const b = await ArcWriter.open({ dir: handed, prefix: 'f', clock: fixedClock, level: 1 });
  // Through a structured clone, as from a parse worker: Buffers come back as plain Uint8Arrays.
  const framed = structuredClone(frameArcRecord(input(1), b.framing));
  const viaWrite = await a.write(input(1));
  const viaFramed = await b.writeFramed(framed);
  await assert.rejects(b.writeFramed({ ...framed, compressed: false }), RangeError);
  await a.close();
  await b.close();
  assert.deepEqual(viaFramed, viaWrite);
  assert.deepEqual(readFileSync(join(handed, viaFramed.file)), readFileSync(join(direct, viaWrite.file)));
  assertWrittenRecords(handed, [viaFramed], [input(1)]);
});

test('concurrent writes never interleave', async (t) => {
  const dir = scratchDir(t);
  const writer = await ArcWriter.open({ dir, prefix: 'conc', maxFileSize: 50_000 });
  const inputs = Array.from({ length: 60 }, (_, i) => input(i, Buffer.concat([response(`doc ${i}`), Buffer.alloc(i * 100, i)])));
  const written = await Promise.all(inputs.map((record) => writer.write(record)));
  await writer.close();
  assertWrittenRecords(dir, written, inputs);
  for (const name of arcFiles(dir)) assert.deepEqual(readAll(join(dir, name)).problems, []);
});

test('rolling: each file passes the limit by at most one record and starts with its own version block', async (t) => {
  const dir = scratchDir(t);
  const limit = 3000;
  const writer = await ArcWriter.open({ dir, prefix: 'roll', maxFileSize: limit, clock: fixedClock });
  const inputs = Array.from({ length: 30 }, (_, i) => input(i, Buffer.concat([response(`doc ${i}`), Buffer.from(Array.from({ length: 400 }, (_, j) => (i * 31 + j * 17) % 251))])));
  const written: ArcWritten[] = [];
  for (const record of inputs) written.push(await writer.write(record));
  await writer.close();
  const names = arcFiles(dir);
  assert.ok(names.length >= 4, names.join());
  assert.deepEqual(names, names.map((_, i) => `roll-20240102030405-${String(i).padStart(5, '0')}.arc.gz`));
  names.forEach((name, i) => {
    const records = [...readArc(join(dir, name))];
    const size = statSync(join(dir, name)).size;
    assert.equal(records[0]!.header.url, `filedesc://${name}`);
    assert.ok(records.length >= 2, 'no file without documents');
    const last = records.at(-1)!;
    assert.equal(last.offset + last.length, size);
    assert.ok(last.offset < limit, `${name}: the limit was checked before its last record`);
    if (i < names.length - 1) assert.ok(size >= limit, `${name} was rolled early at ${size}`);
  });
  assertWrittenRecords(dir, written, inputs);
});

test('roll() finishes the current file; the next record starts a new one', async (t) => {
  const dir = scratchDir(t);
  const writer = await ArcWriter.open({ dir, prefix: 'r', compress: false });
  const first = await writer.write(input(1));
  await writer.sync();
  assert.deepEqual(readdirSync(dir), [first.file + '.open']);
  await writer.roll();
  assert.deepEqual(readdirSync(dir), [first.file]);
  const second = await writer.write(input(2));
  await writer.close();
  assert.notEqual(second.file, first.file);
  assert.deepEqual(arcFiles(dir), [first.file, second.file].sort());
});

// ---------------------------------------------------------------- crashes

/** Log lines written while the test runs. */
function captureLog(t: TestContext): string[] {
  const lines: string[] = [];
  const previous = setLogSink((line) => lines.push(line));
  t.after(() => setLogSink(previous));
  return lines;
}

/** A writer in a child process, killed with SIGKILL after it wrote `count` records; returns what it reported written. */
async function writeAndKill(dir: string, count: number, compress: boolean): Promise<ArcWritten[]> {
  const script = `
    const { ArcWriter } = await import(process.env.ARC_WRITE_MODULE);
    const writer = await ArcWriter.open({ dir: process.env.ARC_DIR, prefix: 'crash', compress: ${compress} });
    for (let i = 0; i < ${count}; i++) {
      const content = Buffer.from('HTTP/1.1 200 OK\\r\\nContent-Type: text/plain\\r\\n\\r\\n' + 'body ' + i + ' '.repeat(i * 50));
      const written = await writer.write({ url: 'http://example.com/' + i, ip: '127.0.0.1', date: new Date(), contentType: 'text/plain', content });
      process.stdout.write(JSON.stringify(written) + '\\n');
    }
    process.stdout.write('done\\n');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { ARC_WRITE_MODULE: pathToFileURL(join(repoRoot, 'dist', 'common', 'archive', 'arc-write.js')).href, ARC_DIR: dir, PATH: process.env['PATH'] },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    out += chunk;
    if (out.endsWith('done\n')) child.kill('SIGKILL');
  });
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  assert.equal(signal, 'SIGKILL', `writer exited with ${code}`);
  return out
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as ArcWritten);
}

for (const compress of [true, false]) {
  test(`crash recovery (${compress ? '.arc.gz' : 'plain'}): kill -9, cut inside the last record, append garbage; reopening keeps the earlier records and finishes the file`, async (t) => {
    const dir = scratchDir(t);
    const written = await writeAndKill(dir, 5, compress);
    assert.equal(written.length, 5);
    const openName = `${written[0]!.file}.open`;
    assert.deepEqual(readdirSync(dir), [openName], 'a killed writer leaves its file open');
    const path = join(dir, openName);
    const last = written.at(-1)!;
    truncateSync(path, last.offset + Math.floor(last.length / 2));
    appendFileSync(path, Buffer.from([0x1f, 0x8b, 0x08, 0, 0x41, 0x42, 0x0a, 0x0a, 0x43]));

    const log = captureLog(t);
    const writer = await ArcWriter.open({ dir, prefix: 'crash', compress });
    assert.deepEqual(log, [`<5>arc: finished ARC file left open file=${openName} documents=4 cut=${Math.floor(last.length / 2) + 9}`]);
    assert.deepEqual(writer.recovered, [{ file: openName, documents: 4, cut: Math.floor(last.length / 2) + 9, removed: false }]);
    assert.deepEqual(readdirSync(dir), [written[0]!.file]);
    const finished = join(dir, written[0]!.file);
    assert.equal(statSync(finished).size, last.offset, 'cut exactly after the last complete record');
    const records = [...readArc(finished)];
    assert.deepEqual(records.slice(1).map((r) => [r.offset, r.length, r.header.url]), written.slice(0, 4).map((w) => [w.offset, w.length, w.url]));
    assert.deepEqual(readAll(finished).problems, []);

    // Writing goes on in a new file with the next serial.
    const next = await writer.write(input(9));
    await writer.close();
    assert.match(next.file, /^crash-\d{14}-00001\.arc/);
    assert.equal(readdirSync(dir).filter((name) => name.endsWith('.open')).length, 0);
  });
}

test('recovery removes a leftover holding no document, and leaves other prefixes and finished files alone', async (t) => {
  const dir = scratchDir(t);
  const writer = await ArcWriter.open({ dir, prefix: 'p', clock: fixedClock });
  const w = await writer.write(input(1));
  await writer.close();
  const block = versionBlock('p-20240102030405-00007.arc.gz', '0.0.0.0', '20240102030405', 'sherlock');
  writeFileSync(join(dir, 'p-20240102030405-00007.arc.gz.open'), gzipSync(Buffer.concat([block.line, block.content, Buffer.from('\n')])));
  writeFileSync(join(dir, 'p-20240102030405-00008.arc.gz.open'), Buffer.from([0x1f, 0x8b, 8]));
  writeFileSync(join(dir, 'other-20240102030405-00000.arc.gz.open'), 'not ours');
  const log = captureLog(t);
  const reopened = await ArcWriter.open({ dir, prefix: 'p', clock: fixedClock });
  assert.deepEqual(
    reopened.recovered.map((r) => [r.file, r.documents, r.removed]),
    [
      ['p-20240102030405-00007.arc.gz.open', 0, true],
      ['p-20240102030405-00008.arc.gz.open', 0, true],
    ],
  );
  assert.equal(log.length, 2);
  assert.match(log[0]!, /^<5>arc: removed ARC file left open without records file=p-20240102030405-00007\.arc\.gz\.open documents=0 cut=0$/);
  const next = await reopened.write(input(2));
  await reopened.close();
  assert.equal(next.file, 'p-20240102030405-00009.arc.gz');
  assert.deepEqual(readdirSync(dir).sort(), [w.file, 'other-20240102030405-00000.arc.gz.open', next.file].sort());
});

function inflatesUnchanged(member: Buffer, original: Buffer): boolean {
  try {
    return gunzipSync(member).equals(gunzipSync(original));
  } catch {
    return false;
  }
}

test('a flipped bit in a member is SHERLOCK_CORRUPT_GZIP at that member; lenient reading still gets the others', async (t) => {
  const dir = scratchDir(t);
  const writer = await ArcWriter.open({ dir, prefix: 'flip', clock: fixedClock });
  const written: ArcWritten[] = [];
  for (let i = 0; i < 4; i++) written.push(await writer.write(input(i, response(`<html>${'text '.repeat(20 + i)}</html>`))));
  await writer.close();
  const original = readFileSync(join(dir, written[0]!.file));
  const victim = written[1]!;
  const path = join(dir, 'flipped.arc.gz');
  fc.assert(
    fc.property(fc.integer({ min: 10, max: victim.length - 1 }), fc.integer({ min: 0, max: 7 }), (at, bit) => {
      const bytes = Buffer.from(original);
      bytes[victim.offset + at]! ^= 1 << bit;
      // The unused bits that pad the deflate stream's last byte carry nothing: such a flip changes no data.
      fc.pre(!inflatesUnchanged(bytes.subarray(victim.offset, victim.offset + victim.length), original.subarray(victim.offset, victim.offset + victim.length)));
      writeFileSync(path, bytes);
      assertError(readStrict(path).error, 'SHERLOCK_CORRUPT_GZIP', path, victim.offset);
      const { records, problems } = readAll(path);
      assert.deepEqual(where(problems.slice(0, 1)), [['SHERLOCK_CORRUPT_GZIP', victim.offset]]);
      assert.deepEqual(records.slice(1).map((r) => r.offset), [written[0]!.offset, written[2]!.offset, written[3]!.offset]);
    }),
    { numRuns: 100 },
  );
});
