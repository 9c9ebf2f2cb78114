import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { readArc } from '../../../common/archive/arc-read.js';
import { normalizeArcDate } from '../../../common/archive/arc.js';
import { cdxFields, parseCdxLine } from '../../../common/archive/cdx.js';
import { sha1Base32 } from '../../../common/archive/digest.js';
import { captureRecord, formatWarcRecord, NOT_MODIFIED_PROFILE, revisitRecord, warcDate, warcinfoRecord, warcRecordId } from '../../../common/archive/warc.js';
import { scratchDir } from '../../helpers/paths.js';
import { warcioBin, writeSampleArc } from '../../helpers/sample-arc.js';

const run = promisify(execFile);

test('a record is the version line, fields, Content-Length, an empty line, the block and CRLF CRLF', () => {
  const bytes = formatWarcRecord([{ name: 'WARC-Type', value: 'resource' }], Buffer.from('abc'));
  assert.equal(bytes.toString(), 'WARC/1.0\r\nWARC-Type: resource\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n');
  assert.throws(() => formatWarcRecord([{ name: 'X', value: 'a\r\nb' }], Buffer.alloc(0)), RangeError);
  assert.equal(warcDate('20240301100005'), '2024-03-01T10:00:05Z');
  // pywb's indexer stops at a day 00; we never write one.
  for (const bad of ['20151200000000', '20150231000000', '20151301000000', '2015120100000', 'a0d1fdddf3165d']) assert.throws(() => warcDate(bad), RangeError, bad);
  assert.match(warcRecordId('a'), /^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$/);
  assert.notEqual(warcRecordId('a'), warcRecordId('b'));
});

test('each record is one gzip member; a response keeps the ARC content as its block, with both digests', () => {
  const content = Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello');
  const member = captureRecord({ name: 'x:1', url: 'http://a/b c', ip: '10.0.0.1', date: '20240301100005', mime: 'text/plain', content, warcinfoId: '<urn:uuid:1>' });
  const text = gunzipSync(member).toString('latin1');
  assert.match(text, /^WARC\/1\.0\r\nWARC-Type: response\r\n/);
  assert.match(text, /\r\nWARC-Target-URI: http:\/\/a\/b%20c\r\n/);
  assert.match(text, /\r\nWARC-IP-Address: 10\.0\.0\.1\r\n/);
  assert.ok(text.includes(`\r\nWARC-Payload-Digest: sha1:${sha1Base32(Buffer.from('hello'))}\r\nWARC-Block-Digest: sha1:${sha1Base32(content)}\r\n`));
  assert.match(text, /\r\nContent-Type: application\/http; msgtype=response\r\nContent-Length: 50\r\n\r\nHTTP\/1\.1 200 OK/);
  assert.ok(text.endsWith('hello\r\n\r\n'));
  const dns = gunzipSync(captureRecord({ name: 'x:2', url: 'dns:a', ip: '10.0.0.1', date: '20240301100005', mime: 'text/dns', content: Buffer.from('20240301\na. 1 IN A 1.2.3.4\n'), warcinfoId: '<urn:uuid:1>' })).toString();
  assert.match(dns, /WARC-Type: resource\r\n[^]*Content-Type: text\/dns\r\n/);
});

test('warcio reads our WARC of an ARC written by the gatherer’s writer: same URLs, digests and statuses as our CDX of the ARC', async (t) => {
  const dir = scratchDir(t);
  const [arcName] = await writeSampleArc(dir);
  const arcPath = join(dir, arcName!);
  const parts: Buffer[] = [];
  const ours: string[] = [];
  let id = '';
  for (const record of readArc(arcPath)) {
    const date = normalizeArcDate(record.header.date)!;
    if (id === '') {
      const info = warcinfoRecord({ filename: 'sample.warc.gz', date, info: [{ name: 'software', value: 'sherlock test' }] });
      id = info.id;
      parts.push(info.bytes);
      continue;
    }
    const { url, ip, mime } = record.header;
    parts.push(captureRecord({ name: String(record.offset), url, ip, date, mime, content: record.content, warcinfoId: id }));
    const f = cdxFields(record, arcName!)!;
    ours.push(`${f.original} ${f.digest} ${f.status}`);
  }
  const warc = join(dir, 'sample.warc.gz');
  writeFileSync(warc, Buffer.concat(parts));
  const { stdout } = await run(process.execPath, [warcioBin, 'cdx-index', '--format', 'cdx', warc]);
  const theirs = stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => parseCdxLine(l)!)
    .map((f) => `${f.original} ${f.digest} ${f.status}`);
  assert.equal(theirs.length, 6);
  assert.deepEqual(theirs, ours);
});

test('a 304 is a server-not-modified revisit naming its original, with an empty block; without one it names its own URL only', async (t) => {
  const input = { name: 'x:9', url: 'http://a/b\r c', ip: '10.0.0.1', date: '20240401100000', warcinfoId: '<urn:uuid:1>' };
  const original = { uri: 'http://a/b%20c', date: '20240301100000', digest: sha1Base32(Buffer.from('hello')), id: warcRecordId('x:1') };
  const text = gunzipSync(revisitRecord(input, original)).toString('latin1');
  assert.match(text, /^WARC\/1\.0\r\nWARC-Type: revisit\r\n/);
  for (const field of [
    'WARC-Target-URI: http://a/b%20c',
    `WARC-Profile: ${NOT_MODIFIED_PROFILE}`,
    `WARC-Refers-To: ${original.id}`,
    'WARC-Refers-To-Target-URI: http://a/b%20c',
    'WARC-Refers-To-Date: 2024-03-01T10:00:00Z',
    `WARC-Payload-Digest: sha1:${original.digest}`,
    'Content-Length: 0',
  ]) {
    assert.ok(text.includes(`\r\n${field}\r\n`), field);
  }
  assert.ok(text.endsWith('\r\n\r\n\r\n\r\n'));
  const orphan = gunzipSync(revisitRecord(input, undefined)).toString('latin1');
  assert.ok(orphan.includes('\r\nWARC-Refers-To-Target-URI: http://a/b%20c\r\n'));
  assert.doesNotMatch(orphan, /WARC-Refers-To-Date|WARC-Payload-Digest|WARC-Refers-To:/);
  // warcio indexes it as pywb does: a warc/revisit line with the original's digest.
  const warc = join(scratchDir(t), 'r.warc.gz');
  writeFileSync(warc, revisitRecord(input, original));
  const { stdout } = await run(process.execPath, [warcioBin, 'cdx-index', '--format', 'cdx', warc]);
  const f = parseCdxLine(stdout.trim())!;
  assert.deepEqual([f.timestamp, f.mime, f.digest], ['20240401100000', 'warc/revisit', original.digest]);
});
