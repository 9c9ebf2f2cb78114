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
/** Words of the text's start when nothing in it matches. */
const LEAD_WORDS = 30;
/** Words of a card looked at: enough for any snippet, bounded for a huge text. */
const MAX_WORDS = 20_000;

/** What a snippet marks: the plain forms of a query's words, and its prefixes. */
export interface Highlight {
  words: Set<string>;
  prefixes: string[];
}

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

interface Span {
  start: number;
  end: number;
  marked: boolean;
}

/** The snippet of `text` (a card's `X`) for `marks`. */
export function snippet(text: Buffer, marks: Highlight): string {
  let plain = '';
  const spans: Span[] = [];
  for (const token of readDocText(text)) {
    if (spans.length >= MAX_WORDS) break;
    if (token.kind === 'break') plain += ' ';
    if (token.kind !== 'text') continue;
    const base = plain.length;
    plain += token.text;
    cutWords(token.text, (start, end) => {
      const word = plainForm(exactForm(token.text.slice(start, end)));
      const marked = marks.words.has(word) || marks.prefixes.some((p) => word.startsWith(p));
      spans.push({ start: base + start, end: base + end, marked });
    });
  }
  if (spans.length === 0) return '';
  const fragments = choose(spans);
  const parts = fragments.map(([from, to]) => render(plain, spans, from, to));
  const head = fragments[0]![0] > 0 ? '… ' : '';
  const tail = fragments[fragments.length - 1]![1] < spans.length - 1 ? ' …' : '';
  return head + parts.join(' … ') + tail;
}

/** Word ranges [from, to] to show: around the matches with the most distinct words, in text order. */
function choose(spans: readonly Span[]): Array<[number, number]> {
  const windows: Array<[number, number]> = [];
  spans.forEach((span, i) => {
    if (!span.marked) return;
    const from = Math.max(0, i - BEFORE);
    const to = Math.min(spans.length - 1, i + AFTER);
    const last = windows[windows.length - 1];
    if (last !== undefined && from <= last[1] + 1) last[1] = to;
    else windows.push([from, to]);
  });
  if (windows.length === 0) return [[0, Math.min(spans.length, LEAD_WORDS) - 1]];
  const marked = ([from, to]: [number, number]): number => spans.slice(from, to + 1).filter((s) => s.marked).length;
  return windows
    .map((w, i) => ({ w, i, n: marked(w) }))
    .sort((a, b) => b.n - a.n || a.i - b.i)
    .slice(0, MAX_FRAGMENTS)
    .sort((a, b) => a.i - b.i)
    .map(({ w }) => w);
}

/** Words `from` to `to` of the text as HTML, matched ones marked. */
function render(plain: string, spans: readonly Span[], from: number, to: number): string {
  let out = '';
  let at = spans[from]!.start;
  for (let i = from; i <= to; i++) {
    const span = spans[i]!;
    out += escapeHtml(plain.slice(at, span.start).replace(/\s+/g, ' '));
    const word = escapeHtml(plain.slice(span.start, span.end));
    out += span.marked ? `<mark>${word}</mark>` : word;
    at = span.end;
  }
  // The text's last word keeps what follows it (a full stop); elsewhere " … " follows.
  return to === spans.length - 1 ? out + escapeHtml(plain.slice(at).replace(/\s+/g, ' ').trimEnd()) : out;
}
