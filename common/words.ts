/**
 * Words: how text is cut into the words the index stores and a query looks
 * up. The indexer's chewer and the searcher's query parser both call this
 * module, so a word is spelled the same on both sides.
 *
 * Cutting. A word is a letter or digit followed by letters, digits and
 * combining marks (Unicode \p{L}, \p{N}, \p{M}). Everything else separates
 * words (a mark after a symbol included); so "e-mail" is two
 * words and "node.js" too, and a phrase query "e mail" finds both spellings.
 * Han, Hiragana and Katakana are written without spaces, so a run of them is
 * cut into overlapping pairs of characters ("東京都" → "東京", "京都"), a lone
 * character being a word of its own: the usual n-gram indexing of CJK text,
 * which finds any word of two or more characters as a phrase of pairs.
 * Hangul is written with spaces and is cut like Latin.
 *
 * Forms. `exact` is the word lower-cased (full Unicode case folding as
 * toLowerCase does, "İ" included) and NFC-normalised: what the lexicon
 * stores. `plain` is `exact` without accents: NFKD (which also unfolds
 * ligatures and full-width forms: "ﬁ" → "fi", "ｗ" → "w"), combining marks
 * removed, and a few letters that are not "letter + mark" folded by hand
 * (ß → ss, æ → ae, ø → o, …). Matching is on `plain` by default; a query word with
 * accents prefers the cards whose `exact` form agrees (DESIGN §7).
 *
 * Limits. A word longer than MAX_WORD_CHARS characters is garbage (base64,
 * hashes, minified code): it is skipped but keeps its position, so phrases
 * do not join across it.
 */

export const MAX_WORD_CHARS = 64;

export type WordKind = 'word' | 'number' | 'cjk';

export interface Word {
  /** Lower case, NFC, accents kept. */
  exact: string;
  /** Lower case, accents removed: the form matching is done on. */
  plain: string;
  kind: WordKind;
  /** Offsets in the input string (UTF-16 code units), for snippets and query errors. */
  start: number;
  end: number;
  /** 0, 1, 2 … over the words of the text (garbage words count too). */
  position: number;
}

const RUN = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu;
const CJK = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}]/u;
const DIGITS = /^\p{Nd}+$/u;
const MARKS = /\p{M}/gu;

/** Letters that carry no combining mark under NFD but are, to a reader, accented or ligatures. */
const FOLD: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  ł: 'l',
  ħ: 'h',
  ı: 'i',
  þ: 'th',
  ŧ: 't',
  ŀ: 'l',
};
const FOLDABLE = new RegExp(`[${Object.keys(FOLD).join('')}]`, 'gu');

/** The accent-free form of a word already lower-cased. */
export function plainForm(exact: string): string {
  const stripped = exact.normalize('NFKD').replace(MARKS, '');
  return stripped.replace(FOLDABLE, (c) => FOLD[c]!).normalize('NFC');
}

/** The exact form: lower case, NFC. */
export function exactForm(text: string): string {
  return text.toLowerCase().normalize('NFC');
}

/** Whether the word carries accents (its plain form differs). */
export function hasAccents(word: Pick<Word, 'exact' | 'plain'>): boolean {
  return word.exact !== word.plain;
}

/** The words of `text`, in order. */
export function* words(text: string): Generator<Word> {
  let position = 0;
  for (const match of text.matchAll(RUN)) {
    const run = match[0];
    const start = match.index;
    if (!CJK.test(run)) {
      if ([...run].length <= MAX_WORD_CHARS) yield word(run, start, start + run.length, position, DIGITS.test(run) ? 'number' : 'word');
      position += 1;
      continue;
    }
    // Split the run into CJK and other stretches; CJK stretches become pairs.
    for (const piece of cjkPieces(run)) {
      const at = start + piece.offset;
      if (!piece.cjk) {
        if ([...piece.text].length <= MAX_WORD_CHARS) yield word(piece.text, at, at + piece.text.length, position, DIGITS.test(piece.text) ? 'number' : 'word');
        position += 1;
        continue;
      }
      const chars = [...piece.text];
      const offsets: number[] = [];
      let o = at;
      for (const c of chars) {
        offsets.push(o);
        o += c.length;
      }
      offsets.push(o);
      if (chars.length === 1) {
        yield word(chars[0]!, at, o, position++, 'cjk');
        continue;
      }
      for (let i = 0; i + 1 < chars.length; i++) yield word(chars[i]! + chars[i + 1]!, offsets[i]!, offsets[i + 2]!, position++, 'cjk');
    }
  }
}

function word(text: string, start: number, end: number, position: number, kind: WordKind): Word {
  const exact = exactForm(text);
  return { exact, plain: plainForm(exact), kind, start, end, position };
}

interface Piece {
  text: string;
  offset: number;
  cjk: boolean;
}

/** A run cut where it switches between CJK and other characters (combining marks stay with what they follow). */
function cjkPieces(run: string): Piece[] {
  const pieces: Piece[] = [];
  let offset = 0;
  for (const c of run) {
    const cjk = CJK.test(c) || (pieces.length > 0 && pieces[pieces.length - 1]!.cjk && /\p{M}/u.test(c));
    const last = pieces[pieces.length - 1];
    if (last !== undefined && last.cjk === cjk) last.text += c;
    else pieces.push({ text: c, offset, cjk });
    offset += c.length;
  }
  return pieces;
}
