import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import test from 'node:test';
import fc from 'fast-check';
import { surt } from '../../common/surt.js';
import { testdata } from '../helpers/paths.js';

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
