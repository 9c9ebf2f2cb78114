/**
 * Spelling: for a query word the index does not know, or knows from so few
 * cards that the query found next to nothing, the most likely word it
 * meant, from the Lexicon.
 *
 * Candidates are the Lexicon's words with chains whose plain form (accents
 * removed, so "brulee" and "brûlée" are one spelling) is at most
 * MAX_DISTANCE edits from the query word's: insertions, deletions,
 * substitutions and swaps of two neighbours (optimal string alignment).
 * The first letter is trusted, as spellers do (few typos hit it), which
 * keeps the search to the words of a few lengths that start with it: the
 * Lexicon is ordered by the plain form's length, then the plain form, so
 * they are a few contiguous stretches, found by binary search. The best is
 * the closest, then the most frequent, then the first in lexicon order.
 *
 * A known word is corrected only when the query found fewer than FEW_HITS
 * cards and a word one edit away is at least RARER_STEPS steps of the
 * Lexicon's frequency byte (8 a doubling) more frequent: "bridgs" with a
 * card or two against "bridges" in many.
 */

import type { Lexicon, LexiconEntry } from '../common/index/lexicon.js';
import { exactForm, plainForm } from '../common/words.js';
import type { IndexVersion } from './index-version.js';
import type { QueryNode } from './query.js';

export const MAX_DISTANCE = 2;
export const FEW_HITS = 3;
const RARER_STEPS = 16;
/** Words shorter than this are not corrected: too many words are one edit from them. */
const MIN_CORRECTED_CHARS = 3;

/** One query word to replace: its span in the query text and the word meant. */
export interface Correction {
  start: number;
  end: number;
  word: string;
}

/** Three rows of the distance table, reused: a query compares its word with hundreds of candidates. */
let rows = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

/** The edit distance of two strings when it is at most `max` (optimal string alignment), else max + 1. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (rows[0]!.length <= b.length) rows = rows.map(() => new Int32Array(2 * (b.length + 1)));
  let [before, previous, current] = rows as [Int32Array, Int32Array, Int32Array];
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let lowest = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) d = Math.min(d, before[j - 2]! + 1);
      current[j] = d;
      if (d < lowest) lowest = d;
    }
    if (lowest > max) return max + 1;
    [before, previous, current] = [previous, current, before];
  }
  return Math.min(previous[b.length]!, max + 1);
}

/** The code points of a string: its UTF-16 units less one per surrogate pair. */
function codePoints(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) if ((text.charCodeAt(i) & 0xfc00) === 0xdc00) n -= 1;
  return n;
}

/** The first entry in [from, to) whose plain form is not below `key` (the stretch is sorted by plain form). */
function lowerBound(lexicon: Lexicon, from: number, to: number, key: string): number {
  while (from < to) {
    const mid = (from + to) >>> 1;
    if (lexicon.plain(mid) < key) from = mid + 1;
    else to = mid;
  }
  return from;
}

/** The best word within `maxDistance` of `plain` (not `plain` itself) of at least `minFrequency` (the Lexicon's byte), or undefined. */
export function bestCandidate(lexicon: Lexicon, plain: string, maxDistance = MAX_DISTANCE, minFrequency = 0): { entry: LexiconEntry; distance: number } | undefined {
  const first = plain[0]!;
  let best: { at: number; distance: number } | undefined;
  const own = codePoints(plain);
  const { frequencies } = lexicon;
  for (let length = Math.max(1, own - maxDistance); length <= own + maxDistance; length++) {
    const range = lexicon.lengthRange(length);
    if (range === undefined) continue;
    for (let i = lowerBound(lexicon, range[0], range[1], first); i < range[1]; i++) {
      const candidate = lexicon.plain(i);
      if (!candidate.startsWith(first)) break;
      if (lexicon.chainSize(i) === 0 || frequencies[i]! < minFrequency || candidate === plain) continue;
      const distance = editDistance(plain, candidate, maxDistance);
      if (distance > maxDistance) continue;
      if (best === undefined || distance < best.distance || (distance === best.distance && frequencies[i]! > frequencies[best.at]!)) best = { at: i, distance };
    }
  }
  return best === undefined ? undefined : { entry: lexicon.entry(best.at), distance: best.distance };
}

/** The corrections of a query's words; `hits` is how many cards the query found. */
export function corrections(version: Pick<IndexVersion, 'lexicon' | 'wordForms'>, query: QueryNode, hits: number): Correction[] {
  const { lexicon } = version;
  const out: Correction[] = [];
  const visit = (node: QueryNode): void => {
    switch (node.kind) {
      case 'and':
      case 'or':
        node.children.forEach(visit);
        return;
      case 'not':
        return;
      case 'near':
        visit(node.left);
        visit(node.right);
        return;
      case 'word': {
        if (node.prefix || node.exact === true || node.synonym === true) return;
        const { plain } = node.word;
        if ([...plain].length < MIN_CORRECTED_CHARS || /\d/.test(plain)) return;
        // The word in any form the index has (IndexVersion#wordForms, cached), with chains.
        const forms = version.wordForms(node.word).entries.filter((entry) => entry.chainSize > 0);
        if (forms.length > 0 && hits >= FEW_HITS) return;
        const own = Math.max(0, ...forms.map((entry) => entry.frequency));
        const candidate = forms.length === 0 ? bestCandidate(lexicon, plain) : bestCandidate(lexicon, plain, 1, own + RARER_STEPS);
        if (candidate === undefined) return;
        out.push({ start: node.start, end: node.end, word: candidate.entry.word });
        return;
      }
      default:
        return;
    }
  };
  visit(query);
  return out;
}

/** The query with each corrected word replaced (the words keep any field they had). */
export function corrected(query: QueryNode, fixes: readonly Correction[]): QueryNode {
  const fix = (node: QueryNode): QueryNode => {
    switch (node.kind) {
      case 'and':
      case 'or':
        return { ...node, children: node.children.map(fix) };
      case 'near':
        return { ...node, left: fix(node.left) as typeof node.left, right: fix(node.right) as typeof node.right };
      case 'word': {
        const correction = fixes.find((c) => c.start === node.start && c.end === node.end);
        if (correction === undefined) return node;
        const exact = exactForm(correction.word);
        return { ...node, word: { exact, plain: plainForm(exact) } };
      }
      default:
        return node;
    }
  };
  return fix(query);
}
