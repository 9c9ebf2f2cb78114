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

const MARKS = /\p{M}/gu;
const ASCII_ONLY = /^[\x00-\x7f]*$/;

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
  // Most words are ASCII, which has nothing to strip or fold.
  if (ASCII_ONLY.test(exact)) return exact;
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

/** A word as written in the text (case and accents kept); garbage words are reported too, as they take a position. */
export interface RawWord {
  text: string;
  kind: RawKind;
  start: number;
  end: number;
  position: number;
}

export type RawKind = WordKind | 'garbage';

/** Called by cutWords for each word: its offsets in the text, kind, position and spellingHash(). */
export type WordVisitor = (start: number, end: number, kind: RawKind, position: number, hash: number) => void;

export const FNV_START = 0x811c9dc5 | 0;
const FNV_PRIME = 16777619;

/** One FNV-1a step. */
export function fnv(h: number, value: number): number {
  return Math.imul(h ^ value, FNV_PRIME);
}

/**
 * FNV-1a of text[start, end)'s UTF-16 units: what cutWords hands its visitor,
 * made while it reads them (lookups by spelling need no second pass), and
 * the word hash of the near-duplicate shingles (the same in every worker).
 */
export function spellingHash(text: string, start: number, end: number): number {
  let h = FNV_START;
  for (let i = start; i < end; i++) h = fnv(h, text.charCodeAt(i));
  return h;
}

// Character classes, one byte per code point: a run starts with LETTER (\p{L}, \p{N}) and goes on
// with letters and MARKs (\p{M}); CJK is Han, Hiragana or Katakana; DIGIT is \p{Nd}.
const LETTER = 1;
const MARK = 2;
const CJK = 4;
const DIGIT = 8;
const CLASS_TESTS: readonly [RegExp, number][] = [
  [/^[\p{L}\p{N}]$/u, LETTER],
  [/^\p{M}$/u, MARK],
  [/^[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}]$/u, CJK],
  [/^\p{Nd}$/u, DIGIT],
];
/** Classes of the BMP, filled 256 code points at a time on first use; astral code points as met. */
const bmp = new Uint8Array(0x10000);
const blockDone = new Uint8Array(0x100);
const astral = new Map<number, number>();

function classify(codePoint: number): number {
  const c = String.fromCodePoint(codePoint);
  let bits = 0;
  for (const [test, bit] of CLASS_TESTS) if (test.test(c)) bits |= bit;
  return bits;
}

function fillBlock(block: number): void {
  for (let c = block << 8; c < (block + 1) << 8; c++) bmp[c] = c >= 0xd800 && c < 0xe000 ? 0 : classify(c);
  blockDone[block] = 1;
}

/** Classes of the code point at `i` (a lone surrogate is nothing); its width in UTF-16 units in bit 8. */
function classAt(text: string, i: number, end: number): number {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c >= 0xe000) {
    if (blockDone[c >> 8] === 0) fillBlock(c >> 8);
    return bmp[c]!;
  }
  const low = i + 1 < end ? text.charCodeAt(i + 1) : 0;
  if (c >= 0xdc00 || low < 0xdc00 || low >= 0xe000) return 0;
  const codePoint = ((c - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
  let bits = astral.get(codePoint);
  if (bits === undefined) {
    bits = classify(codePoint);
    astral.set(codePoint, bits);
  }
  return bits | 0x100;
}

/**
 * Cuts `text` from `from` to `to` into words without making strings: calls
 * `visit` for each word, garbage words included, with its offsets, kind and
 * position; returns the number of positions used. A character class table
 * makes this the fast path (the indexer cuts all text through it);
 * rawWords() and words() are built on it.
 */
export function cutWords(text: string, visit: WordVisitor, from = 0, to = text.length): number {
  let position = 0;
  let i = from;
  while (i < to) {
    let bits = classAt(text, i, to);
    if ((bits & LETTER) === 0) {
      i += bits >> 8 === 1 ? 2 : 1;
      continue;
    }
    const start = i;
    let points = 0;
    let all = DIGIT;
    let cjk = 0;
    let h = FNV_START;
    while (i < to) {
      bits = classAt(text, i, to);
      if ((bits & (LETTER | MARK)) === 0) break;
      cjk |= bits & CJK;
      all &= bits;
      points += 1;
      h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
      if (bits >> 8 === 1) {
        h = Math.imul(h ^ text.charCodeAt(i + 1), FNV_PRIME);
        i += 2;
      } else {
        i += 1;
      }
    }
    if (cjk === 0) visit(start, i, points > MAX_WORD_CHARS ? 'garbage' : (all & DIGIT) !== 0 ? 'number' : 'word', position++, h);
    else position = cutCjkRun(text, start, i, visit, position);
  }
  return position;
}

/**
 * A run holding CJK, cut where it switches between CJK and other characters
 * (a combining mark stays with what it follows); CJK stretches become
 * overlapping pairs of code points, a lone one a word of its own.
 */
function cutCjkRun(text: string, start: number, end: number, visit: WordVisitor, position: number): number {
  let i = start;
  while (i < end) {
    const pieceStart = i;
    const cjk = (classAt(text, i, end) & CJK) !== 0;
    const offsets: number[] = [];
    let all = DIGIT;
    while (i < end) {
      const bits = classAt(text, i, end);
      if (cjk ? (bits & (CJK | MARK)) === 0 : (bits & CJK) !== 0) break;
      offsets.push(i);
      all &= bits;
      i += bits >> 8 === 1 ? 2 : 1;
    }
    offsets.push(i);
    const points = offsets.length - 1;
    if (!cjk) visit(pieceStart, i, points > MAX_WORD_CHARS ? 'garbage' : (all & DIGIT) !== 0 ? 'number' : 'word', position++, spellingHash(text, pieceStart, i));
    else if (points === 1) visit(pieceStart, i, 'cjk', position++, spellingHash(text, pieceStart, i));
    else for (let k = 0; k + 1 < points; k++) visit(offsets[k]!, offsets[k + 2]!, 'cjk', position++, spellingHash(text, offsets[k]!, offsets[k + 2]!));
  }
  return position;
}

/**
 * The words of `text` before their forms are made, garbage words included:
 * what words() is built on.
 */
export function rawWords(text: string): RawWord[] {
  const out: RawWord[] = [];
  cutWords(text, (start, end, kind, position) => out.push({ text: text.slice(start, end), kind, start, end, position }));
  return out;
}

/** The words of `text`, in order. */
export function* words(text: string): Generator<Word> {
  for (const raw of rawWords(text)) {
    if (raw.kind !== 'garbage') yield word(raw.text, raw.start, raw.end, raw.position, raw.kind);
  }
}

function word(text: string, start: number, end: number, position: number, kind: WordKind): Word {
  const exact = exactForm(text);
  return { exact, plain: plainForm(exact), kind, start, end, position };
}
