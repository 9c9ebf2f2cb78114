/**
 * The Engine over `state/index/current` (DESIGN §7, docs/search.md): it loads
 * the version `current` names, answers searches on it, and swaps live.
 *
 * Swap. Every `pollMs` (and on check(), which SIGHUP calls) it reads where
 * `current` points; when that changed it opens the new version (verifying
 * its Manifest), runs test queries on it (the Lexicon's most frequent words
 * must each find a card), and only then makes it the one new searches use.
 * A search holds the version it started on until it ends, and the old
 * version closes its files after the last such search: a swap never fails a
 * query. A version that fails to open or to answer is logged and not taken
 * (nor tried again until `current` changes); the old one keeps serving.
 * With no version at all every search is NoIndexError, as noIndexEngine.
 *
 * Takedowns (takedowns.ts): the engine follows `state/takedowns` itself, or
 * is given the set (setTakedowns) by a pool that follows it for its
 * threads. A new set applies to the loaded version at once, and a new
 * version serves with the set applied; then `onTakedowns` is called (the
 * one place that learns the takedowns changed).
 *
 * Site rules: given at start and by setRules (SIGHUP); their result_cap
 * applies to the loaded version at once and to each version loaded
 * (result-caps.ts).
 */

import { basename, resolve } from 'node:path';
import { CARD_TYPES } from '../common/index/cardinfo.js';
import { archiveName } from '../common/archive/arc-place.js';
import { currentVersion, indexDirectory } from '../common/index/layout.js';
import { languageCode, languageOf } from '../common/language/codes.js';
import { logger } from '../common/log.js';
import { SiteRules } from '../common/site-rules.js';
import { TakedownSet, takedownFilePath } from '../common/takedowns.js';
import type { Engine, FacetCount, SearchHit, SearchRequest, SearchResult, SuggestRequest, SuggestResult, Suggestion } from './engine.js';
import { completions } from './completions.js';
import { NoIndexError } from './engine.js';
import { Evaluation, cardTest, type CardTest, type Hits, type Matcher } from './evaluate.js';
import { explainHits } from './explain.js';
import { HIDDEN, IndexVersion, type CacheSizes, type CardColumns } from './index-version.js';
import { cacheSizes } from './config.js';
import { LAST_DATE, type QueryNode } from './query.js';
import { TopK, collapse, seek, withStatic, type Scored } from './rank.js';
import { escapeHtml } from './render.js';
import { Marker, highlight } from './snippet.js';
import { CappedTop, siteCaps } from './result-caps.js';
import { TakedownWatch, takenDownCards } from './takedowns.js';
import { MIN_WINDOW_CHAINS, WINDOW_BITS, rankByWindows } from './windows.js';
import { FEW_HITS, corrected, corrections, type Correction } from './spelling.js';

const log = logger('searcher');

const DEFAULT_POLL_MS = 5000;
const FACET_VALUES = 10;
const TEST_QUERIES = 3;
/** Candidates ranked beyond the page asked for, so that site collapsing has others to bring up. */
const COLLAPSE_SLACK = 3;
const DAY_SECONDS = 86_400;

export interface IndexEngineOptions {
  /** The state directory. */
  state: string;
  /** How often to look at `current`; 0: only on check(). */
  pollMs?: number;
  /** Cache budgets of each version loaded (searcher.chain_cache, searcher.card_cache). */
  caches?: CacheSizes;
  /** Whether to log each version loaded (a pool's threads but the first do not: one line per swap). */
  logLoads?: boolean;
  /** The takedowns, given (then kept by setTakedowns); absent: the engine follows the state's takedown file itself. */
  takedowns?: TakedownSet;
  /** Called after a change of the takedowns has applied. */
  onTakedowns?: () => void;
  /** The site rules (their result_cap); none when absent. */
  rules?: SiteRules;
}

export class IndexEngine implements Engine {
  private loaded: IndexVersion | undefined;
  /** Where `current` pointed at the last attempt, successful or not. */
  private tried: string | undefined;
  private checking: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout | undefined;
  private swaps = 0;
  private failures = 0;
  private loadedAt = 0;
  private takedowns: TakedownSet;
  private readonly onTakedowns: (() => void) | undefined;
  private readonly watch: TakedownWatch | undefined;
  private rules: SiteRules;

  private constructor(
    private readonly indexDir: string,
    pollMs: number,
    private caches: CacheSizes,
    private readonly logLoads: boolean,
    options: IndexEngineOptions,
  ) {
    if (pollMs > 0) {
      this.timer = setInterval(() => void this.check(), pollMs);
      this.timer.unref();
    }
    this.onTakedowns = options.onTakedowns;
    this.rules = options.rules ?? SiteRules.none;
    if (options.takedowns !== undefined) {
      this.takedowns = options.takedowns;
    } else {
      this.watch = new TakedownWatch(takedownFilePath(resolve(options.state)), (set) => this.setTakedowns(set));
      this.takedowns = this.watch.current();
    }
  }

  /** Starts the engine and loads the current version if there is one (its failure is logged, not thrown). */
  static async start(options: IndexEngineOptions): Promise<IndexEngine> {
    const engine = new IndexEngine(indexDirectory(resolve(options.state)), options.pollMs ?? DEFAULT_POLL_MS, options.caches ?? cacheSizes(), options.logLoads ?? true, options);
    await engine.check();
    return engine;
  }

  /** The takedowns in force from now on: the loaded version hides their cards before the next search. */
  setTakedowns(set: TakedownSet): void {
    this.takedowns = set;
    if (this.loaded !== undefined) this.loaded.takenDown = takenDownCards(this.loaded, set);
    this.onTakedowns?.();
  }

  /** The site rules from now on: the loaded version's result caps are made again before the next search. */
  setRules(rules: SiteRules): void {
    this.rules = rules;
    if (this.loaded !== undefined) this.loaded.siteCaps = siteCaps(this.loaded, rules);
  }

  get version(): string | undefined {
    return this.loaded?.name;
  }

  status(): Record<string, unknown> {
    const v = this.loaded;
    return {
      index: v?.name ?? null,
      cards: v?.cardCount ?? 0,
      bytes: v?.manifest.files.reduce((sum, file) => sum + file.size, 0) ?? 0,
      words: v?.lexicon.count ?? 0,
      loaded_at: v === undefined ? null : new Date(this.loadedAt).toISOString(),
      swaps: this.swaps,
      failed_loads: this.failures,
      takedowns: this.takedowns.size,
      chain_cache: this.caches.chains,
      card_cache: this.caches.cards,
    };
  }

  /** New cache budgets (SIGHUP): the loaded version's caches shrink or grow now, the next version's start so. */
  resize(caches: CacheSizes): void {
    this.caches = caches;
    this.loaded?.resize(caches);
  }

  /** Looks at `current` and swaps to the version it names if that is new; one check at a time. */
  check(): Promise<void> {
    this.checking ??= this.swap().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async swap(): Promise<void> {
    let target: string | undefined;
    try {
      target = currentVersion(this.indexDir);
    } catch (err) {
      log.warning('cannot read the current index link', { dir: this.indexDir, problem: err instanceof Error ? err.message : String(err) });
      return;
    }
    if (target === undefined || target === this.tried) return;
    this.tried = target;
    let next: IndexVersion | undefined;
    const began = performance.now();
    try {
      next = IndexVersion.open(resolve(this.indexDir, target), basename(target), this.caches);
      await selfTest(next);
      next.takenDown = takenDownCards(next, this.takedowns);
      next.siteCaps = siteCaps(next, this.rules);
    } catch (err) {
      next?.retire();
      this.failures += 1;
      log.err('index version not loaded; the searcher keeps the one it has', { version: target, kept: this.loaded?.name ?? 'none', problem: err instanceof Error ? err.message : String(err) });
      return;
    }
    const old = this.loaded;
    this.loaded = next;
    this.loadedAt = Date.now();
    if (old !== undefined) this.swaps += 1;
    old?.retire();
    if (this.logLoads) log.notice('index version loaded', { version: next.name, cards: next.cardCount, previous: old?.name ?? 'none', ms: Math.round(performance.now() - began) });
  }

  async search(request: SearchRequest, signal: AbortSignal): Promise<SearchResult> {
    const version = this.loaded;
    if (version === undefined) throw new NoIndexError();
    version.acquire();
    try {
      return await searchVersion(version, request, signal);
    } finally {
      version.release();
    }
  }

  /** Completions of what is typed (completions.ts), none from a version without Suggestions; the takedowns hide titles too. */
  async suggest(request: SuggestRequest, signal: AbortSignal): Promise<SuggestResult> {
    signal.throwIfAborted();
    const version = this.loaded;
    if (version === undefined) throw new NoIndexError();
    const { suggestions } = version;
    const down = version.takenDown;
    const hidden = (card: number): boolean => down !== undefined && down[card] === 1;
    return { q: request.q, suggestions: suggestions === undefined ? [] : completions(suggestions, request, hidden) };
  }

  /**
   * Whether the loaded version has a card of each URL (canonical) that a
   * search could show: hidden cards (empty, duplicate) and cards the
   * takedowns hide do not count; none without a version.
   */
  hasUrls(urls: readonly string[]): boolean[] {
    const version = this.loaded;
    if (version === undefined) return urls.map(() => false);
    const { flags } = version.columns;
    const down = version.takenDown;
    const shown = (cardId: number): boolean => (flags[cardId]! & HIDDEN) === 0 && (down === undefined || down[cardId] !== 1);
    return urls.map((url) => version.stringCards('url', url).some(shown));
  }

  /** Stops polling and closes the loaded version once its searches are done. */
  close(): void {
    clearInterval(this.timer);
    this.watch?.close();
    this.loaded?.retire();
    this.loaded = undefined;
  }
}

/** A new version answers before it serves: its most frequent words are searched, and find cards. */
async function selfTest(version: IndexVersion): Promise<void> {
  const { lexicon } = version;
  // The TEST_QUERIES most frequent, the first of equals first: a pass over the frequency column, no sort of every word.
  const best: number[] = [];
  for (let i = 0; i < lexicon.count; i++) {
    if (best.length === TEST_QUERIES && lexicon.frequencies[i]! <= lexicon.frequencies[best[TEST_QUERIES - 1]!]!) continue;
    let at = best.length;
    while (at > 0 && lexicon.frequencies[best[at - 1]!]! < lexicon.frequencies[i]!) at--;
    best.splice(at, 0, i);
    if (best.length > TEST_QUERIES) best.pop();
  }
  const words = best.map((i) => lexicon.entry(i));
  let found = 0;
  for (const entry of words) {
    const query: QueryNode = { kind: 'word', word: { exact: entry.word, plain: entry.word }, prefix: false, start: 0, end: entry.word.length };
    found += (await searchVersion(version, { query, offset: 0, limit: 1, filters: {} }, new AbortController().signal)).total.value;
  }
  if (words.length > 0 && found === 0) throw new Error(`test queries ${words.map((e) => JSON.stringify(e.word)).join(', ')} found nothing`);
}

/**
 * One search on one version: rank (rankVersion), then make the page's hits
 * (cards and snippets). A query that finds fewer than FEW_HITS cards is
 * checked for misspelt words (spelling.ts): the correction is suggested,
 * and when the query as typed found nothing, the corrected query is
 * answered instead, saying so.
 */
export async function searchVersion(version: IndexVersion, request: SearchRequest, signal: AbortSignal): Promise<SearchResult> {
  let ranked = await rankVersion(version, request, signal);
  let query = request.query;
  let suggest: Suggestion | undefined;
  if (ranked.total.value < FEW_HITS) {
    const fixes = corrections(version, request.query, ranked.total.value);
    if (fixes.length > 0) {
      const better = corrected(request.query, fixes);
      suggest = { ...suggestionText(request, fixes), applied: false };
      if (ranked.total.value === 0) {
        const again = await rankVersion(version, { ...request, query: better }, signal);
        if (again.total.value > 0) {
          ranked = again;
          query = better;
          suggest.applied = true;
        }
      }
    }
  }
  const { total, page, facets } = ranked;
  const marker = new Marker(highlight(query));
  const hits = page.map((s) => hit(version, s, marker));
  if (request.explain === true) {
    const explained = await explainHits(version, new Evaluation(version, signal, queryLanguages(request)), query, page.map((s) => s.cardId));
    hits.forEach((h, i) => (h.explain = explained[i]));
  }
  return { total, hits, facets, ...(suggest === undefined ? {} : { suggest }) };
}

/** The corrected query as text and as HTML: the query as typed with each corrected word replaced (a field prefix kept), or the corrected words alone without it. */
function suggestionText(request: SearchRequest, fixes: readonly Correction[]): { q: string; html: string } {
  const { text } = request;
  if (text === undefined) return { q: fixes.map((f) => f.word).join(' '), html: fixes.map((f) => `<mark>${escapeHtml(f.word)}</mark>`).join(' ') };
  let q = '';
  let html = '';
  let at = 0;
  for (const fix of [...fixes].sort((a, b) => a.start - b.start)) {
    const token = text.slice(fix.start, fix.end);
    const colon = token.indexOf(':');
    const keep = colon > 0 && !token.startsWith('"') ? colon + 1 : 0;
    q += text.slice(at, fix.start + keep) + fix.word;
    html += escapeHtml(text.slice(at, fix.start + keep)) + `<mark>${escapeHtml(fix.word)}</mark>`;
    at = fix.end;
  }
  return { q: q + text.slice(at), html: html + escapeHtml(text.slice(at)) };
}

/** The languages a search names (`lang:` outside a minus, filters.lang), in which its words are stemmed; undefined when it names none. */
function queryLanguages(request: SearchRequest): number[] | undefined {
  const named = new Set((request.filters.lang ?? []).map(languageCode));
  for (const node of required(request.query)) if (node.kind === 'lang') for (const lang of node.languages) named.add(languageCode(lang));
  named.delete(0);
  return named.size === 0 ? undefined : [...named].sort((a, b) => a - b);
}

/** The nodes of a query outside any minus: what it asks for, not what it excludes. */
function required(node: QueryNode): QueryNode[] {
  return node.kind === 'and' || node.kind === 'or' ? node.children.flatMap(required) : [node];
}

/** Whether a search names sites (`site:` outside a minus, filters.site): then it asked for them, and the site rules' result caps do not apply. */
function namesSites(request: SearchRequest): boolean {
  return (request.filters.site?.length ?? 0) > 0 || required(request.query).some((node) => node.kind === 'site');
}

/** What ranking gives: the total, the cards of the page asked for, and the facets. */
export interface Ranked extends Omit<SearchResult, 'hits'> {
  page: Scored[];
}

/**
 * Evaluate, filter, count, rank, collapse: everything but the hits' cards
 * and snippets. With `prune`, the cards whose bound (evaluate.ts Matcher)
 * (or, asked only then, its closer bound) is below the top's floor are
 * not scored: the k best bounds are scored first, then the rest in card
 * order while the floor rises. A phrase's card left unscored may not match
 * at all, so the total (and the facets) then count the cards scored, as a
 * lower bound ("gte"); an AND's cards all match, so its counts stay exact.
 * A word or an AND of words whose lists are not in the chain cache is
 * ranked from its skip tables instead (windows.ts; `windowBits` and
 * `windowChains` its window size and the chains below which it is not).
 */
export async function rankVersion(version: IndexVersion, request: SearchRequest, signal: AbortSignal, prune = true, windowBits = WINDOW_BITS, windowChains = MIN_WINDOW_CHAINS): Promise<Ranked> {
  const languages = queryLanguages(request);
  const evaluation = new Evaluation(version, signal, languages);
  const { filters } = request;
  const tests: CardTest[] = [];
  const { columns } = version;
  if (filters.type?.length) tests.push(cardTest({ kind: 'type', types: filters.type, start: 0, end: 0 }, columns));
  if (filters.lang?.length) tests.push(cardTest({ kind: 'lang', languages: filters.lang, start: 0, end: 0 }, columns));
  if (filters.age !== undefined) tests.push(cardTest({ kind: 'date', from: Math.floor(Date.now() / 1000) - filters.age * DAY_SECONDS, to: LAST_DATE, start: 0, end: 0 }, columns));
  const filterSites = filters.site?.length ? await siteCards(version, filters.site, signal) : undefined;
  signal.throwIfAborted();
  const { weight, flags, site, date } = columns;
  const byDate = request.sort === 'date';
  // By date: the date, ties broken by the score in the fraction (a score s ≥ 1 adds s ÷ (s + 1) < 1).
  const key = (cardId: number, score: number): number => (byDate ? date[cardId]! + score / (score + 1) : score);
  const k = (request.offset + request.limit) * COLLAPSE_SLACK + request.limit;
  const caps = namesSites(request) ? undefined : version.siteCaps;
  const top = caps === undefined ? new TopK(k) : new CappedTop(k, site, caps);
  const counts = new Counts(columns);
  const down = version.takenDown;
  let siteAt = 0;
  // Asked in ascending card order within one pass (siteAt starts again at each).
  const filtered = (cardId: number): boolean => {
    if ((flags[cardId]! & HIDDEN) !== 0 || (down !== undefined && down[cardId] === 1)) return true;
    for (const test of tests) if (!test(cardId)) return true;
    if (filterSites === undefined) return false;
    siteAt = seek(filterSites.cards, siteAt, filterSites.count, cardId);
    return siteAt >= filterSites.count || filterSites.cards[siteAt] !== cardId;
  };

  /** Scores `matches` into the top (all of them, or by their bounds with `prune`), counting those that match when `count`; returns the cards skipped. */
  const score = (matches: Matcher, count: boolean): number => {
    siteAt = 0;
    let skipped = 0;
    // Read once: the matcher is one of several classes, and its fields would be looked up per card.
    const { count: matched, cards, bounds: scores, exact, certain } = matches;
    if (!prune || exact || matched <= k || byDate) {
      // Without filters and takedowns only the flags are looked at; a card below the top's floor is not pushed.
      const unfiltered = tests.length === 0 && filterSites === undefined && down === undefined;
      let floor = top.floor();
      for (let i = 0; i < matched; i++) {
        const cardId = cards[i]!;
        if (unfiltered ? (flags[cardId]! & HIDDEN) !== 0 : filtered(cardId)) continue;
        const s = exact ? scores[i]! : matches.score(i);
        if (s < 0) continue;
        if (count) counts.add(cardId);
        const ranked = key(cardId, withStatic(s, weight[cardId]!));
        if (ranked < floor) continue;
        top.push(cardId, ranked);
        floor = top.floor();
      }
      return 0;
    }
    // The matches the filters keep, with their bounds.
    const kept = new Uint32Array(matched);
    const bounds = new Float64Array(matched);
    let n = 0;
    for (let i = 0; i < matched; i++) {
      const cardId = cards[i]!;
      if (filtered(cardId)) continue;
      kept[n] = i;
      bounds[n++] = withStatic(scores[i]!, weight[cardId]!);
      if (certain && count) counts.add(cardId);
    }
    const scoreOne = (j: number): void => {
      const cardId = cards[kept[j]!]!;
      const s = matches.score(kept[j]!);
      if (s < 0) return;
      if (!certain && count) counts.add(cardId);
      top.push(cardId, withStatic(s, weight[cardId]!));
    };
    // The k best bounds first, so that the floor rises early; then the rest in card order.
    const first = new TopK(k);
    for (let j = 0; j < n; j++) first.push(j, bounds[j]!);
    const done = new Uint8Array(n);
    for (const { cardId: j } of first.best()) {
      done[j] = 1;
      scoreOne(j);
    }
    for (let j = 0; j < n; j++) {
      if (done[j] === 1) continue;
      const floor = top.floor();
      // Until the top is full its floor is −∞, and no bound can rule a card out.
      if (bounds[j]! < floor || (floor > -Infinity && withStatic(matches.closer(kept[j]!), weight[cards[kept[j]!]!]!) < floor)) skipped += 1;
      else scoreOne(j);
    }
    return skipped;
  };

  // A word or an AND of words whose lists are not cached: ranked without decoding all their chains (windows.ts), its counts exact.
  let lower = false;
  let matches: Matcher | undefined;
  const ranker = { filtered, count: (cardId: number) => counts.add(cardId), score, floor: () => top.floor() };
  if (!(prune && !byDate && (await rankByWindows(version, request.query, evaluation, ranker, signal, languages, windowBits, windowChains)))) {
    matches = await evaluation.matcher(request.query);
    const skipped = score(matches, true);
    lower = evaluation.truncated || (skipped > 0 && !matches.certain);
  }
  const order = byDate ? top.best() : collapse(top.best(), (s) => site[s.cardId]!, (s) => s.score, request.limit);
  let page = order.slice(request.offset, request.offset + request.limit);
  // By date the key is no score: the page's cards are scored again (found by binary search among the matches).
  if (byDate) page = page.map(({ cardId }) => ({ cardId, score: withStatic(matches!.score(seek(matches!.cards, 0, matches!.count, cardId)), weight[cardId]!) }));
  return {
    // A capped site's matches past its cap are in no page: the total counts what the list shows, the facets every match (docs/search.md).
    total: { value: counts.total - (caps === undefined ? 0 : counts.sites.beyond(caps)), relation: lower ? 'gte' : 'eq' },
    page,
    facets: {
      site: counts.sites.largest((key, card) => version.siteHost(key, card)),
      type: counts.types.largest((_key, card) => version.mimeType(card)),
      lang: counts.languages.largest((key) => languageOf(key)),
    },
  };
}

/**
 * The matches counted: their total, and by site, by coarse type and by language. The
 * counts live in typed arrays kept between searches (the counting of one
 * search runs without a turn of the event loop, so searches never share
 * them), with the keys met listed so that only those are cleared.
 */
class Counts {
  total = 0;
  readonly sites: Tally;
  readonly types: Tally;
  readonly languages: Tally;
  private readonly site: Uint32Array;
  private readonly type: Uint8Array;
  private readonly language: Uint8Array;

  constructor(columns: CardColumns) {
    ({ site: this.site, type: this.type, language: this.language } = columns);
    this.sites = SITE_TALLY.reset(columns.sites);
    this.types = TYPE_TALLY.reset(CARD_TYPES.length);
    this.languages = LANGUAGE_TALLY.reset(256);
  }

  add(cardId: number): void {
    this.total += 1;
    this.sites.add(this.site[cardId]!, cardId);
    this.types.add(this.type[cardId]!, cardId);
    this.languages.add(this.language[cardId]!, cardId);
  }
}

/** Matching cards counted by a dense key (a site number, a coarse type), each with its lowest card. */
class Tally {
  private counts = new Uint32Array(0);
  private cards = new Uint32Array(0);
  private met = new Uint32Array(0);
  private size = 0;

  /** Cleared, with room for keys below `keys`. */
  reset(keys: number): this {
    if (this.counts.length < keys) {
      const room = Math.max(keys, 2 * this.counts.length);
      this.counts = new Uint32Array(room);
      this.cards = new Uint32Array(room);
      this.met = new Uint32Array(room);
    } else {
      for (let i = 0; i < this.size; i++) this.counts[this.met[i]!] = 0;
    }
    this.size = 0;
    return this;
  }

  add(key: number, cardId: number): void {
    if (this.counts[key]++ === 0) {
      this.cards[key] = cardId;
      this.met[this.size++] = key;
    } else if (cardId < this.cards[key]!) {
      // Pruned ranking counts out of card order: each key keeps its lowest card.
      this.cards[key] = cardId;
    }
  }

  /** How many were counted past each key's limit (0: no limit). */
  beyond(limits: Uint16Array): number {
    let over = 0;
    for (let i = 0; i < this.size; i++) {
      const key = this.met[i]!;
      const limit = limits[key]!;
      if (limit !== 0 && this.counts[key]! > limit) over += this.counts[key]! - limit;
    }
    return over;
  }

  /** The largest counts, named by one card of each (a site → its host, a coarse type → a MIME type). */
  largest(name: (key: number, card: number) => string): FacetCount[] {
    const { counts, cards } = this;
    const keys = Array.from(this.met.subarray(0, this.size));
    keys.sort((a, b) => counts[b]! - counts[a]! || cards[a]! - cards[b]!);
    return keys.slice(0, FACET_VALUES).map((key) => ({ value: name(key, cards[key]!), count: counts[key]! }));
  }
}

// This thread's tallies, reused by every search (Counts).
const SITE_TALLY = new Tally();
const TYPE_TALLY = new Tally();
const LANGUAGE_TALLY = new Tally();

/** The cards on any of `hosts` (the filters' site list), as `site:` finds them. */
async function siteCards(version: IndexVersion, hosts: readonly string[], signal: AbortSignal): Promise<Hits> {
  const query: QueryNode = { kind: 'or', children: hosts.map((host) => ({ kind: 'site', host, start: 0, end: 0 })) };
  return new Evaluation(version, signal).run(query);
}

function hit(version: IndexVersion, scored: Scored, marker: Marker): SearchHit {
  const card = version.card(scored.cardId);
  const snippet = card.text.snippet(marker);
  const out: SearchHit = {
    url: card.url,
    title: card.title ?? card.url,
    snippet: snippet.html,
    score: Math.round(scored.score * 10) / 10,
    site: card.host,
    type: card.type,
    size: card.size,
    date: new Date(card.date * 1000).toISOString(),
    lang: languageOf(version.columns.language[scored.cardId]!),
  };
  if (snippet.page !== undefined) out.page = snippet.page;
  if (card.pages !== undefined) out.pages = card.pages;
  if (card.referrer !== undefined) out.referrer = card.referrer;
  // The indexer writes "-" for a card whose bucket named no ARC record (an image card's); an imported archive's path is given decoded.
  return card.arc.file === '-' ? out : { ...out, archive: { ...card.arc, file: archiveName(card.arc.file) } };
}
