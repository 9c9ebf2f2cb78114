/**
 * Evaluating a parsed query (query.ts) over one index version: each node
 * becomes the cards it matches (Hits: ascending card ids in a typed array),
 * a score per card and, where a parent needs them, the occurrences that
 * matched (packed refs, common/index/refs.ts packRef, ascending by line), which
 * phrases, NEAR and the proximity bonus read.
 *
 * - A word matches its plain form's accent variants (the Lexicon's
 *   variants()) and the words of its stem classes: the word stemmed in
 *   each language the Lexicon has stems of (common/language/stem.ts), the
 *   words of that (language, stem); a card matched only through stem
 *   variants scores STEM_FACTOR of what the same occurrences would as the
 *   word itself. `=word` takes the exact form only. A prefix `word*` the
 *   MAX_EXPANSIONS most frequent words starting so. title:/url: keep only
 *   the title's, or the URL words' and file name's, meta occurrences.
 * - A phrase needs its words at consecutive positions of one space (text or
 *   metas; the indexer leaves a gap at block breaks and between metas, so a
 *   phrase never joins across them); occurrences behind the edge
 *   (WORD_EDGE) have no position and never make a phrase.
 * - AND intersects (galloping from the smallest set), OR unites, NOT
 *   complements: a NOT stays a complement (the cards it excludes) until an
 *   AND subtracts it; `type:` and `lang:` inside an AND with something
 *   positive are a test on each card (CardTest), alone a scan of the
 *   CardInfo columns.
 *
 * - A phrase or an AND at the top is a Matcher: its cards, each with a
 *   bound of its score, scored one by one only where ranking needs them
 *   (index-engine.ts rankVersion prunes by the bounds).
 *
 * Nothing is allocated per occurrence or per card: a word with one variant
 * and no field uses the cached columns of its chains as they are, a word
 * of several merges its forms' score inputs (form-merge.ts), and
 * every other node writes into typed arrays. Refs are read card by card
 * (card-refs.ts), only for the cards a phrase, NEAR or the proximity and
 * title bonuses look into, which ranking's bounds keep to those that can
 * reach the top.
 *
 * Work bound: at most `budget` chains (cards × words) are decoded per
 * query; a word's chains past it are cut (its lowest card ids kept) and the
 * result says `truncated`, which the total reports as a lower bound. The
 * signal is checked before every chain read, and the event loop given a turn
 * after every YIELD_WORK chains read or cards scanned, so a timeout or
 * cancel stops a long query while a short one runs in one go.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import { CARD_TYPES, cardType } from '../common/index/cardinfo.js';
import type { LexiconEntry } from '../common/index/lexicon.js';
import { META_LINE, PACKED_CODE_BITS, PACKED_META, WORD_EDGE } from '../common/index/refs.js';
import { languageCode } from '../common/language/codes.js';
import { hasAccents } from '../common/words.js';
import { MergedRefs, NO_REFS, StoredRefs, type CardRefs } from './card-refs.js';
import { mergeForms } from './form-merge.js';
import { MAX_FORMS, type CardColumns, type IndexVersion, type Occurrences, type Postings, type WordForms } from './index-version.js';
import type { Field, QueryNode, TermNode } from './query.js';
import { ACCENT_BONUS, CODE_MASK, CODE_META, CODE_TF, NEAR_BONUS, PHRASE_BONUS, FORM, FORM_FACTORS, TITLE_BONUS, idf, inputScore, lineAt, minGap, phraseShape, refInputs, phraseWordBound, phraseWordScore, proximity, seek, sortKeys, TITLE_META, titleClass, titleOf } from './rank.js';

export const MAX_EXPANSIONS = 64;
export const MAX_CHAINS = 2_000_000;
/** Chains read or cards scanned between two turns given to the event loop. */
const YIELD_WORK = 65_536;

/** Meta types (doc-body.ts META_TYPES) a field keeps, one bit per type. */
const FIELD_METAS: Record<Field, number> = { title: 1 << 0, url: (1 << 3) | (1 << 4) };

/** A node's cards, ascending, with scores; `refs` when asked for: card i's matches, loaded card by card (card-refs.ts). */
export interface Hits {
  count: number;
  cards: Uint32Array;
  /** Read only: they may be the chain cache's. */
  scores: Float64Array | Float32Array;
  refs: CardRefs | undefined;
  /** One word's hits: its score inputs in each card (rank.ts refInputs), which tell whether a title has it. */
  bodies?: Uint32Array;
}


/** A node's cards; `negated`: the cards it excludes (everything else matches). */
interface Result {
  hits: Hits;
  negated: boolean;
}

const NO_HITS: Hits = { count: 0, cards: new Uint32Array(0), scores: new Float64Array(0), refs: NO_REFS };

/** Hits written card by card into arrays that grow by doubling. */
class HitsBuilder {
  count = 0;
  cards: Uint32Array;
  scores: Float64Array;
  exact: Uint8Array;
  starts: Uint32Array | undefined;
  keys: Int32Array | undefined;
  /** Keys written so far. */
  used = 0;

  /** `keyCapacity`: the keys expected, when known (the arrays grow past it anyway). */
  constructor(capacity: number, keys: boolean, keyCapacity = capacity) {
    const n = Math.max(16, capacity);
    this.cards = new Uint32Array(n);
    this.scores = new Float64Array(n);
    this.exact = new Uint8Array(n);
    if (keys) {
      this.starts = new Uint32Array(n + 1);
      this.keys = new Int32Array(Math.max(16, keyCapacity));
    }
  }

  /** Appends the refs loaded in `refs` to the keys of the card being built. */
  copyKeys(refs: CardRefs): void {
    const { from, to } = refs;
    const keys = this.room(to - from);
    keys.set(refs.keys.subarray(from, to), this.used);
    this.used += to - from;
  }

  key(ref: number): void {
    this.room(1)[this.used++] = ref;
  }

  private room(n: number): Int32Array {
    let keys = this.keys!;
    if (this.used + n > keys.length) {
      const grown = new Int32Array(Math.max(2 * keys.length, this.used + n));
      grown.set(keys.subarray(0, this.used));
      this.keys = keys = grown;
    }
    return keys;
  }

  /** Forgets the keys written since the last card added. */
  drop(): void {
    if (this.starts !== undefined) this.used = this.starts[this.count]!;
  }

  /** Adds a card with the keys written since the last one; `sort`: they came from several lists. */
  add(cardId: number, score: number, exact: number, sort: boolean): void {
    if (this.count === this.cards.length) this.grow();
    const { count } = this;
    this.cards[count] = cardId;
    this.scores[count] = score;
    this.exact[count] = exact;
    if (this.starts !== undefined) {
      const from = this.starts[count]!;
      if (sort && this.used - from > 1) sortKeys(this.keys!, from, this.used);
      this.starts[count + 1] = this.used;
    }
    this.count += 1;
  }

  private grow(): void {
    const n = 2 * this.cards.length;
    const more = <T extends Uint32Array | Float64Array | Uint8Array>(from: T, to: T): T => {
      to.set(from);
      return to;
    };
    this.cards = more(this.cards, new Uint32Array(n));
    this.scores = more(this.scores, new Float64Array(n));
    this.exact = more(this.exact, new Uint8Array(n));
    if (this.starts !== undefined) this.starts = more(this.starts, new Uint32Array(n + 1));
  }

  hits(): Hits {
    return { count: this.count, cards: this.cards, scores: this.scores, refs: this.starts === undefined ? undefined : new StoredRefs(this.starts, this.keys!) };
  }
}

/**
 * The columns of several lists, each kind in an array of its own: Hits come
 * in several object shapes, and a loop reading through them would be
 * polymorphic at every load. A list without refs (site:'s) gets none.
 */
function columnsOf(lists: readonly Hits[]) {
  return {
    cards: lists.map((hits) => hits.cards),
    counts: lists.map((hits) => hits.count),
    scores: lists.map((hits) => hits.scores),
    refs: lists.map((hits) => hits.refs ?? NO_REFS),
  };
}

/** Read-only arrays of zeros and of ones, grown as needed: a word of one variant is exact in all its cards or in none. */
const SAME: [Uint8Array, Uint8Array] = [new Uint8Array(1024), new Uint8Array(1024).fill(1)];

function same(value: 0 | 1, count: number): Uint8Array {
  if (SAME[value].length < count) SAME[value] = new Uint8Array(Math.max(count, 2 * SAME[value].length)).fill(value);
  return SAME[value].subarray(0, count);
}

/** The FORM of a synonym's form: a synonym, or a word of its stem class. */
const asSynonym = (kind: number): number => (kind === FORM.stem ? FORM.synonymStem : FORM.synonym);

/**
 * A range of card ids an Evaluation is restricted to (windows.ts): each
 * entry's chains in it, and the whole version's union of a several-form
 * word's cards by its forms key, which its IDF counts.
 */
export interface CardWindow {
  postings(entry: LexiconEntry): Postings;
  union(formsKey: string): number | undefined;
}

/** What a word's merged occurrences depend on besides the version: its exact form, the languages it is stemmed in, its synonyms. */
export function formsKey(node: TermNode, exact: string, languages: readonly number[] | undefined): string {
  const synonyms = node.kind === 'word' ? (node.synonyms ?? []).map((w) => w.exact).join(' ') : '';
  return `${exact}\u0000${languages?.join(',') ?? ''}\u0000${node.synonym === true ? 's' : ''}${synonyms}`;
}

export class Evaluation {
  truncated = false;
  /** Work since the event loop last had a turn. */
  private work = 0;

  /**
   * `languages`: the languages (numbers) a query word is stemmed in, the
   * query's own when it names them (`lang:`, filters.lang), else the
   * version's main languages (IndexVersion#wordForms).
   */
  constructor(
    private readonly version: IndexVersion,
    private readonly signal: AbortSignal,
    private readonly languages?: readonly number[],
    private budget = MAX_CHAINS,
    private readonly window?: CardWindow,
  ) {}

  /** The cards `query` matches, with their scores (no keys). */
  async run(query: QueryNode): Promise<Hits> {
    const result = await this.node(query, false);
    // The parser refuses a query that only excludes; a complement at the top matches nothing then.
    return result.negated ? NO_HITS : result.hits;
  }

  /**
   * The cards `query` may match, each with a bound of its score, for a top-k
   * that scores only the cards that can still enter it (rank.ts): a phrase's
   * positions and an AND's proximity are looked at card by card there.
   */
  async matcher(query: QueryNode): Promise<Matcher> {
    if (query.kind === 'phrase') return this.phraseMatch(query);
    if (query.kind === 'and') {
      const match = await this.andMatch(query.children);
      return match instanceof AndMatch ? match : new Matched(NO_HITS);
    }
    return new Matched(await this.run(query));
  }

  /** Gives the event loop a turn once enough work was done since the last; checks the signal. */
  private async pace(work: number): Promise<void> {
    this.signal.throwIfAborted();
    this.work += work;
    if (this.work < YIELD_WORK) return;
    this.work = 0;
    await nextTurn();
    this.signal.throwIfAborted();
  }

  private async node(node: QueryNode, keys: boolean): Promise<Result> {
    switch (node.kind) {
      case 'word':
      case 'phrase':
        return positive(await this.term(node, keys));
      case 'near':
        return positive(await this.near(node, keys));
      case 'site':
        return positive(this.site(node.host, keys));
      case 'type':
      case 'lang':
      case 'date':
        return positive(await this.scan(cardTest(node, this.version.columns), keys));
      case 'not': {
        const inner = await this.node(node.child, false);
        return { hits: inner.hits, negated: !inner.negated };
      }
      case 'and':
        return this.and(node.children, keys);
      case 'or':
        return this.or(node.children, keys);
    }
  }

  private async and(children: readonly QueryNode[], keys: boolean): Promise<Result> {
    const match = await this.andMatch(children);
    if (!(match instanceof AndMatch)) return match;
    return positive(scoreAll(match, keys));
  }

  /** An AND's children evaluated, as the AndMatch of its cards, or its complement when nothing in it is positive. */
  private async andMatch(children: readonly QueryNode[]): Promise<AndMatch | Result> {
    const isTest = (c: QueryNode): c is TestNode => c.kind === 'type' || c.kind === 'lang' || c.kind === 'date';
    const hasPositive = children.some((c) => !isTest(c) && c.kind !== 'not');
    // Each type: or lang: child inside a positive AND is a test of each card's CardInfo byte.
    const tests = hasPositive ? children.filter(isTest).map((c) => cardTest(c, this.version.columns)) : [];
    const results: Result[] = [];
    for (const child of children) if (!(hasPositive && isTest(child))) results.push(await this.node(child, true));
    const included = results.filter((r) => !r.negated).map((r) => r.hits);
    const excluded = results.filter((r) => r.negated).map((r) => r.hits);
    if (included.length === 0) return { hits: unite(excluded, false), negated: true };
    return new AndMatch(included, excluded, tests, children.reduce((n, child) => n + wordsOf(child), 0));
  }

  private async or(children: readonly QueryNode[], keys: boolean): Promise<Result> {
    const results: Result[] = [];
    for (const child of children) results.push(await this.node(child, keys));
    const union = unite(
      results.filter((r) => !r.negated).map((r) => r.hits),
      keys,
    );
    const excluded = results.filter((r) => r.negated).map((r) => r.hits);
    if (excluded.length === 0) return positive(union);
    // a OR -b OR -c = everything but the cards in both b and c and not in a.
    const [first, ...others] = excluded;
    const out = new HitsBuilder(first!.count, false);
    let u = 0;
    const at = new Int32Array(others.length);
    cards: for (let i = 0; i < first!.count; i++) {
      const cardId = first!.cards[i]!;
      u = seek(union.cards, u, union.count, cardId);
      if (u < union.count && union.cards[u] === cardId) continue;
      for (let o = 0; o < others.length; o++) {
        const hits = others[o]!;
        const j = (at[o] = seek(hits.cards, at[o]!, hits.count, cardId));
        if (j >= hits.count || hits.cards[j] !== cardId) continue cards;
      }
      out.add(cardId, first!.scores[i]!, 0, false);
    }
    return { hits: out.hits(), negated: true };
  }

  /** The chains of one Lexicon entry within the work bound. */
  private async read(entry: LexiconEntry): Promise<Postings> {
    await this.pace(0);
    const chains = this.window === undefined ? this.version.postings(entry, this.budget) : this.window.postings(entry);
    this.budget -= chains.count;
    if (this.budget <= 0) this.truncated = true;
    await this.pace(chains.count);
    return chains;
  }

  /**
   * The entries a query word stands for and how (FORM): the exact form
   * alone (`=word`), its accent variants and stem classes and its
   * synonyms' (in the query's languages), or a prefix's expansions.
   */
  entries(node: TermNode, at: number): WordForms {
    if (node.kind === 'word' && node.prefix) {
      const { entries, more } = this.version.prefixed(node.word.plain, MAX_EXPANSIONS);
      if (more) this.truncated = true;
      return { entries, kinds: new Uint8Array(entries.length) };
    }
    const word = node.kind === 'word' ? node.word : node.words[at]!;
    if (node.exact === true) {
      const entry = this.version.lexicon.lookup(word.exact);
      return entry === undefined ? { entries: [], kinds: new Uint8Array(0) } : { entries: [entry], kinds: new Uint8Array(1) };
    }
    const forms = this.version.wordForms(word, this.languages);
    // A synonym put in by synonyms.ts (a word or a phrase of several): every form of it is a synonym's.
    if (node.synonym === true) return { entries: forms.entries, kinds: forms.kinds.map(asSynonym) };
    const synonyms = node.kind === 'word' ? (node.synonyms ?? []) : [];
    if (synonyms.length === 0) return forms;
    const entries = [...forms.entries];
    const kinds = [...forms.kinds];
    const seen = new Set(entries.map((entry) => entry.id));
    for (const synonym of synonyms) {
      const their = this.version.wordForms(synonym, this.languages);
      their.entries.forEach((entry, i) => {
        if (seen.has(entry.id) || entries.length >= MAX_FORMS) return;
        seen.add(entry.id);
        entries.push(entry);
        kinds.push(asSynonym(their.kinds[i]!));
      });
    }
    return { entries, kinds: Uint8Array.from(kinds) };
  }

  /**
   * Where the `at`-th word of a term occurs, per card, within its field;
   * the score of a card is rank.ts occurrenceScore. The IDF of several
   * forms (or a prefix's words) counts the cards that have any of them
   * (anywhere, whatever the field): adding up their chains would count a
   * card with "user" and "users" twice, and a common word of many forms
   * would reach every card, an IDF of nothing.
   */
  async occurrences(node: TermNode, at: number): Promise<Occurrences> {
    const exact = node.kind === 'word' ? node.word.exact : node.words[at]!.exact;
    const metas = node.field === undefined ? -1 : FIELD_METAS[node.field];
    // A word of several forms is a k-way merge: kept, as its chains are, for the next query with the word as typed (in the same languages, with the same synonyms).
    const mergeKey = metas < 0 && !(node.kind === 'word' && node.prefix) && node.exact !== true ? formsKey(node, exact, this.languages) : undefined;
    // A window's are a part, not to be kept nor taken for the whole.
    const cached = mergeKey === undefined || this.window !== undefined ? undefined : this.version.merged(mergeKey);
    if (cached !== undefined) return cached;
    const truncatedBefore = this.truncated;
    const { entries, kinds } = this.entries(node, at);
    const lists: Postings[] = [];
    for (const entry of entries) lists.push(await this.read(entry));
    if (lists.length === 1 && metas < 0 && kinds[0] === FORM.word) {
      // One variant, every occurrence: the cached columns and scores as they are.
      const { count, cards, scores, bodies, metas, refs, idf } = lists[0]!;
      return { count, cards, scores, bodies, metas, refs, exact: same(entries[0]!.word === exact ? 1 : 0, count), idf };
    }
    const isExact = Uint8Array.from(entries, (entry) => (entry.word === exact ? 1 : 0));
    const union = mergeKey === undefined ? undefined : this.window?.union(mergeKey);
    const occurrences = metas < 0 ? this.merge(lists, kinds, isExact, union) : this.field(lists, kinds, isExact, metas);
    // Cut by the work bound, it is this query's share only.
    if (mergeKey !== undefined && this.window === undefined && this.truncated === truncatedBefore) this.version.keepMerged(mergeKey, occurrences);
    return occurrences;
  }

  /**
   * Several forms of a word: their score inputs merged by card (form-merge.ts:
   * as their refs together would give them); the refs stay in the forms'
   * chains (card-refs.ts MergedRefs). The IDF counts the union (occurrences()),
   * the whole version's `union` when the lists are a window's.
   */
  private merge(lists: readonly Postings[], kinds: Uint8Array, isExact: Uint8Array, union?: number): Occurrences {
    const { norms, length } = this.version.columns;
    const { count, cards, bodies, metas, closest, exact, present } = mergeForms(lists, kinds, isExact, length.length);
    // A list cut by the work bound estimates its whole count (`total`); the union has at least the largest.
    const wordIdf = idf(Math.max(union ?? count, ...lists.map((l) => l.total)), length.length);
    // A loop: Float32Array.from with a map function takes V8's slow generic path.
    const scores = new Float32Array(count);
    for (let i = 0; i < count; i++) scores[i] = FORM_FACTORS[closest[i]!]! * inputScore(bodies[i]!, metas[i]!, norms[length[cards[i]!]!]!, wordIdf);
    return { count, cards, scores, refs: new MergedRefs(cards, present, lists), exact, idf: wordIdf, bodies, metas };
  }

  /**
   * A word in a field (title:, url:): a k-way merge by card of its forms'
   * refs, keeping the meta occurrences the field takes (`metas`, a bit per
   * meta type), scored as occurrences; cards without one are left out.
   */
  private field(lists: readonly Postings[], kinds: Uint8Array, isExact: Uint8Array, metas: number): Occurrences {
    let union = 0;
    const cursor = new Int32Array(lists.length);
    const out = new HitsBuilder(
      lists.reduce((n, l) => n + l.count, 0),
      true,
    );
    for (let cardId = lowest(lists, cursor); cardId >= 0; cardId = lowest(lists, cursor)) {
      union += 1;
      const first = out.used;
      let exactHere = 0;
      let closest: number = FORM.synonymStem;
      let parts = 0;
      for (let l = 0; l < lists.length; l++) {
        const i = take(lists, cursor, l, cardId);
        if (i < 0) continue;
        const refs = lists[l]!.refs;
        refs.load(i);
        const before = out.used;
        for (let j = refs.from; j < refs.to; j++) {
          const ref = refs.keys[j]!;
          if ((ref & PACKED_META) !== 0 && ((metas >> ((ref >> 2) & 15)) & 1) !== 0) out.key(ref);
        }
        if (out.used > before) {
          exactHere |= isExact[l]!;
          parts += 1;
          if (kinds[l]! < closest) closest = kinds[l]!;
        }
      }
      // The form's factor for now; × the card's score below.
      if (out.used > first) out.add(cardId, FORM_FACTORS[closest]!, exactHere, parts > 1);
    }
    const hits = out.hits();
    const wordIdf = idf(Math.max(union, ...lists.map((l) => l.total)), this.version.columns.length.length);
    const { norms, length } = this.version.columns;
    const { starts, keys } = out;
    const scores = new Float32Array(hits.count);
    const bodies = new Uint32Array(hits.count);
    const inputs = new Uint32Array(hits.count);
    for (let i = 0; i < hits.count; i++) {
      refInputs(keys!, starts![i]!, starts![i + 1]!, bodies, inputs, i);
      scores[i] = hits.scores[i]! * inputScore(bodies[i]!, inputs[i]!, norms[length[hits.cards[i]!]!]!, wordIdf);
    }
    return { count: hits.count, cards: hits.cards, scores, bodies, metas: inputs, refs: hits.refs!, exact: out.exact.subarray(0, hits.count), idf: wordIdf };
  }

  private async term(node: TermNode, keys: boolean): Promise<Hits> {
    return node.kind === 'word' ? this.word(node) : this.phrase(node, keys);
  }

  private async word(node: Extract<TermNode, { kind: 'word' }>): Promise<Hits> {
    const occ = await this.occurrences(node, 0);
    if (node.prefix || !hasAccents(node.word)) return occ;
    const scores = new Float32Array(occ.count);
    for (let i = 0; i < occ.count; i++) scores[i] = occ.scores[i]! + (occ.exact[i] === 1 ? ACCENT_BONUS : 0);
    return { ...occ, scores };
  }

  private async phrase(node: Extract<TermNode, { kind: 'phrase' }>, keys: boolean): Promise<Hits> {
    return scoreAll(await this.phraseMatch(node), keys);
  }

  private async phraseMatch(node: Extract<TermNode, { kind: 'phrase' }>): Promise<PhraseMatch> {
    const words: Occurrences[] = [];
    for (let i = 0; i < node.words.length; i++) words.push(await this.occurrences(node, i));
    const { norms, length } = this.version.columns;
    return new PhraseMatch(words, node.words.some(hasAccents), norms, length);
  }

  private async near(node: Extract<QueryNode, { kind: 'near' }>, keys: boolean): Promise<Hits> {
    const left = await this.term(node.left, true);
    const right = await this.term(node.right, true);
    const out = new HitsBuilder(Math.min(left.count, right.count), keys);
    let j = 0;
    for (let i = 0; i < left.count; i++) {
      const cardId = left.cards[i]!;
      j = seek(right.cards, j, right.count, cardId);
      if (j >= right.count) break;
      if (right.cards[j] !== cardId) continue;
      const l = left.refs!;
      l.load(i);
      // Loaded before the right's: the same word on both sides is one reader, and loading it again gives the same refs.
      const lKeys = l.keys;
      const { from: lFrom, to: lTo } = l;
      const r = right.refs!;
      r.load(j);
      const gap = minGap(lKeys, lFrom, lTo, r.keys, r.from, r.to);
      if (gap > node.distance) continue;
      if (keys) {
        l.load(i);
        out.copyKeys(l);
        r.load(j);
        out.copyKeys(r);
      }
      out.add(cardId, left.scores[i]! + right.scores[j]! + (NEAR_BONUS * (node.distance + 1 - gap)) / node.distance, 0, true);
    }
    return out.hits();
  }

  /** Cards on `host` or below it: the StringIndex's host, www.host and domain strings. */
  private site(host: string, keys: boolean): Hits {
    const lists = [this.version.stringCards('host', host), this.version.stringCards('host', `www.${host}`), this.version.stringCards('domain', host)];
    return unite(
      lists.map((cards) => ({ count: cards.length, cards, scores: new Float64Array(cards.length), refs: undefined })),
      keys,
    );
  }

  /** Every card that passes `test`. */
  private async scan(test: CardTest, keys: boolean): Promise<Hits> {
    const count = this.version.columns.weight.length;
    const out = new HitsBuilder(0, keys);
    for (let from = 0; from < count; from += YIELD_WORK) {
      await this.pace(YIELD_WORK);
      const to = Math.min(from + YIELD_WORK, count);
      for (let id = from; id < to; id++) if (test(id)) out.add(id, 0, 0, false);
    }
    return out.hits();
  }
}

const positive = (hits: Hits): Result => ({ hits, negated: false });

type TestNode = Extract<QueryNode, { kind: 'type' | 'lang' | 'date' }>;

/** Whether a card (by id) passes a test of its CardInfo columns. */
export type CardTest = (cardId: number) => boolean;

/**
 * The test a `type:` (MIME types, matched by their coarse CardInfo type),
 * `lang:` or `after:`/`before:` node makes: a byte's values looked up in a
 * table of 256, or the date in a range (a card of unknown date, 0, is in
 * none).
 */
export function cardTest(node: TestNode, columns: CardColumns): CardTest {
  if (node.kind === 'date') {
    const { date } = columns;
    const { from, to } = node;
    return (cardId) => date[cardId]! >= from && date[cardId]! < to;
  }
  const accept = new Uint8Array(256);
  if (node.kind === 'type') for (const type of node.types) accept[CARD_TYPES.indexOf(cardType(type))] = 1;
  else for (const lang of node.languages) accept[languageCode(lang)] = 1;
  const column = node.kind === 'type' ? columns.type : columns.language;
  return (cardId) => accept[column[cardId]!] === 1;
}

/** The lowest card id at the cursors of a k-way merge, −1 when every list is done. */
function lowest(lists: ReadonlyArray<{ count: number; cards: Uint32Array }>, cursor: Int32Array): number {
  let cardId = -1;
  for (let l = 0; l < lists.length; l++) {
    const list = lists[l]!;
    const i = cursor[l]!;
    if (i < list.count && (cardId < 0 || list.cards[i]! < cardId)) cardId = list.cards[i]!;
  }
  return cardId;
}

/** The index of `cardId` at the cursor of list `l`, moving the cursor past it; −1 when that list is not at it. */
function take(lists: ReadonlyArray<{ count: number; cards: Uint32Array }>, cursor: Int32Array, l: number, cardId: number): number {
  const i = cursor[l]!;
  if (i >= lists[l]!.count || lists[l]!.cards[i] !== cardId) return -1;
  cursor[l] = i + 1;
  return i;
}

/** The union of card sets: a k-way merge, scores added, keys merged when asked for. */
function unite(sets: readonly Hits[], keys: boolean): Hits {
  if (sets.length === 1 && (!keys || sets[0]!.refs !== undefined)) return sets[0]!;
  const cursor = new Int32Array(sets.length);
  const out = new HitsBuilder(
    sets.reduce((n, s) => n + s.count, 0),
    keys,
  );
  for (let cardId = lowest(sets, cursor); cardId >= 0; cardId = lowest(sets, cursor)) {
    let score = 0;
    for (let s = 0; s < sets.length; s++) {
      const i = take(sets, cursor, s, cardId);
      if (i < 0) continue;
      const set = sets[s]!;
      score += set.scores[i]!;
      if (keys && set.refs !== undefined) {
        set.refs.load(i);
        out.copyKeys(set.refs);
      }
    }
    out.add(cardId, score, 0, true);
  }
  return out.hits();
}

/**
 * A node whose cards are known before their scores: bounds[i] is at least
 * card i's score, closer(i) a bound at most bounds[i] that costs more to
 * make, and score(i) the score itself (writing the card's keys to `out`
 * when given), or −1 when card i does not match after all (a phrase whose
 * words are never in a row). `certain`: every card matches, only the
 * scores wait; `exact`: the bounds are the scores.
 */
export interface Matcher {
  readonly count: number;
  readonly cards: Uint32Array;
  readonly bounds: Float64Array | Float32Array;
  readonly certain: boolean;
  readonly exact: boolean;
  closer(i: number): number;
  score(i: number, out?: HitsBuilder): number;
}

/** Every card of a Matcher scored, in card order. */
function scoreAll(match: Matcher, keys: boolean): Hits {
  const out = new HitsBuilder(match.count, keys);
  for (let i = 0; i < match.count; i++) {
    const score = match.score(i, keys ? out : undefined);
    if (score < 0) out.drop();
    else out.add(match.cards[i]!, score, 0, true);
  }
  return out.hits();
}

/** Hits already scored. */
class Matched implements Matcher {
  readonly certain = true;
  readonly exact = true;
  readonly count: number;
  readonly cards: Uint32Array;
  readonly bounds: Float64Array | Float32Array;

  constructor(hits: Hits) {
    ({ count: this.count, cards: this.cards, scores: this.bounds } = hits);
  }

  closer(i: number): number {
    return this.bounds[i]!;
  }

  score(i: number): number {
    return this.bounds[i]!;
  }
}

/** A Matcher's cards as they are found: each with its bound and its index in each of the node's `width` lists (at[i × width + list]). */
abstract class Candidates {
  count = 0;
  readonly cards: Uint32Array;
  readonly bounds: Float64Array;
  protected readonly at: Int32Array;

  constructor(
    capacity: number,
    protected readonly width: number,
  ) {
    this.cards = new Uint32Array(capacity);
    this.bounds = new Float64Array(capacity);
    this.at = new Int32Array(capacity * width);
  }

  protected append(cardId: number, at: Int32Array, bound: number): void {
    const o = this.count * this.width;
    for (let p = 0; p < at.length; p++) this.at[o + p] = at[p]!;
    this.cards[this.count] = cardId;
    this.bounds[this.count++] = bound;
  }
}

/** How many words a query node asks for in a card (AndMatch's title bonus): a phrase's, a NEAR's two terms', an OR's largest child's; none for a filter or a NOT. */
function wordsOf(node: QueryNode): number {
  switch (node.kind) {
    case 'word':
      return 1;
    case 'phrase':
      return node.words.length;
    case 'near':
      return wordsOf(node.left) + wordsOf(node.right);
    case 'and':
      return node.children.reduce((n, child) => n + wordsOf(child), 0);
    case 'or':
      return Math.max(0, ...node.children.map(wordsOf));
    default:
      return 0;
  }
}

/**
 * The cards in every included set, in none excluded, of a type the tests
 * take; the bound of a card counts the largest proximity bonus between
 * each pair of neighbouring terms and the title bonus, its score the
 * proximity their lines give and the title bonus when every term with
 * occurrences (a `site:` has none) has one in a title of the class of
 * `words` words or shorter (rank.ts TITLE_BONUS).
 */
class AndMatch extends Candidates implements Matcher {
  readonly certain = true;
  readonly exact = false;
  // The included lists' columns (columnsOf).
  private readonly scores: ReadonlyArray<Float64Array | Float32Array>;
  private readonly refs: readonly CardRefs[];
  /** The least title weight (rank.ts titleClass) that earns the title bonus. */
  private readonly titleClass: number;

  constructor(
    included: readonly Hits[],
    excluded: readonly Hits[],
    tests: readonly CardTest[],
    words: number,
  ) {
    const base = included.reduce((smallest, hits) => (hits.count < smallest.count ? hits : smallest));
    super(base.count, included.length);
    this.titleClass = titleClass(words);
    const n = included.length;
    const b = included.indexOf(base);
    const { cards, counts, scores, refs } = columnsOf(included);
    const bodies = included.map((hits) => hits.bodies);
    this.scores = scores;
    this.refs = refs;
    const { cards: excludedCards, counts: excludedCounts } = columnsOf(excluded);
    const at = new Int32Array(n);
    const excludedAt = new Int32Array(excluded.length);
    const closest = proximity(0);
    const baseCards = base.cards;
    cards: for (let i = 0; i < base.count; i++) {
      const cardId = baseCards[i]!;
      for (let t = 0; t < tests.length; t++) if (!tests[t]!(cardId)) continue cards;
      for (let e = 0; e < excluded.length; e++) {
        const list = excludedCards[e]!;
        const end = excludedCounts[e]!;
        const j = (excludedAt[e] = seek(list, excludedAt[e]!, end, cardId));
        if (j < end && list[j] === cardId) continue cards;
      }
      at[b] = i;
      for (let p = 0; p < n; p++) {
        if (p === b) continue;
        const list = cards[p]!;
        const end = counts[p]!;
        const j = (at[p] = seek(list, at[p]!, end, cardId));
        if (j >= end || list[j] !== cardId) continue cards;
      }
      // Summed in the order score() sums, so that rounding keeps the bound above the score.
      let bound = 0;
      let titled = n > 1;
      for (let p = 0; p < n; p++) {
        bound += scores[p]![at[p]!]!;
        if (p > 0) bound += closest;
        // A word whose title (if any) is longer than the query's class rules the title bonus out; other terms' titles are seen in score().
        const inputs = bodies[p];
        if (inputs !== undefined && titleOf(inputs[at[p]!]!) < this.titleClass) titled = false;
      }
      if (titled) bound += TITLE_BONUS;
      this.append(cardId, at, bound);
    }
  }

  closer(i: number): number {
    return this.bounds[i]!;
  }

  score(i: number, out?: HitsBuilder): number {
    const { scores, refs, at, width } = this;
    const o = i * width;
    let score = 0;
    // The previous term's refs, held while the next is loaded (card-refs.ts: a reader each).
    let previous = NO_REFS.keys;
    let before = 0;
    let last = 0;
    // Terms with occurrences in the card, and those with one in a title of the query's length class or shorter.
    let terms = 0;
    let titled = 0;
    for (let p = 0; p < width; p++) {
      const j = at[o + p]!;
      score += scores[p]![j]!;
      const r = refs[p]!;
      r.load(j);
      const { keys, from, to } = r;
      if (p > 0) score += proximity(minGap(previous, before, last, keys, from, to));
      if (out !== undefined && to > from) out.copyKeys(r);
      if (to > from) {
        terms += 1;
        if (inTitle(keys, from, to, this.titleClass)) titled += 1;
      }
      previous = keys;
      before = from;
      last = to;
    }
    if (terms > 1 && titled === terms) score += TITLE_BONUS;
    return score;
  }
}

/** Whether packed refs[from..to) (ascending by line, so metas last) have a title occurrence of title weight `least` or more. */
function inTitle(refs: Int32Array, from: number, to: number, least: number): boolean {
  for (let r = to - 1; r >= from; r--) {
    const ref = refs[r]!;
    if ((ref & PACKED_META) === 0) return false;
    if (((ref >> 2) & 15) === TITLE_META) return (ref & 3) >= least;
  }
  return false;
}

/**
 * The cards with every word of a phrase (from the word in fewest of them);
 * its score needs the words in a row: the word with fewest occurrences in
 * the card leads, the others are looked up by line. Each word adds its best
 * meta occurrence in the phrase or BM25 of its occurrences in the phrase in
 * the body (rank.ts phraseWordScore), never more than its score in the
 * card, so the phrase bonus plus each word's score is a bound. closer() is
 * the bonus plus each word's phraseWordBound: the phrase occurs in the body
 * at most as often as its rarest word there, and in the metas only if
 * every word has one. Common words in a row (a site's navigation on every
 * page) match in most of their cards with nearly equal scores; a bound
 * this close lets ranking skip most of those that cannot reach the top.
 */
class PhraseMatch extends Candidates implements Matcher {
  readonly certain = false;
  readonly exact = false;
  private readonly from: Int32Array;
  private readonly to: Int32Array;
  private readonly ref: Int32Array;
  private readonly best: Float64Array;
  private readonly tf: Float64Array;
  // Each word's columns (columnsOf).
  private readonly bodies: readonly Uint32Array[];
  private readonly metas: readonly Uint32Array[];
  /** Each word's phrase shape (rank.ts phraseShape) in the card closer() looks at. */
  private readonly shapes: Uint32Array;
  private readonly refs: readonly CardRefs[];
  /** Each word's refs in the card being scored: keys[w][start[w]..to[w]). */
  private readonly keys: Int32Array[];
  private readonly start: Int32Array;
  private readonly scores: ReadonlyArray<Float64Array | Float32Array>;
  private readonly exacts: readonly Uint8Array[];
  private readonly idfs: Float64Array;

  constructor(
    words: readonly Occurrences[],
    private readonly accented: boolean,
    private readonly norms: Float64Array,
    private readonly lengths: Uint8Array,
  ) {
    const first = words.reduce((fewest, word) => (word.count < fewest.count ? word : fewest));
    super(first.count, words.length);
    const n = words.length;
    const base = words.indexOf(first);
    this.from = new Int32Array(n);
    this.to = new Int32Array(n);
    this.ref = new Int32Array(n);
    this.best = new Float64Array(n);
    this.tf = new Float64Array(n);
    const { cards, counts, scores, refs } = columnsOf(words);
    this.refs = refs;
    this.keys = refs.map((r) => r.keys);
    this.start = new Int32Array(n);
    this.bodies = words.map((word) => word.bodies);
    this.metas = words.map((word) => word.metas);
    this.shapes = new Uint32Array(n);
    this.scores = scores;
    this.exacts = words.map((word) => word.exact);
    this.idfs = Float64Array.from(words, (word) => word.idf);
    const at = new Int32Array(n);
    const bonus = PHRASE_BONUS * (n - 1) + (accented ? ACCENT_BONUS : 0);
    const firstCards = first.cards;
    cards: for (let c = 0; c < first.count; c++) {
      const cardId = firstCards[c]!;
      at[base] = c;
      for (let w = 0; w < n; w++) {
        if (w === base) continue;
        const list = cards[w]!;
        const end = counts[w]!;
        const j = (at[w] = seek(list, at[w]!, end, cardId));
        if (j >= end || list[j] !== cardId) continue cards;
      }
      let bound = bonus;
      for (let w = 0; w < n; w++) bound += scores[w]![at[w]!]!;
      this.append(cardId, at, bound);
    }
  }

  closer(i: number): number {
    const { bodies, metas: inputs, shapes, width: n, at } = this;
    const o = i * n;
    let matches = Infinity;
    let metas = true;
    for (let w = 0; w < n; w++) {
      const shape = (shapes[w] = phraseShape(bodies[w]![at[o + w]!]!, inputs[w]![at[o + w]!]!));
      matches = Math.min(matches, shape >>> 16);
      if ((shape & 0xff) === 0) metas = false;
    }
    const norm = this.norms[this.lengths[this.cards[i]!]!]!;
    // Summed in the order score() sums, so that rounding keeps the bound above the score.
    let bound = PHRASE_BONUS * (n - 1) + (this.accented ? ACCENT_BONUS : 0);
    for (let w = 0; w < n; w++) bound += phraseWordBound(shapes[w]!, matches, metas, norm, this.idfs[w]!, this.scores[w]![at[o + w]!]!);
    return bound;
  }

  score(i: number, out?: HitsBuilder): number {
    const { refs, keys, start, scores, width: n, from, to, best, tf } = this;
    const { at } = this;
    const o = i * n;
    let lead = 0;
    for (let w = 0; w < n; w++) {
      const r = refs[w]!;
      r.load(at[o + w]!);
      keys[w] = r.keys;
      start[w] = from[w] = r.from;
      to[w] = r.to;
      if (to[w]! - from[w]! < to[lead]! - from[lead]!) lead = w;
    }
    // By hand: fill() is a call into the runtime, dearer than the two or three writes.
    for (let w = 0; w < n; w++) best[w] = tf[w] = 0;
    const norm = this.norms[this.lengths[this.cards[i]!]!]!;
    let matched: boolean;
    const leader = keys[lead]!;
    // Without a meta occurrence of the lead (the last ref), the text is all there is.
    if (out !== undefined || to[lead]! === from[lead]! || leader[to[lead]! - 1]! >> PACKED_CODE_BITS < META_LINE) matched = this.scan(lead, from[lead]!, to[lead]!, out);
    else {
      // Metas first (their refs come last): once each word's meta match alone
      // is worth its score in the card (which caps what it adds), the text cannot raise the score.
      const metas = lineAt(leader, from[lead]!, to[lead]!, META_LINE);
      const textEnd = from[lead]!;
      matched = this.scan(lead, metas, to[lead]!, undefined);
      let ceiling = matched;
      for (let w = 0; w < n && ceiling; w++) ceiling = phraseWordScore(best[w]!, 0, norm, this.idfs[w]!) >= scores[w]![at[o + w]!]!;
      if (!ceiling) {
        for (let w = 0; w < n; w++) from[w] = start[w]!;
        matched = this.scan(lead, textEnd, metas, undefined) || matched;
      }
    }
    if (!matched) return -1;
    let exact = this.accented;
    for (let w = 0; w < n && exact; w++) exact = this.exacts[w]![at[o + w]!] === 1;
    let score = PHRASE_BONUS * (n - 1) + (exact ? ACCENT_BONUS : 0);
    for (let w = 0; w < n; w++) score += Math.min(phraseWordScore(best[w]!, tf[w]!, norm, this.idfs[w]!), scores[w]![at[o + w]!]!);
    return score;
  }

  /** The phrase's matches led by refs r0 to r1 of word `lead` (the others from their cursors `from`): raises each word's best meta weight `best` and body term frequency `tf`, writes keys to `out`. */
  private scan(lead: number, r0: number, r1: number, out: HitsBuilder | undefined): boolean {
    const { keys, width: n, from, to, ref, best, tf } = this;
    const leader = keys[lead]!;
    let matched = false;
    starts: for (let r = r0; r < r1; r++) {
      const line = leader[r]! >> PACKED_CODE_BITS;
      const start = line - lead;
      // A phrase stays within the words (before the edge) or within the metas.
      if (line === WORD_EDGE || (line < WORD_EDGE ? start < 0 || start + n - 1 >= WORD_EDGE : start < META_LINE)) continue;
      for (let w = 0; w < n; w++) {
        if (w === lead) continue;
        const list = keys[w]!;
        const j = (from[w] = lineAt(list, from[w]!, to[w]!, start + w));
        if (j >= to[w]! || list[j]! >> PACKED_CODE_BITS !== start + w) continue starts;
        ref[w] = j;
      }
      ref[lead] = r;
      matched = true;
      for (let w = 0; w < n; w++) {
        const packed = keys[w]![ref[w]!]!;
        const code = packed & CODE_MASK;
        tf[w] += CODE_TF[code]!;
        if (CODE_META[code]! > best[w]!) best[w] = CODE_META[code]!;
        out?.key(packed);
      }
    }
    return matched;
  }
}
