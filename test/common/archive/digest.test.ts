import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import test from 'node:test';
import fc from 'fast-check';
import { base32, EMPTY_SHA1_BASE32, httpPayloadOffset, httpStatus, payloadDigest, sha1Base32 } from '../../../common/archive/digest.js';
import { testdata } from '../../helpers/paths.js';

test('base32 follows the RFC 4648 §10 test vectors', () => {
  const vectors: Array<[string, string]> = [
    ['', ''],
    ['f', 'MY======'],
    ['fo', 'MZXQ===='],
    ['foo', 'MZXW6==='],
    ['foob', 'MZXW6YQ='],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI======'],
  ];
  for (const [input, expected] of vectors) assert.equal(base32(Buffer.from(input)), expected, input);
});

test('base32 of a SHA-1 is 32 upper-case characters without padding, and decodes back', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      const digest = createHash('sha1').update(bytes).digest();
      const text = sha1Base32(bytes);
      assert.match(text, /^[A-Z2-7]{32}$/);
      // Decode by hand: 5 bits per character, most significant first.
      let bits = '';
      for (const c of text) bits += 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'.indexOf(c).toString(2).padStart(5, '0');
      assert.deepEqual(Buffer.from(bits.match(/.{8}/g)!.map((b) => parseInt(b, 2))), digest);
    }),
  );
});

test('the empty input has the digest every empty-payload CDX line carries', () => {
  assert.equal(sha1Base32(Buffer.alloc(0)), EMPTY_SHA1_BASE32);
  assert.equal(EMPTY_SHA1_BASE32, '3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ');
});

test('the status comes from an HTTP status line, IA’s bare "HTTP NNN" included', () => {
  const status = (text: string) => httpStatus(Buffer.from(text, 'latin1'));
  assert.equal(status('HTTP/1.1 200 OK\r\n'), 200);
  assert.equal(status('HTTP/1.0 404 Not Found\n'), 404);
  assert.equal(status('HTTP/2 301\r\n'), 301);
  assert.equal(status('HTTP 502 Bad Gateway\n\n'), 502);
  assert.equal(status('HTTP/1.0 400 \xea\xa5\r\n'), 400);
  assert.equal(status('HTTP/1.1 200'), 200);
  for (const text of ['', 'SSH-2.0-OpenSSH_5.3p1\r\n', '20080430204825\nwww.archive.org.', 'HTTP/1.1 2000 OK', 'HTTP/1.1 OK', ' HTTP/1.1 200 OK', 'http/1.1 200 OK']) {
    assert.equal(status(text), undefined, JSON.stringify(text));
  }
});

test('the payload starts after the first CRLFCRLF or LFLF, whichever comes first', () => {
  const at = (text: string) => httpPayloadOffset(Buffer.from(text, 'latin1'));
  assert.equal(at('HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody\n\nmore'), 25);
  assert.equal(at('HTTP/1.1 200 OK\nA: b\n\nbody\r\n\r\n'), 22);
  assert.equal(at('HTTP/1.1 200 OK\nA: b\n\r\n\r\nbody'), 25);
  assert.equal(at('HTTP/1.1 200 OK\r\nA: b\r\n'), 23, 'no empty line: empty payload');
});

test('payload digests: body only for HTTP, whole content otherwise, empty body gives the empty digest', () => {
  const digest = (text: string) => payloadDigest(Buffer.from(text, 'latin1'));
  assert.equal(digest('HTTP/1.1 302 Found\r\nLocation: /\r\n\r\n'), EMPTY_SHA1_BASE32);
  assert.equal(digest('HTTP/1.1 200 OK\r\n\r\nhello'), sha1Base32(Buffer.from('hello')));
  assert.equal(digest('HTTP/1.1 200 OK\r\nA: b\r\n'), EMPTY_SHA1_BASE32);
  // cdx-writer/empty_record.arc.gz: IA says XKFLL… here; spec §4 asks for the empty-payload digest.
  assert.equal(digest('HTTP/1.1 410 Gone\r\r\n\r\n'), EMPTY_SHA1_BASE32);
  assert.equal(digest('SSH-2.0-OpenSSH\r\n'), sha1Base32(Buffer.from('SSH-2.0-OpenSSH\r\n')));
  assert.equal(digest(''), EMPTY_SHA1_BASE32);
});

test('the payload digest of pywb example.arc’s record is the one pywb and IA index', () => {
  const file = readFileSync(testdata('arc', 'pywb', 'example.arc'));
  const content = file.subarray(151 + 65, 151 + 65 + 1591);
  assert.equal(payloadDigest(content), 'B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A');
  assert.equal(content.length - httpPayloadOffset(content), 1270);
});

test('httpStatus reads the status line byte by byte as the regular expression of spec §1.5 reads its first 32 bytes', () => {
  const STATUS_LINE = /^HTTP(?:\/\d+(?:\.\d+)?)? +(\d{3})(?=[ \t\r\n]|$)/;
  const reference = (bytes: Buffer): number | undefined => {
    const match = STATUS_LINE.exec(bytes.toString('latin1', 0, 32));
    return match === null ? undefined : Number(match[1]);
  };
  const piece = fc.constantFrom('HTTP', 'HTTP/', '/', '1', '1.1', '.', '2', ' ', '  ', '200', '404', '0071', '\t', '\r', '\n', 'x', 'OK', 'H', 'http');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), fc.boolean(), (pieces, longBody) => {
      const text = pieces.join('') + (longBody ? ' OK\r\n' + 'y'.repeat(40) : '');
      const bytes = Buffer.from(text, 'latin1');
      assert.equal(httpStatus(bytes), reference(bytes), JSON.stringify(text));
    }),
    { numRuns: 20_000 },
  );
  // A status whose digits end at byte 32 counts, as `$` matches at the end of the 32 bytes.
  const padded = Buffer.from('HTTP/1.1' + ' '.repeat(21) + '200xyz', 'latin1');
  assert.equal(padded.indexOf('200'), 29);
  assert.equal(httpStatus(padded), 200);
});
