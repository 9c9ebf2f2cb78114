/**
 * One index version (`state/index/<version>/`, docs/indexer.md) opened
 * read-only for searching. Opening verifies the Manifest (every file's size
 * and CRC), so a damaged or half-copied version is refused before it serves
 * a query. The Lexicon is held in memory, and CardInfo as columns (static
 * weight, flags, type, a dense site number per card: typed arrays, one
 * element per card, checked once here), so the per-card work of a query is
 * array reads. Suggestions, when the version has them, are held too (a
 * version built before they were has none). WordIndex, StringIndex and
 * Cards are read on demand:
 *
 * - a word's chains are walked once into columns (Postings: card ids, the
 *   word's score inputs and score in each card) and kept,
 *   with the chains' bytes for the refs of the cards a query looks into
 *   (card-refs.ts), in an LRU bounded by their bytes (`searcher.chain_cache`);
 * - cards (inflated, for hits and snippets) in an LRU bounded by their
 *   bytes (`searcher.card_cache`); the names facets show (a site's host, a
 *   card's MIME type) in small caches of their own, so counting facets reads
 *   no card once they are known.
 *
 * A version is shared by every query that started on it: acquire() and
 * release() count them, and retire() closes the files once the last one is
 * done, so a live swap never pulls a file from under a running query.
 */

import { join } from 'node:path';
import { CARD_FLAG, CARD_TYPES, CardInfoReader } from '../common/index/cardinfo.js';
import { CardsReader, type Card } from '../common/index/cards.js';
import { StringIndexReader, WordIndexReader, stringKey, type StringKind } from '../common/index/chains.js';
import { Lexicon, type LexiconEntry } from '../common/index/lexicon.js';
import { verifyIndexDir, type Manifest } from '../common/index/manifest.js';
import { SUGGESTIONS_FILE, Suggestions } from '../common/index/suggestions.js';
import { UNDETERMINED, languageCode, languageOf } from '../common/language/codes.js';
import { stemLanguage, stemOf } from '../common/language/stem.js';
import type { ChainDecoder } from '../common/index/refs.js';
import { urlParts } from '../common/url.js';
import { cacheSizes } from './config.js';
import { Frequencies, Lru } from './lru.js';
import { CHECKPOINT, ChainRefs, LazyRefs, type CardRefs } from './card-refs.js';
import { FORM, chainInputs, idf, inputScore, lengthNorms, staticFactor } from './rank.js';
import type { QueryWord } from './query.js';
import { boundBytes, boundTable, skipTable, windowChains, type BoundTable, type SkipTable } from './skips.js';
import { CardText } from './snippet.js';

/** A card as hits show it: its text already cut into words for snippets. */
export interface ShownCard extends Omit<Card, 'text'> {
  text: CardText;
  /** The URL's host. */
  host: string;
}

/** Cache budgets in bytes (searcher.chain_cache, searcher.card_cache). */
export interface CacheSizes {
  chains: number;
  cards: number;
}

/** One of `n` equal shares of cache budgets (at least a byte each): a thread's of its pool's, a collection's pool's of the searcher's. */
export function shares(caches: CacheSizes, n: number): CacheSizes {
  const share = (bytes: number) => Math.max(1, Math.floor(bytes / n));
  return { chains: share(caches.chains), cards: share(caches.cards) };
}

/** Card ids whose MIME type the type facet has named. */
const MIME_CACHE_CARDS = 65_536;
/** What a cached card costs beyond its text: the object, URL, title and the rest. */
const CARD_OVERHEAD = 512;

/** Chain cache asks over which its admission counts fade by half (lru.ts Frequencies): some hundreds of queries' words. */
const FREQUENCY_WINDOW = 8192;
/** The query words whose forms a version keeps (IndexVersion#wordForms). */
const FORMS_CACHE_WORDS = 4096;
/** Words a query word may stand for. */
export const MAX_FORMS = 64;
/**
 * A language whose pages are at least this share of the cards with a
 * language is one of the collection's main languages: a query word is
 * stemmed in those (mainLanguages). Stemming it in every language the
 * Lexicon has stems of would bring in the classes of a few stray pages
 * ("systeme" for "system" from a French page in an English collection).
 */
export const MAIN_LANGUAGE_SHARE = 0.02;

/** What a query word stands for in a version's Lexicon: the entries, and how each is related to it (rank.ts FORM). */
export interface WordForms {
  entries: LexiconEntry[];
  kinds: Uint8Array;
}

/**
 * One query word's occurrences as the evaluator reads them (evaluate.ts):
 * its cards ascending, its score in each, its score inputs in each (rank.ts
 * refInputs: what bounds it in a phrase), card i's refs when asked for
 * (card-refs.ts), which cards have the query word's exact form, and its
 * IDF. A word of several forms is its chains merged, kept beside them
 * (merged()).
 */
export interface Occurrences {
  count: number;
  cards: Uint32Array;
  /** Read only: they may be the chain cache's. */
  scores: Float32Array;
  bodies: Uint32Array;
  metas: Uint32Array;
  refs: CardRefs;
  exact: Uint8Array;
  idf: number;
}

/**
 * A word's chains as the evaluator reads them: its cards, the score inputs
 * in each (rank.ts refInputs), the word's score in each card, its IDF, and
 * its refs card by card (card-refs.ts ChainRefs: the chains' bytes).
 */
export interface Postings {
  count: number;
  cards: Uint32Array;
  bodies: Uint32Array;
  metas: Uint32Array;
  scores: Float32Array;
  refs: ChainRefs;
  /** How many chains the word has: `count` when all were read; beyond the work bound, estimated (common/index/refs.ts PackedChains). */
  total: number;
  idf: number;
  /** Its blocks' bounds (skips.ts), when every chain was read. */
  skips?: SkipTable | undefined;
}

/** What a chain-cache entry holds: an entry's chains, or a several-form word's merged occurrences. */
type Decoded = Postings | Occurrences;
const decodedBytes = (d: Decoded): number =>
  d.cards.byteLength + d.bodies.byteLength + d.metas.byteLength + d.scores.byteLength + ('exact' in d ? d.exact.byteLength : 0) + (d.refs instanceof LazyRefs ? d.refs.bytes : 0);

/** Scratch columns for postingsOf, grown as needed up to SCRATCH_KEPT chains (a bigger list gets its own): one list at a time per thread. */
const SCRATCH_KEPT = 4 << 20;
let scratch = { cards: new Uint32Array(1024), bodies: new Uint32Array(1024), metas: new Uint32Array(1024), checkpoints: new Uint32Array(1024 / CHECKPOINT) };

function scratchFor(chains: number): typeof scratch {
  if (scratch.cards.length >= chains) return scratch;
  const made = { cards: new Uint32Array(chains), bodies: new Uint32Array(chains), metas: new Uint32Array(chains), checkpoints: new Uint32Array(Math.ceil(chains / CHECKPOINT)) };
  if (chains <= SCRATCH_KEPT) scratch = made;
  return made;
}

let aloneKept = new Float64Array(1024);

/** Scratch for each chain's score ÷ IDF, kept up to SCRATCH_KEPT chains as the columns are. */
function aloneScratch(chains: number): Float64Array {
  if (aloneKept.length >= chains) return aloneKept;
  const made = new Float64Array(chains);
  if (chains <= SCRATCH_KEPT) aloneKept = made;
  return made;
}

/**
 * A word's chains (the first `max`) walked once: card ids, score inputs,
 * a head every CHECKPOINT chains; no ref is kept, so nothing needs
 * sorting. Decoded into scratch columns and copied out at their size.
 */
function postingsOf(decoder: ChainDecoder, max: number, columns: CardColumns): Postings {
  // A chain takes at least 2 bytes (a head byte, a ref).
  const room = Math.max(0, Math.min(Math.floor(decoder.bytes / 2), max));
  const { cards, bodies, metas, checkpoints } = scratchFor(room);
  let i = 0;
  const { count, total } = decoder.walk(0, decoder.bytes, max, (cardId, head, start, stop) => {
    if (i % CHECKPOINT === 0) checkpoints[i / CHECKPOINT] = head;
    cards[i] = cardId;
    chainInputs(decoder, start, stop, bodies, metas, i++);
  });
  const wordIdf = idf(total, columns.length.length);
  const { norms, length } = columns;
  const alone = aloneScratch(count);
  const scores = new Float32Array(count);
  for (let c = 0; c < count; c++) {
    alone[c] = inputScore(bodies[c]!, metas[c]!, norms[length[cards[c]!]!]!, 1);
    scores[c] = wordIdf * alone[c]!;
  }
  // A word cut by the work bound has no table: its blocks past the cut are unknown.
  const { weight } = columns;
  const skips = count === total ? skipTable(count, cards, alone, checkpoints, (cardId) => staticFactor(weight[cardId]!)) : undefined;
  return {
    skips,
    count,
    cards: cards.slice(0, count),
    bodies: bodies.slice(0, count),
    metas: metas.slice(0, count),
    scores,
    refs: new ChainRefs(decoder, checkpoints.slice(0, Math.ceil(count / CHECKPOINT)), count),
    total,
    idf: wordIdf,
  };
}

/** The first `max` chains of `p`, sharing its arrays (and its refs: card i's are the same). */
function firstChains(p: Postings, max: number): Postings {
  if (p.count <= max) return p;
  const count = Math.max(0, max);
  const cut = <T extends Uint32Array | Float32Array>(column: T): T => column.subarray(0, count) as T;
  return { ...p, count, cards: cut(p.cards), bodies: cut(p.bodies), metas: cut(p.metas), scores: cut(p.scores) };
}

/** What a cached chain takes: four columns of 4 bytes, its bytes and their checkpoint (decodedBytes). */
const CACHED_CHAIN_BYTES = 22;

/** The skip tables' budget: a sixteenth of the chain cache's (they take some 0.13 bytes a chain where the cache takes 22), 4 MiB at least. */
const skipBudget = (chains: number): number => Math.max(4 << 20, Math.ceil(chains / 16));

/** CardInfo as columns: one element per card id. */
export interface CardColumns {
  weight: Uint8Array;
  /** CARD_FLAG bits. */
  flags: Uint8Array;
  /** Index into CARD_TYPES. */
  type: Uint8Array;
  /** Language numbers (common/language/codes.ts). */
  language: Uint8Array;
  /** Dense site numbers 0, 1, 2 … in order of each site's first card. */
  site: Uint32Array;
  /** How many sites. */
  sites: number;
  /** CardInfo's length code (the words of the body, log scale). */
  length: Uint8Array;
  /** BM25's length normalisation of each length code (rank.ts lengthNorms). */
  norms: Float64Array;
  /** Last-Modified, else the fetch time, Unix seconds; 0 unknown. */
  date: Uint32Array;
}

function cardColumns(info: CardInfoReader): CardColumns {
  const n = info.count;
  const length = new Uint8Array(n);
  const columns: CardColumns = {
    weight: new Uint8Array(n),
    flags: new Uint8Array(n),
    type: new Uint8Array(n),
    language: new Uint8Array(n),
    site: new Uint32Array(n),
    sites: 0,
    length,
    norms: new Float64Array(0),
    date: new Uint32Array(n),
  };
  const numbers = new Map<number, number>();
  for (let id = 0; id < n; id++) {
    const record = info.get(id);
    columns.weight[id] = record.weight;
    columns.flags[id] = record.flags;
    columns.type[id] = CARD_TYPES.indexOf(record.type);
    columns.language[id] = languageCode(record.language);
    columns.date[id] = record.date;
    length[id] = record.length;
    let site = numbers.get(record.site);
    if (site === undefined) numbers.set(record.site, (site = numbers.size));
    columns.site[id] = site;
  }
  columns.sites = numbers.size;
  columns.norms = lengthNorms(length);
  return columns;
}

/** CARD_FLAG bits of a card that is never shown nor counted. */
export const HIDDEN = CARD_FLAG.dup | CARD_FLAG.empty;

export class IndexVersion {
  /**
   * Decoded chains by Lexicon entry id, and a several-form word's merged
   * occurrences (evaluate.ts) by what they depend on (its forms key), in one
   * budget: which of the two a query mix needs more of is its own affair.
   */
  private readonly chainCache: Lru<number | string, Decoded>;
  /** Skip tables by Lexicon entry id, and several-form words' bound tables by forms key (skips.ts), outliving their lists in the chain cache. */
  private readonly skipCache: Lru<number | string, BoundTable>;
  /** The highest static weight of each window of cards, by window size (windows.ts). */
  private readonly windowWeightsBySize = new Map<number, Uint8Array>();
  /** A query word's forms by its exact form and the languages it is stemmed in (wordForms): stemming takes longer than reading a cached chain. */
  private readonly formsCache = new Lru<string, WordForms>(FORMS_CACHE_WORDS, () => 1);
  private main: readonly number[] | undefined;
  private readonly cardCache: Lru<number, ShownCard>;
  private readonly mimeCache = new Lru<number, string>(MIME_CACHE_CARDS, () => 1);
  /** Host of each dense site number, filled as facets name them. */
  private readonly siteHosts: Array<string | undefined> = [];
  /** The cards takedowns hide (takedowns.ts), one byte each, 1 hidden; replaced whole, never written into, when the takedowns change. */
  takenDown: Uint8Array | undefined;
  /** The site rules' result_cap by dense site number (result-caps.ts), 0 uncapped; replaced whole when the rules change. */
  siteCaps: Uint16Array | undefined;
  private users = 0;
  private retired = false;
  private closed = false;

  private constructor(
    readonly name: string,
    readonly manifest: Manifest,
    readonly lexicon: Lexicon,
    private readonly cardInfo: CardInfoReader,
    readonly columns: CardColumns,
    private readonly words: WordIndexReader,
    private readonly strings: StringIndexReader,
    private readonly cards: CardsReader,
    caches: CacheSizes,
    /** What queries are completed from (completions.ts); undefined for a version built before the file was. */
    readonly suggestions: Suggestions | undefined,
  ) {
    this.chainCache = new Lru(caches.chains, decodedBytes, new Frequencies(FREQUENCY_WINDOW));
    this.skipCache = new Lru(skipBudget(caches.chains), boundBytes);
    this.cardCache = new Lru(caches.cards, (card) => CARD_OVERHEAD + card.text.bytes + 2 * (card.url.length + (card.title?.length ?? 0) + (card.referrer?.length ?? 0)));
  }

  /** New cache budgets (a reloaded config); what no longer fits goes. */
  resize(caches: CacheSizes): void {
    this.chainCache.resize(caches.chains);
    this.skipCache.resize(skipBudget(caches.chains));
    this.cardCache.resize(caches.cards);
  }

  /** Opens the version in `dir`, verifying its Manifest first; SHERLOCK_CORRUPT_INDEX names a damaged file. */
  static open(dir: string, name: string, caches: CacheSizes = cacheSizes()): IndexVersion {
    const manifest = verifyIndexDir(dir);
    const opened: Array<{ close(): void }> = [];
    const keep = <T extends { close(): void }>(reader: T): T => {
      opened.push(reader);
      return reader;
    };
    try {
      const words = keep(WordIndexReader.open(join(dir, 'WordIndex')));
      const strings = keep(StringIndexReader.open(join(dir, 'StringIndex')));
      const cards = keep(CardsReader.open(join(dir, 'Cards')));
      const info = CardInfoReader.open(join(dir, 'CardInfo'));
      const suggestions = manifest.files.some((file) => file.name === SUGGESTIONS_FILE) ? Suggestions.open(join(dir, SUGGESTIONS_FILE), info.count) : undefined;
      return new IndexVersion(name, manifest, Lexicon.open(join(dir, 'Lexicon')), info, cardColumns(info), words, strings, cards, caches, suggestions);
    } catch (err) {
      for (const reader of opened) reader.close();
      throw err;
    }
  }

  get cardCount(): number {
    return this.cardInfo.count;
  }

  /**
   * The chains of a Lexicon entry in columns, each card's refs sorted by
   * line; at most `max` (fewer cards, lowest ids first, when the work bound
   * cuts it). The arrays are shared with the cache: read, never write.
   */
  postings(entry: LexiconEntry, max = Infinity): Postings {
    const cached = this.chainCache.get(entry.id) as Postings | undefined;
    if (cached !== undefined) return firstChains(cached, max);
    const postings = postingsOf(this.words.decoder(entry.id, entry.refPos), max, this.columns);
    if (postings.count < max) this.cache(entry.id, postings);
    if (postings.skips !== undefined) this.skipCache.set(entry.id, postings.skips);
    return postings;
  }

  /** The skip table of a Lexicon entry whose chains were walked whole, while it is kept. */
  skips(entry: LexiconEntry): SkipTable | undefined {
    const kept = this.skipCache.get(entry.id) as SkipTable | undefined;
    if (kept !== undefined) return kept;
    const skips = (this.chainCache.peek(entry.id) as Postings | undefined)?.skips;
    if (skips !== undefined) this.skipCache.set(entry.id, skips);
    return skips;
  }

  /**
   * Whether a Lexicon entry's chains are cached, or would be if walked now
   * (`chains` of them, at some CACHED_CHAIN_BYTES each). A use is counted
   * once either way (here when not, by postings() when so), so a word that
   * comes back often gets in, and one asked for so weighs no more than one
   * walked.
   */
  cachesChains(entry: LexiconEntry, chains: number): boolean {
    return this.chainCache.holdsOrWouldKeep(entry.id, chains * CACHED_CHAIN_BYTES);
  }

  /** A Lexicon entry's chain bytes, read for one query. */
  decoder(entry: LexiconEntry): ChainDecoder {
    return this.words.decoder(entry.id, entry.refPos);
  }

  /**
   * The chains of a Lexicon entry with cards in [low, high), found by its
   * skip table in the bytes `decoder` holds (of those, only the cards set in
   * `only`, a bit per card, when given): the columns postings() gives, for
   * those cards (its total and IDF the whole word's).
   */
  windowPostings(entry: LexiconEntry, decoder: ChainDecoder, skips: SkipTable, low: number, high: number, only?: Uint32Array): Postings {
    const { count, cards, bodies, metas, refs } = windowChains(decoder, skips, low, high, only);
    const wordIdf = idf(skips.count, this.columns.length.length);
    const { norms, length } = this.columns;
    const scores = new Float32Array(count);
    for (let c = 0; c < count; c++) scores[c] = wordIdf * inputScore(bodies[c]!, metas[c]!, norms[length[cards[c]!]!]!, 1);
    return { count, cards, bodies, metas, scores, refs, total: skips.count, idf: wordIdf };
  }

  /** The highest static weight among the cards of each window of 2^bits card ids. */
  windowWeights(bits: number): Uint8Array {
    let weights = this.windowWeightsBySize.get(bits);
    if (weights === undefined) {
      const { weight } = this.columns;
      weights = new Uint8Array(Math.ceil(weight.length / 2 ** bits));
      for (let id = 0; id < weight.length; id++) if (weight[id]! > weights[id >>> bits]!) weights[id >>> bits] = weight[id]!;
      this.windowWeightsBySize.set(bits, weights);
    }
    return weights;
  }

  /** A several-form word's merged occurrences kept by merged(), if still cached. */
  merged(formsKey: string): Occurrences | undefined {
    return this.chainCache.get(formsKey) as Occurrences | undefined;
  }

  /** Keeps a several-form word's merged occurrences beside the chains, and the bounds of its scores (skips.ts). */
  keepMerged(formsKey: string, occurrences: Occurrences): void {
    this.cache(formsKey, occurrences);
    this.keepBounds(formsKey, occurrences);
  }

  private keepBounds(formsKey: string, occurrences: Occurrences): BoundTable {
    const { weight } = this.columns;
    const bounds = boundTable(occurrences.count, occurrences.cards, occurrences.scores, (cardId) => staticFactor(weight[cardId]!));
    this.skipCache.set(formsKey, bounds);
    return bounds;
  }

  /** Counts a use of a several-form word's merge that was ranked without it (windows.ts), as merged() would: a word asked for often gets its merge kept when a query makes it. */
  askMerged(formsKey: string): void {
    this.chainCache.ask(formsKey);
  }

  /** The bound table of a several-form word's merged scores, while it or the merge is kept. */
  mergedBounds(formsKey: string): BoundTable | undefined {
    const kept = this.skipCache.get(formsKey);
    if (kept !== undefined) return kept;
    const merged = this.chainCache.peek(formsKey) as Occurrences | undefined;
    return merged === undefined ? undefined : this.keepBounds(formsKey, merged);
  }

  /** Puts a list in the chain cache; its refs written out make it bigger, and the cache weighs it again then, keeping it or letting the refs go. */
  private cache(key: number | string, value: Decoded): void {
    this.chainCache.set(key, value);
    if (value.refs instanceof LazyRefs) value.refs.keep = () => this.chainCache.set(key, value);
  }

  /**
   * The Lexicon words a query word stands for: the accent variants of its
   * plain form, then the words of each stem class it falls in and the stem
   * itself with its accent variants where the Lexicon has it as a word (at
   * most MAX_FORMS in all). It is stemmed in `languages` (numbers; by default
   * the collection's main languages) and in the language its letters
   * name, of those the Lexicon has stems in.
   */
  wordForms(word: QueryWord, languages: readonly number[] = this.mainLanguages()): WordForms {
    const key = `${word.exact}\u0000${languages.join(',')}`;
    const cached = this.formsCache.get(key);
    if (cached !== undefined) return cached;
    const { lexicon } = this;
    const entries = lexicon.variants(word.plain);
    const accentVariants = entries.length;
    const seen = new Set(entries.map((entry) => entry.id));
    const byLetters = stemLanguage(word.exact, UNDETERMINED);
    const stemmed = byLetters === undefined ? languages : [...new Set([...languages, languageCode(byLetters)])];
    // The word as typed and as each accent variant the index has: "kolacu" is stemmed as "koláčů" too.
    const spellings = [...new Set([word.exact, ...entries.map((entry) => entry.word)])];
    for (const language of stemmed) {
      if (!lexicon.stemLanguages.includes(language)) continue;
      for (const stem of new Set(spellings.map((spelling) => stemOf(spelling, languageOf(language))))) {
        // The stem itself when it is a word ("program" for "programu"), whatever language gave it its class:
        // a word is in the class of its first occurrence's language, and "program" is English as often as Czech.
        for (const entry of [...lexicon.stemClass(language, stem), ...lexicon.variants(stem)]) {
          if (seen.has(entry.id) || entries.length >= MAX_FORMS) continue;
          seen.add(entry.id);
          entries.push(entry);
        }
      }
    }
    const kinds = new Uint8Array(entries.length);
    kinds.fill(FORM.stem, accentVariants);
    const forms = { entries, kinds };
    this.formsCache.set(key, forms);
    return forms;
  }

  /**
   * The languages (numbers) of at least MAIN_LANGUAGE_SHARE of the cards
   * with a language, of those the Lexicon has stems in; all of those when
   * no card has a language.
   */
  mainLanguages(): readonly number[] {
    if (this.main !== undefined) return this.main;
    const counts = new Float64Array(256);
    for (const language of this.columns.language) counts[language]! += 1;
    const told = this.columns.language.length - counts[0]!;
    const { stemLanguages } = this.lexicon;
    this.main = told === 0 ? stemLanguages : stemLanguages.filter((language) => counts[language]! >= MAIN_LANGUAGE_SHARE * told);
    return this.main;
  }

  /** The cards a StringIndex string (url, host, domain) names, ascending. */
  stringCards(kind: StringKind, value: string): Uint32Array {
    return this.strings.cards(stringKey(kind, value));
  }

  card(cardId: number): ShownCard {
    let card = this.cardCache.get(cardId);
    if (card === undefined) {
      const stored = this.cards.get(this.cardInfo.get(cardId).position, cardId);
      card = { ...stored, text: CardText.of(stored.text), host: urlParts(stored.url).host };
      this.cardCache.set(cardId, card);
    }
    return card;
  }

  /** A card as stored, its text not cut into words: what naming a facet needs (from the card cache when it is there). */
  private stored(cardId: number): Omit<Card, 'text'> {
    return this.cardCache.get(cardId) ?? this.cards.get(this.cardInfo.get(cardId).position, cardId);
  }

  /** A card's canonical URL. */
  cardUrl(cardId: number): string {
    return this.stored(cardId).url;
  }

  /** The host of a dense site number, `cardId` being one of its cards. */
  siteHost(site: number, cardId: number): string {
    return (this.siteHosts[site] ??= urlParts(this.stored(cardId).url).host);
  }

  /**
   * `value` of each site's host, by dense site number (one card read a
   * site, in one pass over the site column); undefined when every value is 0.
   */
  siteValues(value: (host: string) => number): Uint16Array | undefined {
    const { site, sites } = this.columns;
    const values = new Uint16Array(sites);
    const seen = new Uint8Array(sites);
    let any = false;
    for (let cardId = 0; cardId < site.length; cardId++) {
      const s = site[cardId]!;
      if (seen[s] === 1) continue;
      seen[s] = 1;
      values[s] = value(this.siteHost(s, cardId));
      if (values[s] !== 0) any = true;
    }
    return any ? values : undefined;
  }

  /** The MIME type of a card. */
  mimeType(cardId: number): string {
    let mime = this.mimeCache.get(cardId);
    if (mime === undefined) {
      mime = this.stored(cardId).type;
      this.mimeCache.set(cardId, mime);
    }
    return mime;
  }

  /**
   * Lexicon entries whose plain form starts with `prefix` (itself plain), the
   * most frequent first, at most `max`; `more` says some were left out.
   */
  prefixed(prefix: string, max: number): { entries: LexiconEntry[]; more: boolean } {
    const { lexicon } = this;
    const found = lexicon.withPrefix(prefix);
    // The most frequent first, then in lexicon order.
    found.sort((a, b) => lexicon.frequencies[b]! - lexicon.frequencies[a]! || a - b);
    return { entries: found.slice(0, max).map((i) => lexicon.entry(i)), more: found.length > max };
  }

  /** A query starts using the version. */
  acquire(): void {
    this.users += 1;
  }

  release(): void {
    this.users -= 1;
    if (this.retired && this.users === 0) this.close();
  }

  /** No new query will use it: its files close when the last running one releases it. */
  retire(): void {
    this.retired = true;
    if (this.users === 0) this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.words.close();
    this.strings.close();
    this.cards.close();
  }
}
