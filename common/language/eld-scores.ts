/**
 * eld's verdict on one window of text, computed from eld's own small n-gram
 * table without eld's per-call machinery: the same language, the same
 * `isReliable()` and the same two best scores as `eld.detect()` of eld 2.1.0
 * with its text clean-up on, bit for bit (test/common/language/eld-scores.test.ts
 * holds the two side by side on texts in many scripts and on random ones).
 *
 * Why: eld builds every word a character at a time, turns each n-gram into
 * a property name (interned in V8's string table) and walks each n-gram's
 * languages with for…in; on the gatherer's parse thread that cost about as
 * much as parsing the page's HTML. Here an n-gram of up to six byte-characters
 * is two 32-bit numbers looked up in a table of typed arrays built once per
 * thread, and the words are never made into strings.
 *
 * The steps, as eld takes them (facts of its algorithm, not its code):
 *   1. the first 1,000 characters; URLs, e-mail addresses, `….com` domains
 *      and words holding digits blanked out;
 *   2. every run of non-letters (eld's letter class) blanked unless it ends
 *      in an apostrophe, the text trimmed and lower-cased;
 *   3. the text as UTF-8 bytes, each byte written as eld's dictionary
 *      character (ASCII as itself), split into words at spaces; reading stops
 *      at the first space past 350 bytes, or past 380 bytes anywhere;
 *   4. n-grams of each word (its first 70 bytes): 4 bytes every 3 from its
 *      start, the first with a leading space; then its tail from byte
 *      length − 4 (to the word's real end) with a trailing space, and a
 *      leading one when no 4-gram was taken; each distinct n-gram counts once;
 *   5. per language, Σ (table score + 53) over the n-grams that have one; the
 *      language with the highest sum wins (the first on a tie), none when all
 *      are 0;
 *   6. each language's sum divided by the n-gram count s, scaled s ÷ (s + 25),
 *      best first; reliable when there are at least 3 n-grams, the best scaled
 *      score is at least 0.75 of the winner's average (eld's avgScore) and
 *      differs by at least 0.01 from the *index* of the second language (eld
 *      2.1.0 compares with that number rather than the second score; kept).
 *
 * The table, the letter class and the averages are eld's files, read by path
 * (eld exports only its detector): the package is pinned in package.json, and
 * the test above fails should a new version change them. The table is read
 * as text (`readTable`): imported, its 1.6 MB of JavaScript would be compiled
 * into 81,000 objects in every thread that detects, about 180 MB of RSS and
 * 0.4 s each.
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const eldEntry = import.meta.resolve('eld/small');
const { separators, matchDomains } = (await import(new URL('../regexPatterns.js', eldEntry).href)) as { separators: RegExp; matchDomains: RegExp };
const { avgScore } = (await import(new URL('../avgScore.js', eldEntry).href)) as { avgScore: Record<string, number> };
const { dictionary } = (await import(new URL('../dictionary.js', eldEntry).href)) as { dictionary: readonly string[] };

export interface EldVerdict {
  /** ISO 639-1 code, '' when no language scored. */
  readonly lang: string;
  /** eld's `isReliable()`. */
  readonly reliable: boolean;
  /** The best and second-best scaled scores (-Infinity where there is none). */
  readonly best: number;
  readonly second: number;
}

const NO_VERDICT: EldVerdict = { lang: '', reliable: false, best: -Infinity, second: -Infinity };

const MAX_TEXT = 1000;
const CUT_AFTER = 350;
const ENFORCE_CUT_AFTER = 380;
const MAX_WORD = 70;
const BASE_SCORE = 53;
const SCALE = 25;
const RELIABLE_RATIO = 0.75;
/** Byte-characters of an n-gram packed in two 32-bit halves: 6 × 8 bits and its length. */
const MAX_PACKED = 6;
const SPACE = 0x20;

/** eld's table as read from its file: language codes by number, and each n-gram's (language, score) pairs. */
interface Table {
  languages: string[];
  ngrams: string[];
  /** For n-gram k: its pair count, then the pairs, in ngrams order. */
  scores: number[];
}

/**
 * Reads eld's table file, `… languages:{0:'am',…}, … ngrams:{'key':{0:176,…},…}}`:
 * keys quoted with ' (backslash escapes) or bare, numbers whole. Anything
 * else is an error naming the offset: a new eld would have changed the file.
 */
function readTable(file: string): Table {
  const text = readFileSync(file, 'utf8');
  let i = 0;
  const fail = (what: string): never => {
    throw new Error(`eld's table ${file}: ${what} at offset ${i} (${JSON.stringify(text.slice(i, i + 20))})`);
  };
  const expect = (c: string): void => {
    if (text[i] !== c) fail(`${c} expected`);
    i++;
  };
  const seek = (marker: string): void => {
    const at = text.indexOf(marker);
    if (at < 0) fail(`no ${marker}`);
    i = at + marker.length;
  };
  const integer = (): number => {
    const start = i;
    if (text[i] === '-') i++;
    while (i < text.length && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
    if (i === start || text.slice(start, i) === '-') fail('a number expected');
    return Number(text.slice(start, i));
  };
  const key = (): string => {
    const quote = text[i];
    if (quote !== "'" && quote !== '"') {
      const start = i;
      while (i < text.length && text[i] !== ':') i++;
      return text.slice(start, i);
    }
    let out = '';
    for (i++; text[i] !== quote; i++) {
      if (i >= text.length) fail('unterminated string');
      if (text[i] !== '\\') out += text[i];
      else if ("'\"\\".includes(text[++i]!)) out += text[i];
      else fail('an escape of something other than a quote or a backslash');
    }
    i++;
    return out;
  };
  const languages: string[] = [];
  seek('languages:{');
  while (text[i] !== '}') {
    const index = integer();
    expect(':');
    languages[index] = key();
    if (text[i] === ',') i++;
  }
  const ngrams: string[] = [];
  const scores: number[] = [];
  seek('ngrams:{');
  while (text[i] !== '}') {
    ngrams.push(key());
    expect(':');
    expect('{');
    const countAt = scores.push(0) - 1;
    while (text[i] !== '}') {
      const lang = integer();
      expect(':');
      scores.push(lang, integer());
      scores[countAt]! += 1;
      if (text[i] === ',') i++;
    }
    i++;
    if (text[i] === ',') i++;
  }
  return { languages, ngrams, scores };
}

/** The character eld writes for each byte of UTF-8, as a code (every one is below 256). */
const BYTE_CHAR = Uint8Array.from(dictionary, (c) => c.charCodeAt(0));

/**
 * N-grams of at most MAX_PACKED byte-characters as two 32-bit halves: the last
 * four characters in `lo`, the first two and the length in `hi` (so "a" and
 * "\0a" differ). Kept in open-addressed tables of typed arrays: a number key
 * past 2^31 in a Map or Set costs a heap number each time.
 */
let keyHi = 0;
let keyLo = 0;

function packKey(codes: ArrayLike<number>, start: number, end: number, lead: boolean, trail: boolean): void {
  let hi = 0;
  let lo = lead ? SPACE : 0;
  for (let i = start; i < end; i++) {
    hi = (hi << 8) | (lo >>> 24);
    lo = (lo << 8) | codes[i]!;
  }
  if (trail) {
    hi = (hi << 8) | (lo >>> 24);
    lo = (lo << 8) | SPACE;
  }
  keyHi = hi | ((end - start + (lead ? 1 : 0) + (trail ? 1 : 0)) << 16);
  keyLo = lo;
}

function slotOf(mask: number): number {
  let h = Math.imul(keyLo, 0x9e3779b1) ^ Math.imul(keyHi, 0x85ebca6b);
  h ^= h >>> 15;
  return h & mask;
}

/** An open-addressed set of packed keys with a value each; `stamp` empties it in O(1). */
class PackedTable {
  readonly mask: number;
  private readonly hi: Int32Array;
  private readonly lo: Int32Array;
  private readonly value: Int32Array;
  private readonly stamps: Uint32Array;
  private stamp = 1;
  size = 0;

  constructor(capacity: number) {
    let size = 16;
    while (size < 2 * capacity) size *= 2;
    this.mask = size - 1;
    this.hi = new Int32Array(size);
    this.lo = new Int32Array(size);
    this.value = new Int32Array(size);
    this.stamps = new Uint32Array(size);
  }

  clear(): void {
    this.size = 0;
    if (++this.stamp === 0xffffffff) {
      this.stamps.fill(0);
      this.stamp = 1;
    }
  }

  /** The value of the packed key (keyHi, keyLo), or -1. */
  get(): number {
    for (let slot = slotOf(this.mask); this.stamps[slot] === this.stamp; slot = (slot + 1) & this.mask) {
      if (this.hi[slot] === keyHi && this.lo[slot] === keyLo) return this.value[slot]!;
    }
    return -1;
  }

  /** Adds the packed key with `value`; false when it was there already. */
  add(value: number): boolean {
    let slot = slotOf(this.mask);
    for (; this.stamps[slot] === this.stamp; slot = (slot + 1) & this.mask) {
      if (this.hi[slot] === keyHi && this.lo[slot] === keyLo) return false;
    }
    this.stamps[slot] = this.stamp;
    this.hi[slot] = keyHi;
    this.lo[slot] = keyLo;
    this.value[slot] = value;
    this.size++;
    return true;
  }
}

/** The languages by number, and each n-gram's scores: `SCORES[at]` languages follow as (language, score) pairs from `at + 1`. */
const { languages, PACKED, LONG, SCORES } = (() => {
  const table = readTable(fileURLToPath(new URL('../ngrams/small.js', eldEntry)));
  const packed = new PackedTable(table.ngrams.length);
  const long = new Map<string, number>();
  let at = 0;
  for (const ngram of table.ngrams) {
    if (ngram.length > MAX_PACKED) long.set(ngram, at);
    else {
      packKey(Array.from(ngram, (c) => c.charCodeAt(0)), 0, ngram.length, false, false);
      packed.add(at);
    }
    at += 1 + 2 * table.scores[at]!;
  }
  return { languages: table.languages, PACKED: packed, LONG: long, SCORES: Int32Array.from(table.scores) };
})();

const URLS = /[hw](?:(?:ttps?:\/\/(?:www\.)?)|ww\.)[^\s]+/gi;
const EMAILS = /[a-zA-Z0-9.!$%&’+_`-]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]{2,64}/g;
const WITH_DIGITS = /[a-zA-Z]*[0-9]+[a-zA-Z0-9]*/g;
const DIGIT = /[0-9]/;

/** Steps 1 and 2: the text eld turns into bytes. */
function cleaned(text: string): string {
  let cut = text.substring(0, MAX_TEXT).replace(URLS, ' ');
  // Each of these needs a character most windows lack; looking for it first spares their backtracking.
  if (cut.includes('@')) cut = cut.replace(EMAILS, ' ');
  if (cut.includes('com')) cut = cut.replace(matchDomains, ' ');
  if (DIGIT.test(cut)) cut = cut.replace(WITH_DIGITS, ' ');
  return cut.replace(separators, ' ').trim().toLowerCase();
}

/** Step 3 into `bytes` (byte-characters, words separated by nothing) with each word's end in `ends`; returns the word count. */
function words(text: string, bytes: Uint8Array, ends: Uint32Array): number {
  let n = 0;
  let count = 0;
  let words = 0;
  const put = (byte: number): void => {
    bytes[n++] = BYTE_CHAR[byte]!;
  };
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      if (c === SPACE) {
        if (n > (words === 0 ? 0 : ends[words - 1]!)) ends[words++] = n;
        if (count > CUT_AFTER) break;
      } else bytes[n++] = c;
      count += 1;
    } else if (c < 0x800) {
      put(0xc0 | (c >> 6));
      put(0x80 | (c & 0x3f));
      count += 2;
    } else if (c < 0xd800 || c >= 0xe000) {
      put(0xe0 | (c >> 12));
      put(0x80 | ((c >> 6) & 0x3f));
      put(0x80 | (c & 0x3f));
      count += 3;
    } else {
      // A high surrogate and whatever unit follows (eld does not check it is a low one).
      i++;
      c = 0x10000 + (((c & 0x3ff) << 10) | (text.charCodeAt(i) & 0x3ff));
      put(0xf0 | (c >> 18));
      put(0x80 | ((c >> 12) & 0x3f));
      put(0x80 | ((c >> 6) & 0x3f));
      put(0x80 | (c & 0x3f));
      count += 4;
    }
    if (count > ENFORCE_CUT_AFTER) break;
  }
  if (n > (words === 0 ? 0 : ends[words - 1]!)) ends[words++] = n;
  return words;
}

// Scratch for one window: at most 380 bytes are read before a cut, plus one character's four.
const BYTES = new Uint8Array(ENFORCE_CUT_AFTER + 8);
const ENDS = new Uint32Array(ENFORCE_CUT_AFTER + 8);
const SUMS = new Int32Array(languages.length);
/** The distinct n-grams of one window (eld counts each once): under 400 in 380 bytes, so the table never fills. */
const seen = new PackedTable(512);
const seenLong = new Set<string>();

/** Adds one n-gram's scores to SUMS the first time it is met. */
function count(start: number, end: number, lead: boolean, trail: boolean): void {
  const length = end - start + (lead ? 1 : 0) + (trail ? 1 : 0);
  let at: number;
  if (length <= MAX_PACKED) {
    packKey(BYTES, start, end, lead, trail);
    if (!seen.add(0)) return;
    at = PACKED.get();
  } else {
    const key = (lead ? ' ' : '') + String.fromCharCode(...BYTES.subarray(start, end)) + (trail ? ' ' : '');
    if (seenLong.has(key)) return;
    seenLong.add(key);
    at = LONG.get(key) ?? -1;
  }
  if (at < 0) return;
  const pairs = SCORES[at]!;
  for (let k = at + 1; k < at + 1 + 2 * pairs; k += 2) SUMS[SCORES[k]!]! += SCORES[k + 1]! + BASE_SCORE;
}

/** eld.detect(text) as language, isReliable() and the two best of getScores(). Never throws on a string. */
export function eldVerdict(text: string): EldVerdict {
  const wordCount = words(cleaned(text), BYTES, ENDS);
  SUMS.fill(0);
  seen.clear();
  seenLong.clear();
  let start = 0;
  for (let w = 0; w < wordCount; w++) {
    const end = ENDS[w]!;
    const length = Math.min(end - start, MAX_WORD);
    let j = 0;
    for (; j + 4 < length; j += 3) count(start + j, start + j + 4, j === 0, false);
    count(start + Math.max(0, length - 4), end, j === 0, true);
    start = end;
  }
  const ngrams = seen.size + seenLong.size;
  let winner = -1;
  for (let lang = 0; lang < SUMS.length; lang++) if (SUMS[lang]! > 0 && (winner < 0 || SUMS[lang]! > SUMS[winner]!)) winner = lang;
  if (winner < 0) return NO_VERDICT;
  // Step 6; the sort is stable, so equal scores keep the languages' order.
  const scaled: Array<[lang: number, score: number]> = [];
  for (let lang = 0; lang < SUMS.length; lang++) {
    if (SUMS[lang]! <= 0) continue;
    const s = SUMS[lang]! / ngrams;
    scaled.push([lang, s / (s + SCALE)]);
  }
  scaled.sort((a, b) => b[1] - a[1]);
  const lang = languages[winner]!;
  const best = scaled[0]![1];
  const nextIndex = scaled.length > 1 ? scaled[1]![0] : 0;
  const reliable = ngrams >= 3 && !(avgScore[lang]! * RELIABLE_RATIO > best || 0.01 > Math.abs(best - nextIndex));
  return { lang, reliable, best, second: scaled.length > 1 ? scaled[1]![1] : -Infinity };
}
