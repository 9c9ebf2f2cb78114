/**
 * A URL row as an Apache Nutch CrawlDatum and back: what `sherlock export
 * nutch` writes into `crawldb/current` and `sherlock import nutch` reads from
 * any crawldb (ours or Nutch's). Layout of a CrawlDatum: common/hadoop/nutch-writables.ts
 * and docs/nutch.md.
 *
 * Row → CrawlDatum:
 *   state         status: new, queued → db_unfetched; ok → db_fetched;
 *                 not_modified → db_notmodified; redirect → db_redir_perm
 *                 (301, 308) or db_redir_temp; error → db_unfetched (Nutch
 *                 keeps retrying, `retries` counts), but after a 404 or 410
 *                 db_gone (Nutch gives up on the first; we ask once more);
 *                 gone, disallowed → db_gone; duplicate → db_duplicate
 *   next_fetch    fetchTime (ms); when NULL, the last fetch or first seen
 *   retries       retries (a byte; 127 at most)
 *   interval      fetchInterval (s); NULL → Nutch's default, 30 days
 *   weight        score (Java float): the static weight as the rank it stands
 *                 for (common/index/cardinfo.ts: PageRank × cards, 1 on
 *                 average), the current index version's when it has the
 *                 URL (static-weights.ts), else the row's; a URL never
 *                 weighed (0) scores 1.0, Nutch's db.score.injected
 *   last_modified modifiedTime (ms), and `Last-Modified` (HTTP date, Text)
 *   checksum      signature (MD5 of the body, as Nutch's MD5Signature)
 *   etag          `ETag` (Text): the header name, as Nutch's protocol
 *                 plugins name response metadata
 *   status        `nutch.protocol.code` (Text), as Nutch's fetcher writes it
 *   (the copy)    `Content-Type` (Text): the MIME type the segment's
 *                 crawl_fetch gives the copy, which updatedb carries over
 *   (redirects)   `_repr_` (Text) on a redirect's target: the
 *                 representative URL (redirect.ts)
 *   last result   `_pst_` ProtocolStatus: success, notmodified, moved or
 *                 temp_moved with the target as argument (how Nutch records
 *                 a redirect), notfound, gone, robots_denied, exception
 *   the rest      `sherlock` (Text): JSON of what Nutch has no field for —
 *                 {state, depth, firstSeen, lastFetch, error, weight,
 *                 interval: null when unset}
 *
 * CrawlDatum → row: the `sherlock` entry is trusted only while its state
 * still maps to the datum's status (Nutch keeps unknown metadata through
 * updatedb, so a datum Nutch refetched since carries a stale one); otherwise
 * the row is derived from the datum alone: db_unfetched → new (error when
 * retries > 0), db_fetched → ok, db_notmodified → not_modified, db_redir_* →
 * redirect (target from `_pst_`), db_gone → gone (disallowed when `_pst_` says
 * robots_denied), db_duplicate → duplicate, db_orphan → gone,
 * db_parse_failed → ok; fetch_* statuses (a segment's crawl_fetch) likewise.
 */

import { mapGet, typed, type MapWritable, type Typed } from '../../common/hadoop/writables.js';
import { rankOfStaticWeight, staticWeight } from '../../common/index/cardinfo.js';
import { CRAWL_STATUS, NUTCH_DEFAULT_INTERVAL, PROTOCOL_STATUS, PROTOCOL_STATUS_WRITABLE, type CrawlDatum, type ProtocolStatus } from '../../common/hadoop/nutch-writables.js';
import type { UrlRowColumns } from '../../shepherd/status.js';
import { PERMANENT_REDIRECTS } from './redirect.js';
import { URL_STATES, type RestoredUrl, type UrlState } from '../../shepherd/urldb.js';

export const SHERLOCK_KEY = 'sherlock';
const PROTOCOL_CODE_KEY = 'nutch.protocol.code';
const PST_KEY = '_pst_';
const ETAG_KEY = 'ETag';
const LAST_MODIFIED_KEY = 'Last-Modified';
const CONTENT_TYPE_KEY = 'Content-Type';
const REPR_KEY = '_repr_';

/** Gatherer codes of a 404 and a 410 (gatherer/outcome.ts): Nutch's NOTFOUND and GONE. */
const GONE_CODES: ReadonlyMap<number, number> = new Map([
  [2404, PROTOCOL_STATUS.notfound],
  [2410, PROTOCOL_STATUS.gone],
]);

/** The crawldb status of a state (status: the row's HTTP status; error: its gatherer code). */
export function nutchStatus(state: UrlState, status: number | null, error: number | null): number {
  switch (state) {
    case 'ok':
      return CRAWL_STATUS.db_fetched;
    case 'not_modified':
      return CRAWL_STATUS.db_notmodified;
    case 'redirect':
      return status !== null && PERMANENT_REDIRECTS.has(status) ? CRAWL_STATUS.db_redir_perm : CRAWL_STATUS.db_redir_temp;
    case 'gone':
    case 'disallowed':
      return CRAWL_STATUS.db_gone;
    case 'duplicate':
      return CRAWL_STATUS.db_duplicate;
    case 'error':
      // Nutch's fetcher calls a 404 or 410 fetch_gone at once, which updatedb makes db_gone.
      return error !== null && GONE_CODES.has(error) ? CRAWL_STATUS.db_gone : CRAWL_STATUS.db_unfetched;
    default:
      return CRAWL_STATUS.db_unfetched;
  }
}

/** The ProtocolStatus Nutch would have recorded for the row's last result; null when never fetched. */
function protocolStatus(row: UrlRowColumns, state: UrlState, modified: bigint): ProtocolStatus | null {
  if (row.last_fetch === null) return null;
  const of = (code: number, args: string[] | null = null): ProtocolStatus => ({ code, lastModified: modified, args });
  switch (state) {
    case 'ok':
    case 'duplicate':
      return of(PROTOCOL_STATUS.success);
    case 'not_modified':
      return of(PROTOCOL_STATUS.notmodified);
    case 'redirect': {
      const args = row.redirect === null ? null : [row.redirect];
      return of(row.status !== null && PERMANENT_REDIRECTS.has(row.status) ? PROTOCOL_STATUS.moved : PROTOCOL_STATUS.temp_moved, args);
    }
    case 'gone':
      return of(row.status === 404 ? PROTOCOL_STATUS.notfound : PROTOCOL_STATUS.gone);
    case 'disallowed':
      return of(PROTOCOL_STATUS.robots_denied);
    case 'error': {
      const gone = row.error === null ? undefined : GONE_CODES.get(row.error);
      return gone !== undefined ? of(gone) : of(PROTOCOL_STATUS.exception, row.error === null ? null : [String(row.error)]);
    }
    default:
      return null;
  }
}

/** What the `sherlock` metadata entry carries. */
interface Extra {
  state: UrlState;
  depth: number;
  firstSeen: number;
  lastFetch: number | null;
  error: number | null;
  weight: number;
  interval?: null;
}

/** Nutch's db.score.injected: what a URL no index has weighed scores. */
const INJECTED_SCORE = 1;

/** The score of a static weight (0: never weighed). */
export function nutchScore(weight: number): number {
  return weight > 0 ? rankOfStaticWeight(weight) : INJECTED_SCORE;
}

/** The static weight a score stands for (a Nutch score, PageRank-like, back on the byte's scale). */
function weightOfScore(score: number): number {
  return Number.isFinite(score) ? staticWeight(score) : 0;
}

/**
 * The CrawlDatum of one URL row. `contentType`: its copy's, as the
 * segment's crawl_fetch has it ('' or undefined: none); `weight`: the
 * static weight to score it by when the index has one, else the row's;
 * `representative`: `_repr_`, when a redirect points to the row.
 */
export function crawlDatumOf(
  row: UrlRowColumns,
  { contentType, weight, representative }: { contentType?: string | undefined; weight?: number | undefined; representative?: string | undefined } = {},
): CrawlDatum {
  const state = URL_STATES[row.state]!;
  const modifiedTime = row.last_modified === null ? 0n : BigInt(row.last_modified) * 1000n;
  const entries: Array<[Typed, Typed]> = [];
  const put = (key: string, value: Typed) => entries.push([typed.text(key), value]);
  const pst = protocolStatus(row, state, modifiedTime);
  if (pst !== null) put(PST_KEY, { className: PROTOCOL_STATUS_WRITABLE.className, value: pst });
  // Nutch's fetcher puts the Content-Type in the fetch's datum, which updatedb keeps in the crawldb.
  if (contentType !== undefined && contentType !== '') put(CONTENT_TYPE_KEY, typed.text(contentType));
  if (row.status !== null) put(PROTOCOL_CODE_KEY, typed.text(String(row.status)));
  // Nutch's updatedb keeps the `_repr_` of the linked datum a redirect's target came in by.
  if (representative !== undefined) put(REPR_KEY, typed.text(representative));
  if (row.etag !== null) put(ETAG_KEY, typed.text(row.etag));
  if (row.last_modified !== null) put(LAST_MODIFIED_KEY, typed.text(new Date(row.last_modified * 1000).toUTCString()));
  const extra: Extra = { state, depth: row.depth, firstSeen: row.first_seen, lastFetch: row.last_fetch, error: row.error, weight: row.weight };
  if (row.interval === null) extra.interval = null;
  put(SHERLOCK_KEY, typed.text(JSON.stringify(extra)));
  const metadata: MapWritable = { entries };
  return {
    status: nutchStatus(state, row.status, row.error),
    fetchTime: BigInt(row.next_fetch ?? row.last_fetch ?? row.first_seen) * 1000n,
    retries: Math.min(row.retries, 127),
    fetchInterval: row.interval ?? NUTCH_DEFAULT_INTERVAL,
    score: nutchScore(weight ?? row.weight),
    modifiedTime,
    signature: row.checksum,
    metadata,
  };
}

function text(map: MapWritable | null, key: string): string | undefined {
  const v = mapGet(map, key);
  return v !== undefined && typeof v.value === 'string' ? v.value : undefined;
}

/** The datum's `sherlock` entry, when present, well formed and still true to the datum's status. */
function extraOf(datum: CrawlDatum): Extra | undefined {
  const json = text(datum.metadata, SHERLOCK_KEY);
  if (json === undefined) return undefined;
  let extra: Extra;
  try {
    extra = JSON.parse(json) as Extra;
  } catch {
    return undefined;
  }
  const ok =
    (URL_STATES as readonly string[]).includes(extra.state) &&
    Number.isSafeInteger(extra.depth) &&
    extra.depth >= 0 &&
    Number.isSafeInteger(extra.firstSeen) &&
    (extra.lastFetch === null || Number.isSafeInteger(extra.lastFetch)) &&
    (extra.error === null || Number.isSafeInteger(extra.error)) &&
    Number.isFinite(extra.weight);
  if (!ok) return undefined;
  const status = Number(text(datum.metadata, PROTOCOL_CODE_KEY) ?? NaN);
  return nutchStatus(extra.state, Number.isInteger(status) ? status : null, extra.error) === datum.status ? extra : undefined;
}

/** Nutch's statuses as our states, when no trustworthy `sherlock` entry says better. */
function stateOf(datum: CrawlDatum, pst: ProtocolStatus | undefined): UrlState {
  const S = CRAWL_STATUS;
  switch (datum.status) {
    case S.db_fetched:
    case S.db_parse_failed:
    case S.fetch_success:
      return 'ok';
    case S.db_notmodified:
    case S.fetch_notmodified:
      return 'not_modified';
    case S.db_redir_perm:
    case S.db_redir_temp:
    case S.fetch_redir_perm:
    case S.fetch_redir_temp:
      return 'redirect';
    case S.db_gone:
    case S.fetch_gone:
    case S.db_orphan:
      return pst?.code === PROTOCOL_STATUS.robots_denied ? 'disallowed' : 'gone';
    case S.db_duplicate:
      return 'duplicate';
    case S.fetch_retry:
      return 'error';
    default:
      return datum.retries > 0 ? 'error' : 'new';
  }
}

const UNSCHEDULED: ReadonlySet<UrlState> = new Set(['new', 'gone', 'disallowed']);

/** Milliseconds (a Java long) as whole Unix seconds; null when outside any sane range. */
function unixSeconds(ms: bigint): number | null {
  const s = Number(ms / 1000n);
  return s > 0 && s < 2 ** 40 ? s : null;
}

/**
 * The row to restore for one crawldb record; `now` stands in for first seen
 * when the datum does not say. SHERLOCK_BAD_URL-free: the URL is canonicalised
 * (or refused) by the database.
 */
export function restoredOf(url: string, datum: CrawlDatum, now: number): RestoredUrl {
  const pstEntry = mapGet(datum.metadata, PST_KEY);
  const pst = pstEntry?.className === PROTOCOL_STATUS_WRITABLE.className ? (pstEntry.value as ProtocolStatus) : undefined;
  const extra = extraOf(datum);
  const state = extra?.state ?? stateOf(datum, pst);
  const fetchTime = unixSeconds(datum.fetchTime);
  const code = Number(text(datum.metadata, PROTOCOL_CODE_KEY) ?? NaN);
  const status = Number.isInteger(code) && code >= 100 && code < 1000 ? code : null;
  const fetched = state !== 'new' && state !== 'queued';
  const lastFetch = extra !== undefined ? extra.lastFetch : fetched && fetchTime !== null ? Math.max(0, fetchTime - datum.fetchInterval) : null;
  const etag = text(datum.metadata, ETAG_KEY) ?? null;
  // Our own `_repr_` is a target's representative, never a redirect's target (a chain's middle has both).
  const redirect = state === 'redirect' ? (pst?.args?.[0] ?? (extra === undefined ? text(datum.metadata, REPR_KEY) : undefined) ?? null) : null;
  return {
    url,
    state,
    depth: extra?.depth ?? 0,
    firstSeen: extra?.firstSeen ?? now,
    lastFetch,
    nextFetch: UNSCHEDULED.has(state) ? null : fetchTime,
    interval: extra?.interval === null ? null : fetched || extra !== undefined ? Math.max(0, datum.fetchInterval) : null,
    retries: Math.max(0, datum.retries),
    status,
    error: extra?.error ?? null,
    checksum: datum.signature !== null && datum.signature.length === 16 ? datum.signature : null,
    lastModified: datum.modifiedTime > 0n ? unixSeconds(datum.modifiedTime) : null,
    etag,
    // Our weight while the score is the one it gave; a score Nutch set (or gave) back on the weight's scale.
    weight: extra !== undefined && Math.fround(nutchScore(extra.weight)) === datum.score ? extra.weight : weightOfScore(datum.score),
    redirect,
  };
}
