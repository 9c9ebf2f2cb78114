/**
 * Snippets: a few windows of a card's text around the words a query looks
 * for, as HTML (engine.ts's contract): text escaped, each matched word in
 * <mark>…</mark>, " … " between fragments and at a cut end, " · " where a
 * fragment crosses from one block (paragraph, heading, list item) to the
 * next without a full stop. The text is the card's `X` (doc-text.ts), cut
 * with words.ts as the indexer cut it; a word matches when its plain form
 * is a query word's or starts with a query prefix, so "cafe" marks "Café"
 * too.
 *
 * Which windows: a block most of whose text is link text (doc-text.ts
 * linkBlocks: a site's navigation, a table of contents) is a link block,
 * and a window stays among blocks of its match's kind, so a match in a
 * paragraph does not pull in the menu beside it. Those with the most
 * different query words first, then those of the content, then those with
 * the most matches, then text order, until MAX_SNIPPET_WORDS; a window of
 * link blocks only if it has more different query words than any of the
 * content, and a window whose words another shows already is left out.
 * Without a match in the text (a title, URL or anchor text match) the
 * snippet is the start of the content. A text with page breaks (a PDF's)
 * says which page the first fragment's first match is on.
 */

import { linkBlocks, readDocText } from '../common/bucket/doc-text.js';
import { grow } from '../common/grow.js';
import { cutWords, exactForm, plainForm } from '../common/words.js';
import type { QueryNode } from './query.js';
import { seek } from './rank.js';
import { escapeHtml } from './render.js';

/** Words shown before and after a match. */
const BEFORE = 6;
const AFTER = 10;
const MAX_FRAGMENTS = 3;
/** Words a fragment grows to at most; a match past them starts the next (a page of matches is not one long fragment). */
const MAX_FRAGMENT = 30;
/** Words of all fragments together: a result shows a few lines, not a page. */
const MAX_SNIPPET_WORDS = 50;
/** Words of the content's start when nothing in the text matches. */
const LEAD_WORDS = 30;
/** CardText word flags: the first word of a block; a word of a link block (doc-text.ts linkBlocks). */
const BLOCK_START = 1;
const LINKED = 2;
/** A block's text ends a sentence: the next block follows after a space, not " · ". */
const SENTENCE_END = /[.!?:;…]$/;
/**
 * Matches looked for in a card: the windows are chosen among its first
 * MAX_HITS. A page whose every line has a query word (a site's navigation
 * naming it) no longer costs a pass and a window per match.
 */
const MAX_HITS = 64;
/** Words of a card looked at: enough for any snippet, bounded for a huge text (and below 2^16: CardText keeps places as u16). */
const MAX_WORDS = 20_000;

/** What a snippet marks: the plain forms of a query's words, and its prefixes. */
export interface Highlight {
  words: Set<string>;
  prefixes: string[];
}

/** ASCII code units; a word's code (codeOf) holds its first two. */
const ASCII = 128;
/** The bits of a code's radix sort (byCodeOrder): every ASCII code is below 2^19, and NOT_ASCII sorts as 2^19. */
const RADIX_BITS = 10;
const LAST_CODE = 1 << 19;

/** The words a query looks for (not those it excludes). */
export function highlight(query: QueryNode): Highlight {
  const out: Highlight = { words: new Set(), prefixes: [] };
  const walk = (node: QueryNode): void => {
    switch (node.kind) {
      case 'word':
        if (node.prefix) out.prefixes.push(node.word.plain);
        else out.words.add(node.word.plain);
        for (const synonym of node.synonyms ?? []) out.words.add(synonym.plain);
        break;
      case 'phrase':
        for (const word of node.words) out.words.add(word.plain);
        break;
      case 'near':
        walk(node.left);
        walk(node.right);
        break;
      case 'and':
      case 'or':
        node.children.forEach(walk);
        break;
      default:
    }
  };
  walk(query);
  return out;
}

const lower = (c: number): number => (c >= 65 && c <= 90 ? c + 32 : c);
/** The code of a word that is not all ASCII. */
const NOT_ASCII = 0xffffffff;
/** Lengths up to this are told apart; longer ones share it. */
const MAX_LENGTH = 30;
const LENGTH_BITS = 5;

/**
 * Which query word a word is. An ASCII word's plain form is itself
 * lower-cased, so its code (codeOf: first two characters and length) is
 * that of the query word it can be, and a prefix's words have codes in one
 * range; a card's words sorted by code (CardText) are looked up by those
 * ranges, and only words not all ASCII are always looked at. Each such
 * word is then compared by its plain form, remembered per spelling for
 * the query's other hits.
 */
export class Marker {
  private readonly seen = new Map<string, number>();
  private readonly words: string[];
  /** Inclusive ranges of codes, [low, high] pairs, ascending and apart. */
  readonly ranges: Uint32Array;
  /** Per word, its code (NOT_ASCII for one not all ASCII); per prefix, the range of its words' codes (−1, −1 for one not all ASCII: no ASCII word starts with it). */
  private readonly codes: Uint32Array;
  private readonly prefixCodes: Float64Array;

  constructor(private readonly marks: Highlight) {
    this.words = [...marks.words];
    this.codes = Uint32Array.from(this.words, (word) => codeOf(word, 0, word.length));
    this.prefixCodes = new Float64Array(2 * marks.prefixes.length).fill(-1);
    marks.prefixes.forEach((prefix, p) => {
      if (codeOf(prefix, 0, prefix.length) === NOT_ASCII) return;
      const pair = prefix.charCodeAt(0) * ASCII + (prefix.length > 1 ? prefix.charCodeAt(1) : 0);
      // A prefix of one character takes every second character.
      const last = prefix.length > 1 ? pair : pair + ASCII - 1;
      this.prefixCodes[2 * p] = pair * 2 ** LENGTH_BITS + Math.min(prefix.length, MAX_LENGTH);
      this.prefixCodes[2 * p + 1] = last * 2 ** LENGTH_BITS + 2 ** LENGTH_BITS - 1;
    });
    const ranges: Array<[number, number]> = [[NOT_ASCII, NOT_ASCII]];
    for (const code of this.codes) if (code !== NOT_ASCII) ranges.push([code, code]);
    for (let p = 0; p < marks.prefixes.length; p++) if (this.prefixCodes[2 * p]! >= 0) ranges.push([this.prefixCodes[2 * p]!, this.prefixCodes[2 * p + 1]!]);
    ranges.sort((a, b) => a[0] - b[0]);
    const merged: number[] = [];
    for (const [low, high] of ranges) {
      if (merged.length > 0 && low <= merged[merged.length - 1]! + 1) merged[merged.length - 1] = Math.max(merged[merged.length - 1]!, high);
      else merged.push(low, high);
    }
    this.ranges = Uint32Array.from(merged);
  }

  /** which() of the ASCII word text[start, end) whose code is `code`, without making a string: its plain form is itself lower-cased. */
  whichAscii(text: string, start: number, end: number, code: number): number {
    const { words, codes } = this;
    for (let w = 0; w < words.length; w++) if (codes[w] === code && sameLower(text, start, end, words[w]!, end - start)) return w;
    const { prefixes } = this.marks;
    for (let p = 0; p < prefixes.length; p++) {
      const prefix = prefixes[p]!;
      if (code >= this.prefixCodes[2 * p]! && code <= this.prefixCodes[2 * p + 1]! && sameLower(text, start, end, prefix, prefix.length)) return words.length + p;
    }
    return -1;
  }

  /** The number of the query word (or prefix) `spelling` matches, −1 for none. */
  which(spelling: string): number {
    let which = this.seen.get(spelling);
    if (which === undefined) {
      const word = plainForm(exactForm(spelling));
      which = this.words.indexOf(word);
      if (which < 0) {
        const prefix = this.marks.prefixes.findIndex((p) => word.startsWith(p));
        if (prefix >= 0) which = this.words.length + prefix;
      }
      this.seen.set(spelling, which);
    }
    return which;
  }
}

/**
 * The places 0 … count − 1 ordered by their codes, places of one code in
 * text order: a radix sort in two passes of RADIX_BITS (a typed array's
 * sort() took a tenth of a card's first snippet).
 */
function byCodeOrder(codes: Uint32Array, count: number): Uint16Array {
  const keys = new Uint32Array(count);
  let order = new Uint16Array(count);
  for (let i = 0; i < count; i++) {
    keys[i] = codes[i] === NOT_ASCII ? LAST_CODE : codes[i]!;
    order[i] = i;
  }
  let next = new Uint16Array(count);
  const buckets = new Uint32Array((1 << RADIX_BITS) + 1);
  const mask = (1 << RADIX_BITS) - 1;
  for (let shift = 0; shift < 2 * RADIX_BITS; shift += RADIX_BITS) {
    buckets.fill(0);
    for (let i = 0; i < count; i++) buckets[((keys[i]! >> shift) & mask) + 1]! += 1;
    for (let b = 1; b < buckets.length; b++) buckets[b]! += buckets[b - 1]!;
    for (let i = 0; i < count; i++) {
      const place = order[i]!;
      next[buckets[(keys[place]! >> shift) & mask]!++] = place;
    }
    [order, next] = [next, order];
  }
  return order;
}

/** Whether the first `n` characters of text[start..end), lower-cased, are `word` (ASCII). */
function sameLower(text: string, start: number, end: number, word: string, n: number): boolean {
  if (end - start < n || word.length !== n) return false;
  for (let k = 0; k < n; k++) if (lower(text.charCodeAt(start + k)) !== word.charCodeAt(k)) return false;
  return true;
}

/** The code of text[start..end): for an ASCII word its first two characters lower-cased and its length (Marker). */
function codeOf(text: string, start: number, end: number): number {
  for (let i = start; i < end; i++) if (text.charCodeAt(i) >= ASCII) return NOT_ASCII;
  const first = lower(text.charCodeAt(start));
  const second = end - start > 1 ? lower(text.charCodeAt(start + 1)) : 0;
  return (first * ASCII + second) * 2 ** LENGTH_BITS + Math.min(end - start, MAX_LENGTH);
}

/**
 * A card's text cut into words once (the card cache keeps it): the text as
 * one string, blocks joined by a space, each word's offsets in it and flags
 * (BLOCK_START, LINKED), and its words sorted by code (Marker): the codes
 * ascending and where each word is. A snippet then looks up the query's
 * codes instead of passing over every word.
 */
export class CardText {
  private constructor(
    private readonly text: string,
    private readonly starts: Int32Array,
    private readonly ends: Int32Array,
    private readonly byCode: Uint32Array,
    private readonly places: Uint16Array,
    private readonly flags: Uint8Array,
    /** Pairs: the first word of a page, its page number, ascending (a text with page breaks only). */
    private readonly pages: Uint32Array,
  ) {}

  /** The words of a card's `X` (doc-text.ts), the first MAX_WORDS of them. */
  static of(data: Buffer): CardText {
    // The text's pieces, joined once at the end: a string grown piece by piece is a rope, and reading its characters walks it.
    const parts: string[] = [];
    let length = 0;
    let starts = new Int32Array(256);
    let ends = new Int32Array(256);
    let codes = new Uint32Array(256);
    let flags = new Uint8Array(256);
    let count = 0;
    const pages: number[] = [];
    const tokens = readDocText(data);
    const linked = linkBlocks(tokens);
    let block = 0;
    let linking = false;
    // The first word of the block under way.
    let blockFirst = 0;
    for (const token of tokens) {
      if (count >= MAX_WORDS) break;
      if (token.kind === 'break') {
        parts.push(' ');
        length += 1;
        block += 1;
        blockFirst = count;
        if (token.page !== undefined) pages.push(count, token.page);
      } else if (token.kind !== 'text') linking = token.kind === 'link-open';
      else {
        const base = length;
        const kind = linked[block] === 1 ? LINKED : 0;
        const before = count;
        const piece = token.text;
        parts.push(piece);
        length += piece.length;
        cutWords(piece, (start, end) => {
          starts = grow(starts, count + 1);
          ends = grow(ends, count + 1);
          codes = grow(codes, count + 1);
          flags = grow(flags, count + 1);
          starts[count] = base + start;
          ends[count] = base + end;
          codes[count] = codeOf(piece, start, end);
          flags[count] = (count === blockFirst ? BLOCK_START : 0) | kind;
          count += 1;
        });
        // A link without words is a symbol (a heading's "¶" permalink, an arrow): not worth showing.
        if (linking && count === before) {
          parts.pop();
          length = base;
        }
      }
    }
    const places = byCodeOrder(codes, count);
    const byCode = new Uint32Array(count);
    for (let i = 0; i < count; i++) byCode[i] = codes[places[i]!]!;
    return new CardText(parts.join(''), starts.slice(0, count), ends.slice(0, count), byCode, places, flags.slice(0, count), Uint32Array.from(pages));
  }

  /** Bytes it holds, about. */
  get bytes(): number {
    return 2 * this.text.length + this.starts.byteLength + this.ends.byteLength + this.byCode.byteLength + this.places.byteLength + this.flags.byteLength + this.pages.byteLength;
  }

  /**
   * The first MAX_HITS words the marker marks, in text order (`hits`), and
   * which query word each is (`words`, Marker.which's numbers).
   */
  matches(marker: Marker): { hits: number[]; words: number[] } {
    const { byCode, places, text, starts, ends } = this;
    const count = starts.length;
    const { ranges } = marker;
    // The words of each code the marker looks for are a run of byCode, in text order; the runs are merged.
    const runs: number[] = [];
    for (let r = 0; r < ranges.length; r += 2) {
      for (let j = seek(byCode, 0, count, ranges[r]!); j < count && byCode[j]! <= ranges[r + 1]!; ) {
        const from = j;
        while (j < count && byCode[j] === byCode[from]) j++;
        runs.push(from, j);
      }
    }
    const hits: number[] = [];
    const words: number[] = [];
    while (hits.length < MAX_HITS) {
      let next = -1;
      for (let r = 0; r < runs.length; r += 2) {
        if (runs[r]! < runs[r + 1]! && (next < 0 || places[runs[r]!]! < places[runs[next]!]!)) next = r;
      }
      if (next < 0) break;
      const code = byCode[runs[next]!]!;
      const i = places[runs[next]!++]!;
      const which = code === NOT_ASCII ? marker.which(text.slice(starts[i], ends[i])) : marker.whichAscii(text, starts[i]!, ends[i]!, code);
      if (which < 0) continue;
      hits.push(i);
      words.push(which);
    }
    return { hits, words };
  }

  /** The snippet for the marks of `marker` (one per query), and, for a text with page breaks, the page of the first fragment's first match (or start). */
  snippet(marker: Marker): { html: string; page?: number } {
    const count = this.starts.length;
    if (count === 0) return { html: '' };
    const { hits, words } = this.matches(marker);
    const fragments = hits.length === 0 ? [this.lead()] : this.choose(hits, words);
    const parts = fragments.map(([from, to]) => this.render(hits, from, to));
    const head = fragments[0]![0] > 0 ? '… ' : '';
    const tail = fragments[fragments.length - 1]![1] < count - 1 ? ' …' : '';
    const html = head + parts.join(' … ') + tail;
    if (this.pages.length === 0) return { html };
    const [from, to] = fragments[0]!;
    return { html, page: this.pageOf(hits.find((h) => h >= from && h <= to) ?? from) };
  }

  /** The page of word `i`: the last page break at or before it, page 1 before the first. */
  private pageOf(i: number): number {
    const { pages } = this;
    let page = 1;
    for (let k = 0; k < pages.length && pages[k]! <= i; k += 2) page = pages[k + 1]!;
    return page;
  }

  /** The first LEAD_WORDS words of the content (the first word outside a link block), or of the text when all of it is links. */
  private lead(): [number, number] {
    const { flags } = this;
    let from = 0;
    while (from < flags.length && (flags[from]! & LINKED) !== 0) from++;
    if (from === flags.length) from = 0;
    return [from, Math.min(flags.length, from + LEAD_WORDS) - 1];
  }

  /**
   * Word ranges [from, to] to show, in text order: windows around the
   * matches (`hits`, ascending; `words`, which query word each is), each
   * within blocks of its match's kind, the best (module comment) first.
   */
  private choose(hits: readonly number[], words: readonly number[]): Array<[number, number]> {
    const { flags } = this;
    const count = flags.length;
    const windows: Array<{ from: number; to: number; kind: number; found: number; distinct: number; n: number; i: number }> = [];
    for (let h = 0; h < hits.length; h++) {
      const hit = hits[h]!;
      const kind = flags[hit]! & LINKED;
      let from = hit;
      while (from > 0 && hit - from < BEFORE && (flags[from - 1]! & LINKED) === kind) from--;
      let to = hit;
      while (to < count - 1 && to - hit < AFTER && (flags[to + 1]! & LINKED) === kind) to++;
      const bit = 1 << Math.min(words[h]!, 30);
      const last = windows[windows.length - 1];
      if (last !== undefined && last.kind === kind && from <= last.to + 1 && to - last.from < MAX_FRAGMENT) {
        last.to = to;
        last.found |= bit;
        last.n += 1;
      } else windows.push({ from, to, kind, found: bit, distinct: 0, n: 1, i: windows.length });
    }
    // A link block only when it has more of the query's words than any window of the content.
    let inContent = 0;
    for (const window of windows) {
      window.distinct = bits(window.found);
      if (window.kind === 0) inContent = Math.max(inContent, window.distinct);
    }
    const chosen: Array<{ window: (typeof windows)[number]; words: string }> = [];
    let shown = 0;
    for (const window of windows.sort((a, b) => b.distinct - a.distinct || a.kind - b.kind || b.n - a.n || a.i - b.i)) {
      if (window.kind !== 0 && window.distinct <= inContent) continue;
      const size = window.to - window.from + 1;
      if (chosen.length > 0 && shown + size > MAX_SNIPPET_WORDS) continue;
      // A heading repeated in a breadcrumb or a caption is shown once, in the larger window.
      const words = this.text.slice(this.starts[window.from], this.ends[window.to]);
      if (chosen.some((c) => c.words.includes(words))) continue;
      for (let c = chosen.length - 1; c >= 0; c--) {
        if (!words.includes(chosen[c]!.words)) continue;
        shown -= chosen[c]!.window.to - chosen[c]!.window.from + 1;
        chosen.splice(c, 1);
      }
      chosen.push({ window, words });
      shown += size;
      if (chosen.length === MAX_FRAGMENTS) break;
    }
    return chosen.map((c) => c.window).sort((a, b) => a.i - b.i).map(({ from, to }) => [from, to]);
  }

  /**
   * Words `from` to `to` as HTML, the matched ones (`hits`, ascending)
   * marked, " · " where a block starts after one that does not end a
   * sentence: the text between two such places is escaped in one piece.
   */
  private render(hits: readonly number[], from: number, to: number): string {
    const { text, starts, ends, flags } = this;
    const plain = (from: number, to: number): string => escapeHtml(text.slice(from, to).replace(/\s+/g, ' '));
    let out = '';
    let at = starts[from]!;
    let h = 0;
    while (h < hits.length && hits[h]! < from) h++;
    for (let i = from; i <= to; i++) {
      if (i > from && (flags[i]! & BLOCK_START) !== 0) {
        const ended = SENTENCE_END.test(text.slice(starts[i - 1], starts[i]).trimEnd());
        out += plain(at, starts[i]!).trimEnd() + (ended ? ' ' : ' · ');
        at = starts[i]!;
      }
      if (h < hits.length && hits[h] === i) {
        out += `${plain(at, starts[i]!)}<mark>${escapeHtml(text.slice(starts[i], ends[i]))}</mark>`;
        at = ends[i]!;
        h++;
      }
    }
    // The text's last word keeps what follows it (a full stop); elsewhere " … " follows.
    return to === starts.length - 1 ? out + plain(at, text.length).trimEnd() : out + plain(at, Math.max(at, ends[to]!));
  }
}

/** Set bits of a 32-bit number. */
function bits(n: number): number {
  let count = 0;
  for (let m = n; m !== 0; m &= m - 1) count++;
  return count;
}
