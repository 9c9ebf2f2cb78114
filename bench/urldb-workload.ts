/**
 * The URL-database table's workload, shared by sherlock's worker
 * (bench/urldb-worker.ts) and the peer's (bench/peers/urldb-worker.ts), so
 * both do the same inserts and lookups:
 *
 *   inject  the synthetic set, `INJECT_BATCH` URLs per transaction, each batch
 *           a later `now` (as the shepherd merges a few thousand pages' links)
 *   plan    PLAN_SIZE new URLs due, then marked queued
 *   merge   a fetch result for each of them (FETCH_MIX), one transaction
 *
 * The synthetic set: `count` distinct canonical URLs on `sites` sites, the
 * same for every run and every engine (a fixed seed; nothing depends on the
 * clock or on Math.random).
 *
 * Shape, as a real crawl's link stream looks to a URL database:
 *   - site sizes are skewed: site i gets a share ∝ 1/√(i + 1), so with 100 URLs
 *     per site on average the biggest holds ~160× the smallest (10M on 100k
 *     sites: ~16,000 down to ~50); none reaches max_urls_per_site's default;
 *   - the stream interleaves sites: each URL's site is drawn by that weight,
 *     as the links of many pages merged in one batch are;
 *   - hosts: https mostly, some http, a few explicit ports, `www.` or a
 *     subdomain on some; paths of 1–5 segments (dated blog slugs, shop
 *     items, wiki titles, versioned docs, category pages), 20% with a query
 *     string; 44–93 bytes for 90% of them, 65 on average.
 * A URL's site and its number within the site are part of its text, so no two
 * are equal and all are already canonical (lower-case hosts, no default port,
 * no escapes a canonicaliser would change).
 */

import { performance } from 'node:perf_hooks';
import type { UrlDbTiming } from './parts.js';
import { mulberry32 } from './queries.js';

export const INJECT_BATCH = 100_000;
export const PLAN_SIZE = 100_000;
/** At most this many URLs of one site per plan (as `sherlock crawl` plans). */
export const PLAN_PER_SITE = 2_000;
/** The first batch's time; each later batch is a minute later. */
export const START = 1_700_000_000;

/** Fetch outcomes of the merge, per 100 results: gatherer code and how many. */
export const FETCH_MIX: ReadonlyArray<{ code: number; per100: number; what: string }> = [
  { code: 0, per100: 85, what: 'ok with checksum, ETag and Last-Modified' },
  { code: 3, per100: 5, what: 'not modified' },
  { code: 2404, per100: 4, what: '404' },
  { code: 1001, per100: 3, what: 'temporary error' },
  { code: 1, per100: 2, what: 'redirect' },
  { code: 2304, per100: 1, what: 'robots' },
];

/** The code of result number i (FETCH_MIX spread evenly). */
export function fetchCode(i: number): number {
  let slot = i % 100;
  for (const { code, per100 } of FETCH_MIX) {
    if (slot < per100) return code;
    slot -= per100;
  }
  return 0;
}

export function noTime(): UrlDbTiming {
  return { wallMs: 0, cpuMs: 0 };
}

/** Runs fn and adds its wall and CPU time (user + system, of the whole process) to `into`. */
export function timed<T>(into: UrlDbTiming, fn: () => T): T {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  try {
    return fn();
  } finally {
    const used = process.cpuUsage(cpu);
    into.wallMs += performance.now() - wall;
    into.cpuMs += (used.user + used.system) / 1000;
  }
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'xe', 'zu', 'bar', 'cor', 'den', 'fil', 'gan', 'hol', 'jas', 'mor', 'pet', 'quin', 'ster', 'tral', 'wen', 'yor'];
const WORDS = [
  'about', 'archive', 'article', 'best', 'blue', 'city', 'cloud', 'data', 'design', 'energy', 'guide', 'health', 'history', 'house',
  'intro', 'kitchen', 'light', 'market', 'model', 'music', 'news', 'notes', 'open', 'garden', 'policy', 'power', 'review', 'river',
  'school', 'science', 'season', 'small', 'sport', 'story', 'summer', 'system', 'travel', 'update', 'water', 'winter', 'world', 'year',
];
const TLDS = ['com', 'com', 'com', 'org', 'net', 'de', 'fr', 'io', 'co.uk', 'info', 'nl', 'edu'];

export interface SynthOptions {
  count: number;
  sites: number;
  seed?: number;
}

export const DEFAULT_SEED = 20240611;

/** The site prefixes (scheme://host[:port]), one per site, by index. */
export function syntheticSites(sites: number, seed: number = DEFAULT_SEED): string[] {
  const rnd = mulberry32(seed ^ 0x51735);
  const out: string[] = [];
  for (let i = 0; i < sites; i++) {
    const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
    let name = '';
    for (let n = 2 + Math.floor(rnd() * 3); n > 0; n--) name += pick(SYLLABLES);
    // The index makes every host distinct, whatever the syllables drew.
    name += i.toString(36);
    const r = rnd();
    const host = r < 0.45 ? `www.${name}.${pick(TLDS)}` : r < 0.6 ? `${pick(WORDS)}.${name}.${pick(TLDS)}` : `${name}.${pick(TLDS)}`;
    const scheme = rnd() < 0.85 ? 'https' : 'http';
    const port = rnd() < 0.01 ? `:${8000 + Math.floor(rnd() * 1000)}` : '';
    out.push(`${scheme}://${host}${port}`);
  }
  return out;
}

/** The path and query of URL number `n` of a site; `n` is in it, so paths of one site never repeat. */
function path(rnd: () => number, n: number): string {
  const word = () => WORDS[Math.floor(rnd() * WORDS.length)]!;
  const slug = (min: number, max: number) => Array.from({ length: min + Math.floor(rnd() * (max - min + 1)) }, word).join('-');
  const id = String(100_000 + n * 37);
  let p: string;
  switch (Math.floor(rnd() * 6)) {
    case 0:
      p = `/blog/${2005 + Math.floor(rnd() * 20)}/${String(1 + Math.floor(rnd() * 12)).padStart(2, '0')}/${slug(2, 7)}-${id}`;
      break;
    case 1:
      p = `/shop/${word()}/${slug(1, 3)}/item-${id}.html`;
      break;
    case 2:
      p = `/wiki/${word()[0]!.toUpperCase()}${slug(1, 4).replaceAll('-', '_')}_${id}`;
      break;
    case 3:
      p = `/docs/v${1 + Math.floor(rnd() * 4)}.${Math.floor(rnd() * 10)}/${word()}/${word()}/${id}/index.html`;
      break;
    case 4:
      p = `/category/${word()}/${word()}/page/${id}`;
      break;
    default:
      p = `/${slug(1, 3)}-${id}.php`;
  }
  const q = rnd();
  if (q < 0.1) p += `?id=${Math.floor(rnd() * 1_000_000)}&sort=${word()}&lang=en`;
  else if (q < 0.2) p += `?page=${1 + Math.floor(rnd() * 50)}`;
  return p;
}

/**
 * The URLs in stream order, yielded in batches of `batch` (the last may be
 * shorter). Memory: the site list and a cumulative weight table, O(sites).
 */
export function* syntheticUrlBatches(opts: SynthOptions, batch: number): Generator<string[]> {
  const seed = opts.seed ?? DEFAULT_SEED;
  const sites = syntheticSites(opts.sites, seed);
  const cumulative = new Float64Array(opts.sites);
  let sum = 0;
  for (let i = 0; i < opts.sites; i++) cumulative[i] = sum += 1 / Math.sqrt(i + 1);
  const next = new Uint32Array(opts.sites);
  const rnd = mulberry32(seed);
  let out: string[] = [];
  for (let k = 0; k < opts.count; k++) {
    // Binary search for the first cumulative weight above the draw.
    const x = rnd() * sum;
    let lo = 0;
    let hi = opts.sites - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    out.push(sites[lo]! + path(rnd, next[lo]!++));
    if (out.length === batch) {
      yield out;
      out = [];
    }
  }
  if (out.length > 0) yield out;
}
