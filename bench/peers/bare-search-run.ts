/**
 * The bare search loop (bare-search.ts): a floor for matching in process.
 *
 *   node bare-search-run.js STATE QUERIES.tsv PASSES WARMUP
 *
 * Each query of the set is matched as an engine that counts every match
 * and verifies every phrase must match it, and nothing more: its words in
 * their exact forms only (no stem classes, accents or synonyms: sherlock
 * merges those, so this is less work), each word's cards and positions
 * (in the text, and in titles, anchor texts and the other metas, where a
 * phrase matches too) decoded from the state's WordIndex beforehand into
 * plain arrays (not timed), then timed: the cards of every term intersected,
 * smallest list first, galloping through the others; a phrase's candidates
 * kept only where its words stand in a row (the word with fewest positions
 * in the card leads, the others followed by a cursor that steps, then
 * gallops); duplicates and empty cards not counted, as a search does not. No scores, no top
 * 10, no facets, no cards read. Prints {"latenciesMs": [...], "zeroHits": N}
 * like the other peers (pass after pass of the whole set, though each
 * query's passes ran one after the other), and "matches": each query's count.
 */

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CardInfoReader } from '../../common/index/cardinfo.js';
import { currentVersion, indexDirectory } from '../../common/index/layout.js';
import { Lexicon } from '../../common/index/lexicon.js';
import { WordIndexReader } from '../../common/index/chains.js';
import { PACKED_CODE_BITS, WORD_EDGE } from '../../common/index/refs.js';
import { HIDDEN } from '../../searcher/index-version.js';
import { parseQuery, type QueryNode } from '../../searcher/query.js';

/** One word's cards and, for card i, its lines positions[starts[i]..starts[i + 1]), ascending: word positions, then META_LINE + each meta's position (refs.ts packRef). */
interface Word {
  count: number;
  cards: Uint32Array;
  starts: Uint32Array;
  positions: Int32Array;
}

const NO_WORD: Word = { count: 0, cards: new Uint32Array(0), starts: new Uint32Array(1), positions: new Int32Array(0) };

/** A query as this loop matches it: every term must match; a term is one word or a phrase of several. */
type Terms = string[][];

function termsOf(node: QueryNode, out: Terms = []): Terms {
  if (node.kind === 'word' && !node.prefix) out.push([node.word.exact]);
  else if (node.kind === 'phrase') out.push(node.words.map((w) => w.exact));
  else if (node.kind === 'and') for (const child of node.children) termsOf(child, out);
  else throw new Error(`the bare search loop matches words, phrases and AND only, not ${node.kind === 'word' ? 'a prefix' : node.kind}`);
  return out;
}

function decodeWord(lexicon: Lexicon, words: WordIndexReader, exact: string): Word {
  const entry = lexicon.lookup(exact);
  if (entry === undefined) return NO_WORD;
  const packed = words.packedAt(entry.refPos, entry.id);
  const starts = new Uint32Array(packed.count + 1);
  const positions = new Int32Array(packed.refs.length);
  let n = 0;
  for (let i = 0; i < packed.count; i++) {
    const from = n;
    for (let j = packed.starts[i]!; j < packed.starts[i + 1]!; j++) {
      const line = packed.refs[j]! >> PACKED_CODE_BITS;
      if (line !== WORD_EDGE) positions[n++] = line;
    }
    // A chain stores its metas first.
    positions.subarray(from, n).sort();
    starts[i + 1] = n;
  }
  return { count: packed.count, cards: packed.cards, starts, positions };
}

/** The first index ≥ from (below count) whose value is ≥ value (galloping, then binary search). */
function gallop(values: Uint32Array | Int32Array, from: number, count: number, value: number): number {
  let step = 1;
  let hi = from;
  while (hi < count && values[hi]! < value) {
    from = hi + 1;
    hi += step;
    step *= 2;
  }
  if (hi > count) hi = count;
  while (from < hi) {
    const mid = (from + hi) >>> 1;
    if (values[mid]! < value) from = mid + 1;
    else hi = mid;
  }
  return from;
}

/** Whether the words stand in a row in the card at at[w] of each. */
function inRow(words: readonly Word[], at: Int32Array, cursor: Int32Array): boolean {
  let lead = 0;
  for (let w = 1; w < words.length; w++) {
    const a = words[w]!;
    const b = words[lead]!;
    if (a.starts[at[w]! + 1]! - a.starts[at[w]!]! < b.starts[at[lead]! + 1]! - b.starts[at[lead]!]!) lead = w;
  }
  for (let w = 0; w < words.length; w++) cursor[w] = words[w]!.starts[at[w]!]!;
  const leader = words[lead]!;
  const end = leader.starts[at[lead]! + 1]!;
  starts: for (let r = leader.starts[at[lead]!]!; r < end; r++) {
    const start = leader.positions[r]! - lead;
    if (start < 0) continue;
    for (let w = 0; w < words.length; w++) {
      if (w === lead) continue;
      const word = words[w]!;
      const stop = word.starts[at[w]! + 1]!;
      // A few steps by hand, as most cursors move little; galloping past that.
      let c = cursor[w]!;
      for (let step = 0; step < 8 && c < stop && word.positions[c]! < start + w; step++) c++;
      if (c < stop && word.positions[c]! < start + w) c = gallop(word.positions, c, stop, start + w);
      cursor[w] = c;
      if (c >= stop) return false;
      if (word.positions[c]! !== start + w) continue starts;
    }
    return true;
  }
  return false;
}

/** The cards where all of `words` (a phrase when there are several) match, ascending. */
function termCards(words: readonly Word[]): Uint32Array {
  if (words.length === 1) return words[0]!.cards.subarray(0, words[0]!.count);
  const base = words.reduce((a, b) => (b.count < a.count ? b : a));
  const at = new Int32Array(words.length);
  const cursor = new Int32Array(words.length);
  const out = new Uint32Array(base.count);
  let n = 0;
  const b = words.indexOf(base);
  cards: for (let i = 0; i < base.count; i++) {
    const card = base.cards[i]!;
    at[b] = i;
    for (let w = 0; w < words.length; w++) {
      if (w === b) continue;
      const word = words[w]!;
      const j = (at[w] = gallop(word.cards, at[w]!, word.count, card));
      if (j >= word.count || word.cards[j] !== card) continue cards;
    }
    if (inRow(words, at, cursor)) out[n++] = card;
  }
  return out.subarray(0, n);
}

/** How many cards match every term, of those `shown` (1: not a duplicate nor empty). */
function matchCount(terms: readonly (readonly Word[])[], shown: Uint8Array): number {
  const [first, ...others] = terms.map(termCards).sort((x, y) => x.length - y.length);
  const at = new Int32Array(others.length);
  let n = 0;
  cards: for (let i = 0; i < first!.length; i++) {
    const card = first![i]!;
    for (let o = 0; o < others.length; o++) {
      const list = others[o]!;
      const j = (at[o] = gallop(list, at[o]!, list.length, card));
      if (j >= list.length || list[j] !== card) continue cards;
    }
    n += shown[card]!;
  }
  return n;
}

/** 1 for each card a search shows and counts, 0 for a duplicate or an empty card (searcher HIDDEN). */
function shownCards(dir: string): Uint8Array {
  const info = CardInfoReader.open(join(dir, 'CardInfo'));
  const shown = new Uint8Array(info.count);
  for (let id = 0; id < info.count; id++) shown[id] = (info.get(id).flags & HIDDEN) === 0 ? 1 : 0;
  return shown;
}

function main(): void {
  const [state, queryFile, passesArg, warmupArg] = process.argv.slice(2);
  if (state === undefined || queryFile === undefined) throw new Error('usage: bare-search-run.js STATE QUERIES.tsv PASSES WARMUP');
  const passes = Number(passesArg ?? 3);
  const warmup = Number(warmupArg ?? 5);
  const indexDir = indexDirectory(state);
  const version = currentVersion(indexDir);
  if (version === undefined) throw new Error(`no index version in ${indexDir}`);
  const dir = resolve(indexDir, version);
  const lexicon = Lexicon.open(join(dir, 'Lexicon'));
  const index = WordIndexReader.open(join(dir, 'WordIndex'));
  const shown = shownCards(dir);
  const lines = readFileSync(queryFile, 'utf8').split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
  const queries = lines.map((line) => termsOf(parseQuery(line.slice(line.lastIndexOf('\t') + 1))));
  const latencies = new Float64Array(passes * queries.length);
  const matches: number[] = [];
  // Query by query, its words decoded (untimed) and dropped after: all the set's at once would not fit a million documents' memory.
  queries.forEach((terms, q) => {
    const decoded = new Map<string, Word>();
    const words = terms.map((term) => term.map((exact) => decoded.get(exact) ?? decoded.set(exact, decodeWord(lexicon, index, exact)).get(exact)!));
    matches.push(matchCount(words, shown));
    for (let pass = 1; pass < warmup; pass++) matchCount(words, shown);
    for (let pass = 0; pass < passes; pass++) {
      const started = performance.now();
      matchCount(words, shown);
      latencies[pass * queries.length + q] = performance.now() - started;
    }
  });
  index.close();
  process.stdout.write(`${JSON.stringify({ latenciesMs: [...latencies], zeroHits: matches.filter((n) => n === 0).length, matches })}\n`);
}

main();
