/**
 * Snippets: a few windows of a card's text around the words a query looks
 * for, as HTML (engine.ts's contract): text escaped, each matched word in
 * <mark>…</mark>, " … " between fragments and at a cut end. The text is the
 * card's `X` (doc-text.ts), cut with words.ts as the indexer cut it; a word
 * matches when its plain form is a query word's or starts with a query
 * prefix, so "cafe" marks "Café" too. Without a match in the text (a title
 * or URL match) the snippet is the text's start.
 */

import { readDocText } from '../common/doc-text.js';
import { cutWords, exactForm, plainForm } from '../common/words.js';
import type { QueryNode } from './query.js';
import { escapeHtml } from './render.js';

/** Words shown before and after a match. */
const BEFORE = 6;
const AFTER = 10;
const MAX_FRAGMENTS = 3;
/** Words a fragment grows to at most; a match past them starts the next (a page of matches is not one long fragment). */
const MAX_FRAGMENT = 40;
/** Words of the text's start when nothing in it matches. */
const LEAD_WORDS = 30;
/**
 * Matches looked for in a card: the windows are chosen among its first
 * MAX_HITS. A page whose every line has a query word (a site's navigation
 * naming it) no longer costs a pass and a window per match.
 */
const MAX_HITS = 64;
/** Words of a card looked at: enough for any snippet, bounded for a huge text. */
const MAX_WORDS = 20_000;

/** What a snippet marks: the plain forms of a query's words, and its prefixes. */
export interface Highlight {
  words: Set<string>;
  prefixes: string[];
}

/** ASCII code units: a pair of them, hashed to BUCKETS, indexes the table of the marks' beginnings. */
const ASCII = 128;
const BUCKETS = 1024;

/** The words a query looks for (not those it excludes). */
export function highlight(query: QueryNode): Highlight {
  const out: Highlight = { words: new Set(), prefixes: [] };
  const walk = (node: QueryNode): void => {
    switch (node.kind) {
      case 'word':
        if (node.prefix) out.prefixes.push(node.word.plain);
        else out.words.add(node.word.plain);
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
/** Lengths up to this are told apart; longer ones share the last bit. */
const MAX_LENGTH_BIT = 30;
const ANY_LENGTH = 0x80000000;

/**
 * Whether a word is marked. An ASCII word's plain form is itself
 * lower-cased, so a small table indexed by the first two characters
 * (lower-cased, hashed) holding a bit per length the marks have (or every
 * length, for a prefix)
 * tells most words apart by the code CardText keeps for each, without making
 * a string; the rest are compared by their plain form, remembered per
 * spelling for the query's other hits.
 */
export class Marker {
  private readonly lengths = new Uint32Array(BUCKETS);
  private readonly seen = new Map<string, boolean>();

  constructor(private readonly marks: Highlight) {
    const note = (word: string, bits: number): void => {
      const first = word.charCodeAt(0);
      const second = word.length > 1 ? word.charCodeAt(1) : 0;
      if (first < ASCII && second < ASCII) this.lengths[(first * ASCII + second) % BUCKETS]! |= bits;
    };
    for (const word of marks.words) note(word, 1 << Math.min(word.length, MAX_LENGTH_BIT));
    for (const prefix of marks.prefixes) note(prefix, ANY_LENGTH | (-1 << Math.min(prefix.length, MAX_LENGTH_BIT)));
  }

  /** Whether a word with this code (CardText) may be marked. */
  maybe(code: number): boolean {
    return code === NOT_ASCII || (this.lengths[(code >>> 5) % BUCKETS]! & (1 << (code & 31))) !== 0;
  }

  marked(spelling: string): boolean {
    let marked = this.seen.get(spelling);
    if (marked === undefined) {
      const word = plainForm(exactForm(spelling));
      marked = this.marks.words.has(word) || this.marks.prefixes.some((p) => word.startsWith(p));
      this.seen.set(spelling, marked);
    }
    return marked;
  }
}

/** The code of text[start..end): for an ASCII word its first two characters lower-cased and its length (Marker). */
function codeOf(text: string, start: number, end: number): number {
  for (let i = start; i < end; i++) if (text.charCodeAt(i) >= ASCII) return NOT_ASCII;
  const first = lower(text.charCodeAt(start));
  const second = end - start > 1 ? lower(text.charCodeAt(start + 1)) : 0;
  return (((first * ASCII + second) << 5) | Math.min(end - start, MAX_LENGTH_BIT)) >>> 0;
}

/**
 * A card's text cut into words once (the card cache keeps it): the text as
 * one string, blocks joined by a space, each word's offsets in it and its
 * code (Marker). A snippet then costs a pass over the codes.
 */
export class CardText {
  private constructor(
    private readonly text: string,
    private readonly starts: Int32Array,
    private readonly ends: Int32Array,
    private readonly codes: Uint32Array,
  ) {}

  /** The words of a card's `X` (doc-text.ts), the first MAX_WORDS of them. */
  static of(data: Buffer): CardText {
    let text = '';
    let starts = new Int32Array(256);
    let ends = new Int32Array(256);
    let count = 0;
    for (const token of readDocText(data)) {
      if (count >= MAX_WORDS) break;
      if (token.kind === 'break') text += ' ';
      if (token.kind !== 'text') continue;
      const base = text.length;
      text += token.text;
      cutWords(token.text, (start, end) => {
        if (count === starts.length) {
          starts = grow(starts);
          ends = grow(ends);
        }
        starts[count] = base + start;
        ends[count++] = base + end;
      });
    }
    const codes = new Uint32Array(count);
    for (let i = 0; i < count; i++) codes[i] = codeOf(text, starts[i]!, ends[i]!);
    return new CardText(text, starts.slice(0, count), ends.slice(0, count), codes);
  }

  /** Bytes it holds, about. */
  get bytes(): number {
    return 2 * this.text.length + this.starts.byteLength + this.ends.byteLength + this.codes.byteLength;
  }

  /** The snippet for the marks of `marker` (one per query). */
  snippet(marker: Marker): string {
    const count = this.starts.length;
    if (count === 0) return '';
    const { codes, text, starts, ends } = this;
    const hits: number[] = [];
    for (let i = 0; i < count && hits.length < MAX_HITS; i++) if (marker.maybe(codes[i]!) && marker.marked(text.slice(starts[i], ends[i]))) hits.push(i);
    const fragments = choose(hits, count);
    const parts = fragments.map(([from, to]) => this.render(hits, from, to));
    const head = fragments[0]![0] > 0 ? '… ' : '';
    const tail = fragments[fragments.length - 1]![1] < count - 1 ? ' …' : '';
    return head + parts.join(' … ') + tail;
  }

  /** Words `from` to `to` as HTML, the matched ones (`hits`, ascending) marked: the text between two marks is escaped in one piece. */
  private render(hits: readonly number[], from: number, to: number): string {
    const { text, starts, ends } = this;
    const plain = (from: number, to: number): string => escapeHtml(text.slice(from, to).replace(/\s+/g, ' '));
    let out = '';
    let at = starts[from]!;
    let h = 0;
    while (h < hits.length && hits[h]! < from) h++;
    for (; h < hits.length && hits[h]! <= to; h++) {
      const i = hits[h]!;
      out += `${plain(at, starts[i]!)}<mark>${escapeHtml(text.slice(starts[i], ends[i]))}</mark>`;
      at = ends[i]!;
    }
    // The text's last word keeps what follows it (a full stop); elsewhere " … " follows.
    return to === starts.length - 1 ? out + plain(at, text.length).trimEnd() : out + plain(at, Math.max(at, ends[to]!));
  }
}

function grow(from: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const to = new Int32Array(2 * from.length);
  to.set(from);
  return to;
}

/** Word ranges [from, to] to show, of `count` words: around the matches (`hits`, ascending) with the most matched words, in text order. */
function choose(hits: readonly number[], count: number): Array<[number, number]> {
  const windows: Array<{ from: number; to: number; n: number; i: number }> = [];
  for (const hit of hits) {
    const from = Math.max(0, hit - BEFORE);
    const to = Math.min(count - 1, hit + AFTER);
    const last = windows[windows.length - 1];
    if (last !== undefined && from <= last.to + 1 && to - last.from < MAX_FRAGMENT) {
      last.to = to;
      last.n += 1;
    } else windows.push({ from, to, n: 1, i: windows.length });
  }
  if (windows.length === 0) return [[0, Math.min(count, LEAD_WORDS) - 1]];
  return windows
    .sort((a, b) => b.n - a.n || a.i - b.i)
    .slice(0, MAX_FRAGMENTS)
    .sort((a, b) => a.i - b.i)
    .map(({ from, to }) => [from, to]);
}
