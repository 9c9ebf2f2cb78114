/**
 * The chewer cuts every text through common/words.ts cutWords, a table-driven
 * scanner; the rule it must keep is the regular-expression definition in the
 * words.ts module comment. This oracle is that definition written the plain
 * way, and the property is that both give the same words, kinds and
 * positions on any text (letters with and without accents, combining marks,
 * CJK, digits, astral letters, lone surrogates, separators).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MAX_WORD_CHARS, rawWords, type RawWord } from '../../common/words.js';

const RUN = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu;
const CJK = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}]/u;
const DIGITS = /^\p{Nd}+$/u;

function oracle(text: string): RawWord[] {
  const out: RawWord[] = [];
  let position = 0;
  const plain = (piece: string, start: number) =>
    out.push({ text: piece, kind: [...piece].length > MAX_WORD_CHARS ? 'garbage' : DIGITS.test(piece) ? 'number' : 'word', start, end: start + piece.length, position: position++ });
  for (const match of text.matchAll(RUN)) {
    const run = match[0];
    if (!CJK.test(run)) {
      plain(run, match.index);
      continue;
    }
    const pieces: { text: string; offset: number; cjk: boolean }[] = [];
    let offset = 0;
    for (const c of run) {
      const last = pieces[pieces.length - 1];
      const cjk = CJK.test(c) || (last !== undefined && last.cjk && /\p{M}/u.test(c));
      if (last !== undefined && last.cjk === cjk) last.text += c;
      else pieces.push({ text: c, offset, cjk });
      offset += c.length;
    }
    for (const piece of pieces) {
      const at = match.index + piece.offset;
      if (!piece.cjk) {
        plain(piece.text, at);
        continue;
      }
      const chars = [...piece.text];
      const starts: number[] = [];
      let o = at;
      for (const c of chars) {
        starts.push(o);
        o += c.length;
      }
      starts.push(o);
      if (chars.length === 1) out.push({ text: chars[0]!, kind: 'cjk', start: at, end: o, position: position++ });
      for (let i = 0; i + 1 < chars.length; i++) out.push({ text: chars[i]! + chars[i + 1]!, kind: 'cjk', start: starts[i]!, end: starts[i + 2]!, position: position++ });
    }
  }
  return out;
}

const PIECES = ['a', 'Z', 'é', 'e\u0301', '\u0301', 'ß', '7', '٣', '½', ' ', '-', '.', '東', '京', 'の', 'カ', '한', '𝐀', '𠀋', '\ud800', '\udc00', 'ﬁ', 'İ', '\u200d', '\n', '_'];

test('cutWords cuts every text as the regular-expression rule of words.ts does', () => {
  const text = fc.oneof(
    fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((parts) => parts.join('')),
    fc.string({ unit: 'binary', maxLength: 60 }),
    fc.array(fc.constantFrom('a', 'b', '1'), { minLength: 60, maxLength: 70 }).map((parts) => parts.join('')),
  );
  fc.assert(
    fc.property(text, (t) => {
      assert.deepEqual(rawWords(t), oracle(t));
    }),
    { numRuns: 3000 },
  );
});
