import assert from 'node:assert/strict';
import test from 'node:test';
import { chooseCharset, decodeText } from '../../gatherer/charset.js';

/** 'Příliš žluťoučký kůň' in windows-1250, byte by byte from the code page table. */
const CZECH_1250 = Buffer.from('50f8ed6c699a209e6c759d6f75e86bfd206bf9f2', 'hex');
const CZECH = 'Příliš žluťoučký kůň';
/** 日本語 in Shift_JIS. */
const JAPANESE_SJIS = Buffer.from('93fa967b8cea', 'hex');

const ascii = (text: string) => Buffer.from(text, 'latin1');
const page = (head: string, body: Buffer) => Buffer.concat([ascii(`<!doctype html><html><head>${head}</head><body><p>`), body]);

test('a BOM beats the header and the meta, and decoding drops it', () => {
  const body = Buffer.concat([Buffer.of(0xef, 0xbb, 0xbf), ascii('<meta charset=windows-1250><p>'), Buffer.from(CZECH)]);
  assert.deepEqual(chooseCharset(body, 'html', 'iso-8859-2'), { encoding: 'utf-8', source: 'bom', problems: [] });
  assert.equal(decodeText(body, 'utf-8'), `<meta charset=windows-1250><p>${CZECH}`);
  const le = Buffer.concat([Buffer.of(0xff, 0xfe), Buffer.from('<p>ř', 'utf16le')]);
  assert.equal(chooseCharset(le, 'html').encoding, 'utf-16le');
  assert.equal(decodeText(le, 'utf-16le'), '<p>ř');
  const be = Buffer.from(Buffer.concat([Buffer.of(0xff, 0xfe), Buffer.from('ok', 'utf16le')]).swap16());
  assert.equal(chooseCharset(be, 'text').encoding, 'utf-16be');
  assert.equal(decodeText(be, 'utf-16be'), 'ok');
});

test('the Content-Type charset beats the meta, and labels are resolved by the Encoding Standard', () => {
  const body = page('<meta charset="Shift_JIS">', CZECH_1250);
  assert.deepEqual(chooseCharset(body, 'html', ' CP1250 '), { encoding: 'windows-1250', source: 'header', problems: [] });
  assert.equal(decodeText(body, 'windows-1250').endsWith(`<p>${CZECH}`), true);
  assert.equal(chooseCharset(body, 'html', 'latin1').encoding, 'windows-1252');
  assert.equal(chooseCharset(body, 'html', 'x-sjis').encoding, 'shift_jis');
});

test('a page declared only by <meta charset=Shift_JIS> is decoded as Shift_JIS', () => {
  const body = page('<meta charset=Shift_JIS><title>t</title>', JAPANESE_SJIS);
  const choice = chooseCharset(body, 'html');
  assert.deepEqual(choice, { encoding: 'shift_jis', source: 'prescan', problems: [] });
  assert.ok(decodeText(body, choice.encoding).endsWith('<p>日本語'));
});

test('the prescan reads http-equiv content-type and the XML declaration, and maps UTF-16 to UTF-8', () => {
  const equiv = page('<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=windows-1250">', CZECH_1250);
  assert.deepEqual(chooseCharset(equiv, 'html'), { encoding: 'windows-1250', source: 'prescan', problems: [] });
  const xml = Buffer.concat([ascii('<?xml version="1.0" encoding="ISO-8859-2"?><html><p>'), Buffer.of(0xb9)]);
  assert.equal(chooseCharset(xml, 'xhtml').encoding, 'iso-8859-2');
  assert.equal(decodeText(xml, 'iso-8859-2').endsWith('š'), true);
  assert.equal(chooseCharset(page('<meta charset=utf-16>', Buffer.alloc(0)), 'html').encoding, 'utf-8');
});

test('unknown labels are ignored and said so; the next step decides', () => {
  const body = page('<meta charset=Shift_JIS>', JAPANESE_SJIS);
  assert.deepEqual(chooseCharset(body, 'html', 'klingon'), {
    encoding: 'shift_jis',
    source: 'prescan',
    problems: ['charset "klingon" in Content-Type is not a known encoding; ignored'],
  });
  // iso-2022-kr is the "replacement" encoding, which TextDecoder does not offer.
  const none = chooseCharset(page('<meta charset=nonsense>', CZECH_1250), 'html', 'iso-2022-kr');
  assert.equal(none.encoding, 'windows-1252');
  assert.equal(none.source, 'default');
  assert.equal(none.problems.length, 1);
});

test('without a declaration HTML is windows-1252, XHTML and text are UTF-8', () => {
  const body = page('<title>x</title>', Buffer.from('café'));
  assert.deepEqual(chooseCharset(body, 'html'), { encoding: 'windows-1252', source: 'default', problems: [] });
  assert.equal(chooseCharset(body, 'xhtml').encoding, 'utf-8');
  assert.equal(chooseCharset(body, 'text').encoding, 'utf-8');
  // text/plain is not prescanned, and the prescan stops after 1024 bytes.
  assert.equal(chooseCharset(ascii('<meta charset=windows-1250>'), 'text').encoding, 'utf-8');
  assert.equal(chooseCharset(ascii(`<!--${' '.repeat(1030)}--><meta charset=windows-1250>`), 'html').source, 'default');
});

test('bytes invalid in the encoding become U+FFFD, not an error', () => {
  assert.equal(decodeText(Buffer.of(0x61, 0xff, 0x62), 'utf-8'), 'a\uFFFDb');
  assert.throws(() => decodeText(Buffer.of(0x61), 'klingon'), RangeError);
});
