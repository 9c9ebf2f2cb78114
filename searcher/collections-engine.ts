/**
 * The Engine of a searcher of several collections (`searcher.collections`,
 * docs/search.md "Several collections"): one PoolEngine per collection, each
 * over its own state directory, asked together and their answers merged.
 *
 * A search asks each collection picked (request.collections, default all)
 * for the top offset+limit hits of its own ranking. Scores of two indexes
 * are not on one scale (static weights and document frequencies are each
 * index's own), so each collection's scores are divided by its best score
 * for the query (mergeResults): every collection's best hit scores 1, and
 * the hits are merged by that normalised score (by date, ties by it, for
 * sort "date"), then the page is cut.
 *
 * Override: collections are in the config's order, a later one newer. A
 * hit whose URL the loaded version of a newer collection picked also has
 * (PoolEngine.hasUrls, whether or not that copy matches the query) is
 * hidden: the newer copy is the page as it is now. When hidden hits leave
 * the page short, the collections that had them are asked again for as
 * many more. Totals and facets are the collections' sums less the hidden
 * copies seen among the hits fetched; copies further down are not looked
 * for, so the total may count a URL twice (docs/search.md says so).
 *
 * Result caps and site collapsing apply within each collection's ranking
 * (its pool's), not over the merged list: a capped site can show its cap
 * from each collection picked (docs/search.md "Several collections").
 *
 * Suggestions: every collection's completions, the newest collection's
 * first, each text once (a title when any collection has it as one), cut
 * to the limit.
 *
 * Takedowns: each pool follows every collection's takedown file and hides
 * their union (pool-engine.ts). `version` joins every collection's, so a
 * swap in any of them changes it (the result cache keys on it).
 */

import type { SiteRules } from '../common/site-rules.js';
import { NoIndexError, decodeResult, type EncodedResult, type Engine, type FacetCount, type SearchHit, type SearchRequest, type SearchResult, type SuggestRequest, type SuggestResult, type Completion } from './engine.js';
import { shares, type CacheSizes } from './index-version.js';

/** What the merge needs of one collection's engine (a PoolEngine). */
export interface CollectionEngine extends Engine {
  hasUrls(urls: readonly string[]): Promise<boolean[]>;
  check(): Promise<void>;
  resize(caches: CacheSizes): void;
  setRules(rules: SiteRules): Promise<boolean>;
  close(): void;
}

export interface Collection {
  name: string;
  state: string;
  engine: CollectionEngine;
}

/** One collection's answer: its hits, and which of them a newer collection's copy hides. */
export interface CollectionAnswer {
  name: string;
  result: SearchResult;
  hidden: ReadonlySet<string>;
}

/** How many times a collection short of hits after the override is asked again. */
const MAX_ROUNDS = 4;

export class CollectionsEngine implements Engine {
  readonly collections: readonly string[];

  /** `collections` oldest first: a later one's copy of a URL hides an earlier one's. */
  constructor(private readonly all: readonly Collection[]) {
    this.collections = all.map((c) => c.name);
  }

  /** Every collection's version, "NAME=VERSION" (none: "NAME=-") joined by spaces; undefined while none has one. */
  get version(): string | undefined {
    return joinVersions(this.all.map((c) => [c.name, c.engine.version]));
  }

  status(): Record<string, unknown> {
    const each: Array<Record<string, unknown>> = this.all.map((c) => ({ name: c.name, state: c.state, ...c.engine.status() }));
    const sum = (key: string) => each.reduce((n: number, s) => n + (typeof s[key] === 'number' ? s[key] : 0), 0);
    return {
      index: this.version ?? null,
      cards: sum('cards'),
      bytes: sum('bytes'),
      threads: sum('threads'),
      takedowns: each[0]?.['takedowns'] ?? 0,
      chain_cache: sum('chain_cache'),
      card_cache: sum('card_cache'),
      collections: each,
    };
  }

  /** New budgets for the whole searcher: each collection's pool gets an equal share. */
  resize(caches: CacheSizes): void {
    const share = shares(caches, this.all.length);
    for (const c of this.all) c.engine.resize(share);
  }

  async check(): Promise<void> {
    await Promise.all(this.all.map((c) => c.engine.check()));
  }

  /** The site rules to every collection's pool (each caps within its own ranking); true when any of them changed. */
  async setRules(rules: SiteRules): Promise<boolean> {
    const changed = await Promise.all(this.all.map((c) => c.engine.setRules(rules)));
    return changed.includes(true);
  }

  close(): void {
    for (const c of this.all) c.engine.close();
  }

  async search(request: SearchRequest, signal: AbortSignal): Promise<EncodedResult> {
    const picked = request.collections === undefined ? this.all : this.all.filter((c) => request.collections!.includes(c.name));
    const versions = new Map(this.all.map((c) => [c.name, c.engine.version]));
    const wanted = request.offset + request.limit;
    const windows = picked.map(() => wanted);
    const answers = await Promise.all(picked.map((c, i) => this.ask(c, windows[i]!, request, signal, versions)));
    if (answers.every((a) => a === undefined)) throw new NoIndexError();
    let asked = picked.map((_, i) => i);
    for (let round = 1; ; round++) {
      await markOverridden(picked, answers, asked);
      const shown = answers.reduce((n, a) => n + (a === undefined ? 0 : a.result.hits.length - a.hidden.size), 0);
      if (shown >= wanted || round === MAX_ROUNDS) break;
      // Those that had hidden hits and may hold more are asked again for as many more; none: the page is what there is.
      asked = answers.flatMap((a, i) => (a !== undefined && a.hidden.size > 0 && a.result.hits.length === windows[i] && a.result.total.value > windows[i]! ? [i] : []));
      if (asked.length === 0) break;
      await Promise.all(
        asked.map(async (i) => {
          windows[i]! += answers[i]!.hidden.size;
          answers[i] = await this.ask(picked[i]!, windows[i]!, request, signal, versions);
        }),
      );
    }
    const merged = mergeResults(
      answers.filter((a): a is CollectionAnswer => a !== undefined),
      request,
    );
    return { json: JSON.stringify(merged), version: joinVersions(this.all.map((c) => [c.name, versions.get(c.name)])) };
  }

  /** Every collection's completions, the newer collections' first, a text given once, cut to the limit. */
  async suggest(request: SuggestRequest, signal: AbortSignal): Promise<SuggestResult> {
    const answers = await Promise.all(
      [...this.all].reverse().map((c) =>
        c.engine.suggest(request, signal).catch((err: unknown) => {
          if (err instanceof NoIndexError) return undefined;
          throw err;
        }),
      ),
    );
    if (answers.every((a) => a === undefined)) throw new NoIndexError();
    const byText = new Map<string, Completion>();
    // A text in its first place; said to be a title when any collection has it as one.
    for (const completion of answers.flatMap((a) => a?.suggestions ?? [])) if (!byText.has(completion.text) || completion.kind === 'title') byText.set(completion.text, completion);
    return { q: request.q, suggestions: [...byText.values()].slice(0, request.limit) };
  }

  /** One collection's top `window` hits; undefined when it has no index version yet. */
  private async ask(c: Collection, window: number, request: SearchRequest, signal: AbortSignal, versions: Map<string, string | undefined>): Promise<CollectionAnswer | undefined> {
    try {
      // The collections picked stay here: each pool searches its own one.
      const answer = await c.engine.search({ ...request, collections: undefined, offset: 0, limit: window }, signal);
      if ('version' in answer) versions.set(c.name, answer.version);
      return { name: c.name, result: decodeResult(answer), hidden: new Set() };
    } catch (err) {
      if (err instanceof NoIndexError) return undefined;
      throw err;
    }
  }
}

function joinVersions(pairs: Array<[string, string | undefined]>): string | undefined {
  if (pairs.every(([, version]) => version === undefined)) return undefined;
  return pairs.map(([name, version]) => `${name}=${version ?? '-'}`).join(' ');
}

/** Marks in the answers at `which` the URLs a newer picked collection has a copy of (the answers in `picked`'s order, oldest first). */
async function markOverridden(picked: readonly Collection[], answers: Array<CollectionAnswer | undefined>, which: readonly number[]): Promise<void> {
  await Promise.all(
    which.map(async (i) => {
      const answer = answers[i];
      if (answer === undefined) return;
      const hidden = new Set<string>();
      for (const newer of picked.slice(i + 1)) {
        const urls = answer.result.hits.map((h) => h.url).filter((url) => !hidden.has(url));
        const found = await newer.engine.hasUrls(urls);
        urls.forEach((url, k) => found[k] && hidden.add(url));
      }
      answers[i] = { ...answer, hidden };
    }),
  );
}

/**
 * The merged page (module comment): hits not hidden, each with its
 * collection and its score divided by its collection's best; ordered by
 * that score (sort "date": by date, then by it), ties to the newer
 * collection, then in each collection's order; totals and facets summed,
 * less the hidden hits; the suggestion of the newest collection offering one.
 * `answers` oldest first.
 */
export function mergeResults(answers: readonly CollectionAnswer[], request: Pick<SearchRequest, 'offset' | 'limit' | 'sort'>): SearchResult {
  const candidates: Array<{ hit: SearchHit; age: number; rank: number }> = [];
  answers.forEach((answer, age) => {
    const best = answer.result.hits.reduce((max, h) => Math.max(max, h.score), 0);
    answer.result.hits.forEach((hit, rank) => {
      if (answer.hidden.has(hit.url)) return;
      candidates.push({ hit: { ...hit, score: best > 0 ? hit.score / best : 0, collection: answer.name }, age, rank });
    });
  });
  const byDate = request.sort === 'date';
  candidates.sort(
    (a, b) =>
      (byDate ? Date.parse(b.hit.date) - Date.parse(a.hit.date) : 0) || b.hit.score - a.hit.score || b.age - a.age || a.rank - b.rank,
  );
  const hiddenHits = answers.flatMap((a) => a.result.hits.filter((h) => a.hidden.has(h.url)));
  const facets = (key: 'site' | 'type' | 'lang') => sumFacets(answers.map((a) => a.result.facets[key]), hiddenHits.map((h) => h[key]));
  const suggest = [...answers].reverse().find((a) => a.result.suggest !== undefined)?.result.suggest;
  return {
    total: {
      value: answers.reduce((n, a) => n + a.result.total.value, 0) - hiddenHits.length,
      relation: answers.some((a) => a.result.total.relation === 'gte') ? 'gte' : 'eq',
    },
    hits: candidates.slice(request.offset, request.offset + request.limit).map((c) => c.hit),
    facets: { site: facets('site'), type: facets('type'), lang: facets('lang') },
    ...(suggest === undefined ? {} : { suggest }),
  };
}

/** Facet lists summed by value, less one for each hidden hit's value; as long as the longest list, largest first. */
function sumFacets(lists: ReadonlyArray<readonly FacetCount[]>, hidden: readonly string[]): FacetCount[] {
  const counts = new Map<string, number>();
  for (const list of lists) for (const { value, count } of list) counts.set(value, (counts.get(value) ?? 0) + count);
  for (const value of hidden) if (counts.has(value)) counts.set(value, counts.get(value)! - 1);
  const longest = lists.reduce((n, list) => Math.max(n, list.length), 0);
  return [...counts]
    .filter(([, count]) => count > 0)
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
    .slice(0, longest);
}
