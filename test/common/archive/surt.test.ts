import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import test from 'node:test';
import fc from 'fast-check';
import { generalSurt, plainSurt, surt } from '../../../common/archive/surt.js';
import { testdata } from '../../helpers/paths.js';

/** Rows of surt-cases.tsv as byte strings: input, the IA library's key, warcio.js's key. */
function cases(): Array<{ input: string; expected: string; warciojs: string }> {
  return readFileSync(testdata('arc', 'surt-cases.tsv'), 'latin1')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [input, expected, warciojs] = line.split('\t');
      return { input: input!, expected: expected!, warciojs: warciojs! };
    });
}

test('every row of surt-cases.tsv gets the key of the Internet Archive’s surt library', () => {
  const rows = cases();
  assert.equal(rows.length, 128);
  for (const { input, expected } of rows) assert.equal(surt(input), expected, JSON.stringify(input));
});

test('the 44 rows where warcio.js’s getSurt disagrees are the library’s, not warcio.js’s', () => {
  const disagreeing = cases().filter((c) => c.warciojs !== c.expected);
  assert.equal(disagreeing.length, 44);
  for (const { input, warciojs } of disagreeing) assert.notEqual(surt(input), warciojs, JSON.stringify(input));
});

test('rules worth a test each: http and https share a key, escapes are lower-case, the %26 bug is kept', () => {
  assert.equal(surt('https://www.example.com/a'), surt('http://example.com/a'));
  assert.equal(surt('http://example.com/%C3%A9'), 'com,example)/%c3%a9');
  assert.equal(surt('http://example.com/script?type=a+b+%26+c&grape=wine'), 'com,example)/script?+c&grape=wine&type=a+b+');
  assert.equal(surt('http://example.com/x?b&a=1&a'), 'com,example)/x?a&a=1&b');
  assert.equal(surt('http://0300.0250.0.1/'), '1,0,168,192)/');
  assert.equal(surt('http://0x7f.1/'), '1,0x7f)/', 'hex is not a form the library converts');
});

test('a URL the library refuses (a port that is not a number) has no key; the caller keys it by the URL', () => {
  assert.equal(surt("http://JavaScript:Wtop('www.pick2hand.com/index2.html')"), undefined);
  assert.equal(surt('http://mhtml:d.hatena.ne.jp/images/top/greenpower_logo.gif'), undefined);
  assert.equal(surt('http://example.com:99999/'), undefined);
});

test('keys are idempotent for http URLs and never hold SP, CR, LF or a raw byte ≥ 0x80', () => {
  const byteString = fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('latin1'));
  fc.assert(
    fc.property(fc.constantFrom('http://', 'https://', ''), fc.domain(), byteString, (scheme, host, rest) => {
      const key = surt(`${scheme}${host}/${rest}`);
      if (key === undefined) return;
      assert.doesNotMatch(key, /[\x00-\x20\x7f-\xff]/);
    }),
  );
});

test('the plain-URL shortcut gives the general path’s key wherever it applies', () => {
  // Pieces near the shortcut's edges: case, www, numeric hosts, dot and empty segments, session ids, escapes, ports.
  const piece = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('a', 'Z', '0', '9', '-', '_', '.', '/', '~', '!', "'", '*', '+', ',', ':', ';', '=', '@', '$', '&', 'x=1', 'a=', 'b') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        ...['..', '//', '/./', '/../', '?', '%41', '%', '#', ' ', '(', ')', '(S(abcdefghijklmnopqrstuvwx))/', 'x.aspx', 'www.', 'www2.', 'WWW.'],
        ...['sid=', 'SID=0123456789abcdef0123456789abcdef', 'jsessionid=0123456789ABCDEF0123456789ABCDEF', 'ASPSESSIONIDabcdefgh=abcdefghijklmnopqrstuvwx'],
        ...['cfid=1&cftoken=2', '0x7f', '127.0.0.1', '012', ':80', ':8080', 'user@'],
      ),
    },
  );
  const text = fc.array(piece, { maxLength: 8 }).map((parts) => parts.join(''));
  const url = fc.tuple(fc.constantFrom('http://', 'https://', 'http://', 'https://', 'HTTP://', 'ftp://'), fc.option(text, { freq: 4 }), fc.domain(), text, fc.option(text)).map(
    ([scheme, before, host, path, query]) => `${scheme}${before ?? ''}${host}/${path}${query === null ? '' : `?${query}`}`,
  );
  let applied = 0;
  fc.assert(
    fc.property(url, (u) => {
      const plain = plainSurt(u);
      if (plain === undefined) return;
      applied += 1;
      assert.equal(plain, generalSurt(u), u);
    }),
    { numRuns: 20_000 },
  );
  // The generator must reach the shortcut, or the property says nothing.
  assert.ok(applied > 1000, `shortcut taken ${applied} times`);
  for (const [u, key] of [
    ['http://www.Example.com/A/B/?Z=1&a=2', 'com,example)/a/b?a=2&z=1'],
    ['https://site7.example.de/data/file-9.html', 'de,example,site7)/data/file-9.html'],
    ['http://host/', 'host)/'],
  ]) assert.equal(plainSurt(u!), key);
  for (const u of ['http://127.0.0.1/', 'http://host/?jsessionid=0123456789ABCDEF0123456789ABCDEF', 'http://host/a/../b', 'http://host//a', 'http://host/?sid=1', 'http://host:80/', 'http://host/%41', 'http://host']) assert.equal(plainSurt(u), undefined, u);
});
