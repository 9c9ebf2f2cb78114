/**
 * LexRaw, LexByFreq, LexOrder and the Lexicon (common/index/lexicon.ts): word
 * lists read back as written, each file's order enforced on both sides, the
 * Lexicon's lookups exact and accent-insensitive, and damage refused.
 */

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import {
  LEXBYFREQ_FORMAT,
  LEXICON_FORMAT,
  LEXORDER_FORMAT,
  LEXRAW_FORMAT,
  Lexicon,
  lexiconOrder,
  readLexList,
  writeLexicon,
  writeLexList,
  type LexiconEntry,
  type LexWord,
} from '../../../common/index/lexicon.js';
import { WORDINDEX_ENTRY_HEAD } from '../../../common/index/chains.js';
import { INDEX_HEADER_SIZE } from '../../../common/index/file.js';
import { assertCorrupt, assertDamageRefused, assertOldVersionRefused, reframe } from '../../helpers/index-files.js';
import { scratchDir } from '../../helpers/paths.js';
import { languageCode, languageOf } from '../../../common/language/codes.js';
import { indexStem, stemOf } from '../../../common/language/stem.js';
import { plainForm } from '../../../common/words.js';

const wordArbitrary = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).filter((w) => Buffer.byteLength(w) <= 255);
const lexWordArbitrary: fc.Arbitrary<LexWord> = fc.record(
  { id: fc.nat({ max: 0xffffffff }).filter((id) => (id & 7) < 6), frequency: fc.nat({ max: 0xffffffff }), context: fc.nat(0xffff), word: wordArbitrary },
  { noNullPrototype: true },
);

test('LexRaw, LexByFreq and LexOrder read back as written', (t) => {
  const dir = scratchDir(t);
  fc.assert(
    fc.property(fc.array(lexWordArbitrary, { maxLength: 30 }), (words) => {
      writeLexList(join(dir, 'LexRaw'), LEXRAW_FORMAT, words);
      assert.deepEqual(readLexList(join(dir, 'LexRaw'), LEXRAW_FORMAT), words);
      const byFreq = [...words].sort((a, b) => b.frequency - a.frequency);
      writeLexList(join(dir, 'LexByFreq'), LEXBYFREQ_FORMAT, byFreq);
      assert.deepEqual(readLexList(join(dir, 'LexByFreq'), LEXBYFREQ_FORMAT), byFreq);
      const ordered = words.map((w, i) => ({ ...w, id: ((i + 1) << 3) | (w.id & 7) }));
      writeLexList(join(dir, 'LexOrder'), LEXORDER_FORMAT, ordered);
      assert.deepEqual(readLexList(join(dir, 'LexOrder'), LEXORDER_FORMAT), ordered);
    }),
    { numRuns: 40 },
  );
});

test('LexOrder ids run 8, 16, 24 …; LexByFreq falls; both refused otherwise', (t) => {
  const dir = scratchDir(t);
  const w = (id: number, frequency: number, word: string): LexWord => ({ id, frequency, context: 0, word });
  assert.throws(() => writeLexList(join(dir, 'o'), LEXORDER_FORMAT, [w(8, 1, 'a'), w(24, 1, 'b')]), /id 24 at record 1/);
  assert.throws(() => writeLexList(join(dir, 'f'), LEXBYFREQ_FORMAT, [w(8, 1, 'a'), w(16, 2, 'b')]), /frequency 2 after 1/);
  assert.throws(() => writeLexList(join(dir, 'r'), LEXRAW_FORMAT, [w(6, 1, 'a')]), /undefined class 6/);
  assert.throws(() => writeLexList(join(dir, 'r'), LEXRAW_FORMAT, [w(8, 1, '')]), /1–255 bytes/);
  assert.throws(() => writeLexList(join(dir, 'r'), LEXRAW_FORMAT, [w(8, 1, 'x'.repeat(256))]), /1–255 bytes/);
  // The same bytes under another magic are refused for that file's order.
  writeLexList(join(dir, 'raw'), LEXRAW_FORMAT, [w(8, 1, 'a'), w(24, 5, 'b')]);
  const raw = readFileSync(join(dir, 'raw'));
  const asOrder = Buffer.from(raw);
  asOrder.write('SHERLOCK-LEXORD\0', 0, 'latin1');
  const body = raw.subarray(64, raw.length - 8);
  writeFileSync(join(dir, 'order'), reframe(asOrder, LEXORDER_FORMAT, body));
  assertCorrupt(() => readLexList(join(dir, 'order'), LEXORDER_FORMAT), join(dir, 'order'), 64 + 12, /LexOrder ids run 8, 16, 24/);
});

test('lexicon order: length of the accent-free word, then without accents, then with', () => {
  const words = ['zz', 'b', 'é', 'e', 'ab', 'éa', 'ea', 'eb', 'aaa', 'x\u{1f600}', 'x\uffff'];
  assert.deepEqual([...words].sort(lexiconOrder), ['b', 'e', 'é', 'ab', 'ea', 'éa', 'eb', 'x\uffff', 'x\u{1f600}', 'zz', 'aaa']);
});

/** Chain sizes at the varint's edges, and words without chains (size 0). */
const SIZES = [0, 1, 127, 128, 2047, 2048, 0, 65_535, 65_536, 2 ** 31 - 1];

/** Lexicon entries of `words` in order, ids and ref_pos as the WordIndex stage gives them (ref_pos: the entries before, in order). */
function entries(words: readonly string[]): LexiconEntry[] {
  let refPos = 0;
  return [...words].sort(lexiconOrder).map((word, i) => {
    const chainSize = SIZES[i % SIZES.length]!;
    // Every other word stemmed in English, the rest in a language its letters may give (indexStem).
    const { language, stem } = indexStem(word, plainForm(word), i % 2 === 0 ? 'en' : 'und');
    const entry = { id: ((i + 1) << 3) | (i % 3), refPos: chainSize === 0 ? 0 : refPos, chainSize, frequency: i % 256, context: i, word, stemLanguage: language, stem };
    if (chainSize > 0) refPos += WORDINDEX_ENTRY_HEAD + chainSize;
    return entry;
  });
}

test('the Lexicon reads back as written and finds words exactly or up to accents', (t) => {
  const file = join(scratchDir(t), 'Lexicon');
  const list = entries(['resume', 'résumé', 'résume', 'cafe', 'café', 'caff', 'naïve', 'a', 'über']);
  writeLexicon(file, list);
  const lexicon = Lexicon.open(file);
  assert.deepEqual(lexicon.all(), list);
  assert.equal(lexicon.lookup('résumé')?.word, 'résumé');
  assert.equal(lexicon.lookup('resumé'), undefined);
  assert.deepEqual(lexicon.variants('resume').map((e) => e.word), ['resume', 'résume', 'résumé']);
  assert.deepEqual(lexicon.variants('CAFE'.toLowerCase()).map((e) => e.word), ['cafe', 'café']);
  assert.deepEqual(lexicon.variants('zzz'), []);
  assert.equal(lexicon.lookup('uber'), undefined);
  assert.equal(lexicon.variants('uber')[0]?.word, 'über');
});

test('the Lexicon finds the words whose plain forms start with a prefix, of every length, and counts them', (t) => {
  const file = join(scratchDir(t), 'Lexicon');
  const list = entries(['café', 'cafe', 'cafés', 'caff', 'ca', 'cab', 'cat', 'cafeteria', 'décafé', 'über', 'ca𝔸fe']);
  writeLexicon(file, list);
  const lexicon = Lexicon.open(file);
  assert.equal(lexicon.count, list.length);
  const prefixed = (prefix: string) => lexicon.withPrefix(prefix).map((i) => lexicon.word(i));
  assert.deepEqual(prefixed('cafe').sort(), ['cafe', 'cafeteria', 'café', 'cafés'].sort());
  assert.deepEqual(prefixed('x'), []);
  // Every prefix of every plain form (an astral letter's among them) finds what a scan of the list does.
  for (const entry of list) {
    const chars = [...plainForm(entry.word)];
    for (let n = 1; n <= chars.length; n++) {
      const prefix = chars.slice(0, n).join('');
      assert.deepEqual(prefixed(prefix), list.map((e) => e.word).filter((w) => plainForm(w).startsWith(prefix)), prefix);
    }
  }
  assert.deepEqual(prefixed('uber'), ['über']);
  // Entries by number: the columns agree with the entries.
  list.forEach((entry, i) => {
    assert.equal(lexicon.word(i), entry.word);
    assert.equal(lexicon.plain(i), plainForm(entry.word));
    assert.equal(lexicon.frequencies[i], entry.frequency);
    assert.equal(lexicon.chainSize(i), entry.chainSize);
  });
  assert.deepEqual(lexicon.lengthRange(3), [list.findIndex((e) => [...plainForm(e.word)].length === 3), list.findLastIndex((e) => [...plainForm(e.word)].length === 3) + 1]);
});

test('words of one stem in one language are a class, found by the stem of any form', (t) => {
  const file = join(scratchDir(t), 'Lexicon');
  const stemmed = (word: string, lang: string): LexiconEntry => ({ id: 0, refPos: 0, chainSize: 0, frequency: 1, context: 0, word, ...toEntry(indexStem(word, plainForm(word), lang)) });
  const list = [stemmed('bridge', 'en'), stemmed('bridges', 'en'), stemmed('bridging', 'en'), stemmed('bride', 'en'), stemmed('koláče', 'en'), stemmed('koláčů', 'cs'), stemmed('kolace', 'en'), stemmed('42', 'en')]
    .sort((a, b) => lexiconOrder(a.word, b.word))
    .map((entry, i) => ({ ...entry, id: 8 * (i + 1) }));
  writeLexicon(file, list);
  const lexicon = Lexicon.open(file);
  assert.deepEqual(lexicon.all(), list);
  const en = languageCode('en');
  const cs = languageCode('cs');
  const words = (language: number, query: string) => lexicon.stemClass(language, stemOf(query, languageOf(language))).map((e) => e.word);
  assert.deepEqual(words(en, 'bridged'), ['bridge', 'bridges', 'bridging']);
  assert.deepEqual(words(en, 'brides'), ['bride']);
  // "koláče" in an English page is Czech by its letters; "kolace" there is English ("kolac", another class).
  assert.deepEqual(words(cs, 'kolacu'), ['koláče', 'koláčů']);
  assert.deepEqual(words(cs, 'koláčem'), ['koláče', 'koláčů']);
  assert.deepEqual(words(en, 'kolace'), ['kolace']);
  assert.deepEqual(words(cs, 'bridges'), []);
  assert.deepEqual(lexicon.stemLanguages, [en, cs].sort((a, b) => a - b));
  assert.equal(lexicon.lookup('42')?.stemLanguage, 0);
});

function toEntry(stem: { language: number; stem: string }): Pick<LexiconEntry, 'stemLanguage' | 'stem'> {
  return { stemLanguage: stem.language, stem: stem.stem };
}

test('any set of words round-trips through the Lexicon and each is found', (t) => {
  const dir = scratchDir(t);
  fc.assert(
    fc.property(fc.uniqueArray(wordArbitrary, { maxLength: 40 }), (words) => {
      const file = join(dir, 'Lexicon');
      const list = entries(words);
      writeLexicon(file, list);
      const lexicon = Lexicon.open(file);
      assert.deepEqual(lexicon.all(), list);
      for (const entry of list) assert.deepEqual(lexicon.lookup(entry.word), entry);
    }),
    { numRuns: 40 },
  );
});

test('the Lexicon writer refuses words out of order or twice', (t) => {
  const file = join(scratchDir(t), 'Lexicon');
  const [a, b] = entries(['a', 'b']);
  assert.throws(() => writeLexicon(file, [{ ...b!, id: 8 }, { ...a!, id: 16 }]), /out of lexicon order/);
  assert.throws(() => writeLexicon(file, [a!, a!]), /out of lexicon order/);
  assert.throws(() => writeLexicon(file, [{ ...a!, frequency: 256 }]), /frequency 256/);
  assert.throws(() => writeLexicon(file, [{ ...a!, id: 16 }]), /id 16 at record 0: Lexicon ids run 8, 16, 24/);
  assert.throws(() => writeLexicon(file, [a!, { ...b!, refPos: 3 }]), /ref_pos 3 of "b": the WordIndex entries follow in Lexicon order, 0 expected/);
  assert.throws(() => writeLexicon(file, [{ ...a!, chainSize: 5 }, b!]), /ref_pos 0 of "b": the WordIndex entries follow in Lexicon order, 13 expected/);
});

test('a Lexicon record is the class byte, the chain size as a varint, frequency, context, length, the word and its stem (format 3: ref_pos and id derived)', (t) => {
  const file = join(scratchDir(t), 'Lexicon');
  writeLexicon(file, [
    { id: 8, refPos: 0, chainSize: 200, frequency: 9, context: 0x0102, word: 'ab', stemLanguage: 0, stem: 'ab' },
    { id: 17, refPos: 208, chainSize: 3, frequency: 1, context: 0, word: 'abc', stemLanguage: 1, stem: 'abi' },
  ]);
  const body = readFileSync(file).subarray(INDEX_HEADER_SIZE, -8);
  // The second stem keeps 2 characters of "abc" and adds "i".
  assert.deepEqual([...body], [0, 0xc3, 0x88, 9, 0x02, 0x01, 2, 0x61, 0x62, 0, 1, 3, 1, 0, 0, 3, 0x61, 0x62, 0x63, 1, 2, 1, 0x69]);
  assert.deepEqual(Lexicon.open(file).all()[1], { id: 17, refPos: 208, chainSize: 3, frequency: 1, context: 0, word: 'abc', stemLanguage: 1, stem: 'abi' });
});

test('a format 1 or 2 Lexicon is refused naming the file; a bad chain size varint or class byte names its offset', (t) => {
  const dir = scratchDir(t);
  const file = join(dir, 'Lexicon');
  writeLexicon(file, entries(['ab', 'é']));
  assertOldVersionRefused(file, join(dir, 'old'), LEXICON_FORMAT, 1, Lexicon.open);
  assertOldVersionRefused(file, join(dir, 'old2'), LEXICON_FORMAT, 2, Lexicon.open);
  const good = readFileSync(file);
  const body = Buffer.from(good.subarray(INDEX_HEADER_SIZE, -8));
  // 'é' (one character) comes first: its record starts at 0, its size varint at 1.
  body[1] = 0x80;
  writeFileSync(join(dir, 'varint'), reframe(good, LEXICON_FORMAT, body));
  assertCorrupt(() => Lexicon.open(join(dir, 'varint')), join(dir, 'varint'), INDEX_HEADER_SIZE + 1, /chain size: length cannot start with byte 0x80/);
  body[1] = 0;
  body[0] = 9;
  writeFileSync(join(dir, 'class'), reframe(good, LEXICON_FORMAT, body));
  assertCorrupt(() => Lexicon.open(join(dir, 'class')), join(dir, 'class'), INDEX_HEADER_SIZE, /undefined word class 9/);
});

test('damaged lexicon files are refused: cut anywhere, bad magic, newer version, flipped bits', (t) => {
  const dir = scratchDir(t);
  writeLexicon(join(dir, 'Lexicon'), entries(['ab', 'é']));
  assertDamageRefused(join(dir, 'Lexicon'), join(dir, 'damaged'), LEXICON_FORMAT, Lexicon.open);
  writeLexList(join(dir, 'LexOrder'), LEXORDER_FORMAT, [{ id: 8, frequency: 3, context: 1, word: 'ab' }]);
  assertDamageRefused(join(dir, 'LexOrder'), join(dir, 'damaged'), LEXORDER_FORMAT, (f) => readLexList(f, LEXORDER_FORMAT));
});
