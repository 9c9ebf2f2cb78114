/**
 * Evaluating a parsed query (query.ts) over one index version: each node
 * becomes the set of cards it matches, with a score and the positions of
 * its matches (rank.ts refKey: word positions, meta positions above them),
 * which phrases, NEAR and the proximity bonus read.
 *
 * - A word matches its plain form's accent variants (the Lexicon's
 *   variants()); a prefix `word*` the MAX_EXPANSIONS most frequent words
 *   starting so. title:/url: keep only the title's, or the URL words' and
 *   file name's, meta occurrences.
 * - A phrase needs its words at consecutive positions of one space (text or
 *   metas; the indexer leaves a gap at block breaks and between metas, so a
 *   phrase never joins across them); occurrences behind the edge
 *   (WORD_EDGE) have no position and never make a phrase.
 * - AND intersects, OR unites, NOT complements: a NOT stays a complement
 *   (the cards it excludes) until an AND subtracts it; `type:` inside an AND
 *   with something positive is a test on each card, alone a scan of CardInfo.
 *
 * Work bound: at most `budget` chains (cards × words) are decoded per
 * query; a word's chains past it are cut (its lowest card ids kept) and the
 * result says `truncated`, which the total reports as a lower bound. The
 * signal is checked, and the event loop given a turn, before every chain
 * read and every CardInfo scan slice, so a timeout or cancel stops it.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import { cardType, type CardType } from '../common/index-cardinfo.js';
import type { LexiconEntry } from '../common/index-lexicon.js';
import { WORD_EDGE, type Chain } from '../common/index-refs.js';
import { hasAccents } from '../common/words.js';
import type { IndexVersion } from './index-version.js';
import type { Field, QueryNode, TermNode } from './query.js';
import { ACCENT_BONUS, NEAR_BONUS, PHRASE_BONUS, SECOND_DIVISOR, minGap, proximity, refKey, refWeight } from './rank.js';

export const MAX_EXPANSIONS = 64;
export const MAX_CHAINS = 2_000_000;
const SCAN_SLICE = 65_536;

/** Meta types (doc-body.ts META_TYPES) a field keeps. */
const FIELD_METAS: Record<Field, readonly number[]> = { title: [0], url: [3, 4] };

export interface Match {
  score: number;
  /** Positions of the matches, ascending (rank.ts refKey). */
  keys: number[];
}

export type Matches = Map<number, Match>;

/** A node's cards; `negated`: the cards it excludes (everything else matches). */
interface Result {
  cards: Matches;
  negated: boolean;
}

/** One word's occurrences in one card. */
interface Occurrences {
  best: number;
  second: number;
  /** Positioned occurrences, ascending, and their weights. */
  keys: number[];
  weights: number[];
  /** Some occurrence has the query word's exact form. */
  exact: boolean;
}

const positive = (cards: Matches): Result => ({ cards, negated: false });

function mergeKeys(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]! <= b[j]!)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}

export class Evaluation {
  truncated = false;

  constructor(
    private readonly version: IndexVersion,
    private readonly signal: AbortSignal,
    private budget = MAX_CHAINS,
  ) {}

  /** The cards `query` matches. */
  async run(query: QueryNode): Promise<Matches> {
    const result = await this.node(query);
    // The parser refuses a query that only excludes; a complement at the top matches nothing then.
    return result.negated ? new Map() : result.cards;
  }

  private async node(node: QueryNode): Promise<Result> {
    switch (node.kind) {
      case 'word':
      case 'phrase':
        return positive(await this.term(node));
      case 'near':
        return positive(await this.near(node));
      case 'site':
        return positive(this.site(node.host));
      case 'type':
        return positive(await this.typeScan(node.types));
      case 'not': {
        const inner = await this.node(node.child);
        return { cards: inner.cards, negated: !inner.negated };
      }
      case 'and':
        return this.and(node.children);
      case 'or':
        return this.or(node.children);
    }
  }

  private async and(children: readonly QueryNode[]): Promise<Result> {
    const hasPositive = children.some((c) => c.kind !== 'type' && c.kind !== 'not');
    const tests = hasPositive ? children.filter((c) => c.kind === 'type').map((c) => new Set(c.types.map(cardType))) : [];
    const results: Result[] = [];
    for (const child of children) if (!(hasPositive && child.kind === 'type')) results.push(await this.node(child));
    const included = results.filter((r) => !r.negated).map((r) => r.cards);
    const excluded = results.filter((r) => r.negated).map((r) => r.cards);
    if (included.length === 0) return { cards: unite(excluded), negated: true };
    const [smallest] = [...included].sort((a, b) => a.size - b.size);
    const out: Matches = new Map();
    for (const cardId of smallest!.keys()) {
      if (excluded.some((cards) => cards.has(cardId))) continue;
      if (tests.some((types) => !types.has(this.version.info(cardId).type))) continue;
      const parts = included.map((cards) => cards.get(cardId));
      if (parts.some((part) => part === undefined)) continue;
      let score = 0;
      let keys: number[] = [];
      parts.forEach((part, i) => {
        score += part!.score;
        if (i > 0) score += proximity(minGap(parts[i - 1]!.keys, part!.keys));
        keys = mergeKeys(keys, part!.keys);
      });
      out.set(cardId, { score, keys });
    }
    return positive(out);
  }

  private async or(children: readonly QueryNode[]): Promise<Result> {
    const results: Result[] = [];
    for (const child of children) results.push(await this.node(child));
    const union = unite(results.filter((r) => !r.negated).map((r) => r.cards));
    const excluded = results.filter((r) => r.negated).map((r) => r.cards);
    if (excluded.length === 0) return positive(union);
    // a OR -b OR -c = everything but the cards in both b and c and not in a.
    const [first, ...others] = excluded;
    const out: Matches = new Map();
    for (const [cardId, match] of first!) if (!union.has(cardId) && others.every((cards) => cards.has(cardId))) out.set(cardId, match);
    return { cards: out, negated: true };
  }

  /** The chains of one Lexicon entry within the work bound. */
  private async read(entry: LexiconEntry): Promise<Chain[]> {
    this.signal.throwIfAborted();
    await nextTurn();
    this.signal.throwIfAborted();
    const chains = this.version.chains(entry, this.budget);
    this.budget -= chains.length;
    if (this.budget <= 0) this.truncated = true;
    return chains;
  }

  /** The entries a query word stands for: its accent variants, or a prefix's expansions. */
  private entries(node: TermNode, at: number): LexiconEntry[] {
    if (node.kind === 'word' && node.prefix) {
      const { entries, more } = this.version.prefixed(node.word.plain, MAX_EXPANSIONS);
      if (more) this.truncated = true;
      return entries;
    }
    const word = node.kind === 'word' ? node.word : node.words[at]!;
    return this.version.lexicon.variants(word.plain);
  }

  /** Where the `at`-th word of a term occurs, per card, within its field. */
  private async occurrences(node: TermNode, at: number): Promise<Map<number, Occurrences>> {
    const exact = node.kind === 'word' ? node.word.exact : node.words[at]!.exact;
    const metas = node.field === undefined ? undefined : FIELD_METAS[node.field];
    const entries = this.entries(node, at);
    const out = new Map<number, Occurrences>();
    for (const entry of entries) {
      for (const chain of await this.read(entry)) {
        let occ = out.get(chain.cardId);
        for (const ref of chain.refs) {
          if (metas !== undefined && (ref.kind !== 'meta' || !metas.includes(ref.type))) continue;
          occ ??= { best: 0, second: 0, keys: [], weights: [], exact: false };
          const weight = refWeight(ref);
          if (weight > occ.best) [occ.best, occ.second] = [weight, occ.best];
          else if (weight > occ.second) occ.second = weight;
          if (ref.kind === 'meta' || ref.position !== WORD_EDGE) {
            occ.keys.push(refKey(ref));
            occ.weights.push(weight);
          }
          occ.exact ||= entry.word === exact;
        }
        if (occ !== undefined) out.set(chain.cardId, occ);
      }
    }
    // Refs come metas first, then words; several variants interleave: sort the keys (with their weights).
    for (const occ of out.values()) {
      if (occ.keys.every((key, i) => i === 0 || occ.keys[i - 1]! < key)) continue;
      const order = occ.keys.map((_, i) => i).sort((a, b) => occ.keys[a]! - occ.keys[b]!);
      [occ.keys, occ.weights] = [order.map((i) => occ.keys[i]!), order.map((i) => occ.weights[i]!)];
    }
    return out;
  }

  private async term(node: TermNode): Promise<Matches> {
    return node.kind === 'word' ? this.word(node) : this.phrase(node);
  }

  private async word(node: Extract<TermNode, { kind: 'word' }>): Promise<Matches> {
    const bonus = !node.prefix && hasAccents(node.word) ? ACCENT_BONUS : 0;
    const out: Matches = new Map();
    for (const [cardId, occ] of await this.occurrences(node, 0)) {
      out.set(cardId, { score: occ.best + occ.second / SECOND_DIVISOR + (occ.exact ? bonus : 0), keys: occ.keys });
    }
    return out;
  }

  private async phrase(node: Extract<TermNode, { kind: 'phrase' }>): Promise<Matches> {
    const words: Array<Map<number, Occurrences>> = [];
    for (let i = 0; i < node.words.length; i++) words.push(await this.occurrences(node, i));
    const accented = node.words.some(hasAccents);
    const out: Matches = new Map();
    for (const [cardId, first] of words[0]!) {
      const occs = words.map((w) => w.get(cardId));
      if (occs.some((occ) => occ === undefined)) continue;
      const at = occs.map((occ) => new Map(occ!.keys.map((key, i) => [key, occ!.weights[i]!])));
      const best = new Array<number>(occs.length).fill(0);
      const keys: number[] = [];
      for (const start of first.keys) {
        if (!at.every((positions, i) => positions.has(start + i))) continue;
        at.forEach((positions, i) => {
          best[i] = Math.max(best[i]!, positions.get(start + i)!);
          keys.push(start + i);
        });
      }
      if (keys.length === 0) continue;
      const exact = accented && occs.every((occ) => occ!.exact);
      const score = best.reduce((a, b) => a + b, 0) + PHRASE_BONUS * (occs.length - 1) + (exact ? ACCENT_BONUS : 0);
      out.set(cardId, { score, keys: keys.sort((a, b) => a - b) });
    }
    return out;
  }

  private async near(node: Extract<QueryNode, { kind: 'near' }>): Promise<Matches> {
    const left = await this.term(node.left);
    const right = await this.term(node.right);
    const out: Matches = new Map();
    for (const [cardId, l] of left) {
      const r = right.get(cardId);
      if (r === undefined) continue;
      const gap = minGap(l.keys, r.keys);
      if (gap > node.distance) continue;
      out.set(cardId, { score: l.score + r.score + (NEAR_BONUS * (node.distance + 1 - gap)) / node.distance, keys: mergeKeys(l.keys, r.keys) });
    }
    return out;
  }

  /** Cards on `host` or below it: the StringIndex's host, www.host and domain strings. */
  private site(host: string): Matches {
    const out: Matches = new Map();
    for (const [kind, value] of [['host', host], ['host', `www.${host}`], ['domain', host]] as const) {
      for (const chain of this.version.stringChains(kind, value)) out.set(chain.cardId, { score: 0, keys: [] });
    }
    return out;
  }

  /** Every card of one of `types` (MIME types, matched by their coarse CardInfo type). */
  private async typeScan(types: readonly string[]): Promise<Matches> {
    const wanted = new Set<CardType>(types.map(cardType));
    const out: Matches = new Map();
    for (let from = 0; from < this.version.cardCount; from += SCAN_SLICE) {
      this.signal.throwIfAborted();
      await nextTurn();
      for (let id = from; id < Math.min(from + SCAN_SLICE, this.version.cardCount); id++) {
        if (wanted.has(this.version.info(id).type)) out.set(id, { score: 0, keys: [] });
      }
    }
    return out;
  }
}

/** The union of card sets, scores added, keys merged. */
function unite(sets: readonly Matches[]): Matches {
  const out: Matches = new Map();
  for (const cards of sets) {
    for (const [cardId, match] of cards) {
      const had = out.get(cardId);
      out.set(cardId, had === undefined ? match : { score: had.score + match.score, keys: mergeKeys(had.keys, match.keys) });
    }
  }
  return out;
}
