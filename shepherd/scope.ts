/**
 * Crawl scope and trap defence: which URLs the shepherd remembers and plans,
 * and the one spelling each is remembered under (DESIGN §5; issue 5). Pure: no
 * files, no clock, no network; the URL database calls it for every seed and
 * every link it merges, and `sherlock check url` can show its verdict.
 *
 * Normalising — `normalise(url, base?)`:
 *  1. canonicalUrl (common/url.ts, DESIGN §3) of the input.
 *  2. Session and tracking parameters named in `strip_params` are removed from
 *     the query (`?sid=…&a=1` → `?a=1`) and from path parameters
 *     (`/page;jsessionid=…` → `/page`). Names match case-insensitively
 *     (`PHPSESSID` = `phpsessid`); an entry ending in `*` matches by prefix
 *     (`utm_*`, `aspsessionid*`). Only parameters whose name matches go; other
 *     `;params` and the order of the rest are kept.
 *  3. Empty query pieces (`a=1&&b=2`, a trailing `&`) are dropped: the URL
 *     Standard's urlencoded parser skips them, so they name nothing.
 *  4. canonicalUrl again, so the result is canonical (a query left empty goes).
 * Why: a site that puts a session ID in every link (`;jsessionid=`, `?sid=`)
 * otherwise offers a new URL for each page view, forever. Stripped, all those
 * variants are one URL, one footprint, one row. The cost: a site that really
 * uses `sid` for something else (a story id) loses that distinction — remove
 * the name from strip_params for such crawls. normalise is idempotent.
 *
 * Judging — `judge(url, from)`, in this order; the first failing rule names the
 * reason, and every rule sees the normalised URL:
 *  - scheme   the URL has no canonical form: not http or https, or unparseable.
 *  - length   longer than max_url_length (the raw input longer than
 *             MAX_URL_LENGTH, 8192, counts too). Checked before the patterns,
 *             so a regular expression never runs on more than that.
 *  - denied   the host matches a `deny` host pattern. Deny beats everything,
 *             seeds and allow included: it is the operator's last word.
 *  - pattern  the URL matches one of `deny_patterns`.
 *  - rule     a site rule (common/site-rules.ts) refuses it: it matches a
 *             `reject` pattern, or none of an `accept` list's.
 *  Seeds (`from = {seed: true}`) stop here: they are depth 0 and in scope by
 *  definition. Links (`from = {url, depth}`, `url` resolved against `from.url`
 *  when relative) go on:
 *  - scope    the host is outside the crawl (see below).
 *  - depth    from.depth + 1 > max_depth.
 *  - repeats  one path segment occurs more than max_path_repeats times
 *             (`/a/b/a/b/a/b/a/b`), the classic relative-link loop of a page
 *             that links `a/b/` from inside itself. Empty segments count too
 *             (`/x//x//x//x//`); segments compare as written, path parameters
 *             left after stripping included.
 *  - params   more than max_query_params query parameters after stripping:
 *             faceted-search pages combine filters without end.
 *
 * Scope — which hosts a link may lead to:
 *  - host     the link's host equals a seed's host. Port and scheme do not
 *             matter: http://h/ and https://h:8443/ are different sites (own
 *             footprint, own budget in the URL database) but the same host, so
 *             both are in scope; the operator named the host, not a port.
 *  - domain   the link's registrable domain equals a seed's: a.example.co.uk and
 *             b.example.co.uk are both example.co.uk (tldts getDomain over the
 *             Public Suffix List). The PSL's private section is honoured
 *             (allowPrivateDomains): x.github.io and y.github.io belong to
 *             different people, so they are different domains, as browsers treat
 *             them for cookies. A host without a registrable domain (an IPv4 or
 *             IPv6 address, `localhost`, a bare public suffix) is compared
 *             exactly, as under host scope.
 *  - any      every host.
 *  `allow` host patterns widen the scope (a link to an allowed host is in
 *  scope whatever `scope` says); `deny` narrows it (above). `inScope(url)`
 *  answers this alone (no depth or trap rules): the URLs of a sitemap named
 *  in robots.txt are extra seeds, but only those inScope, so a sitemap cannot
 *  widen the crawl; they are then judged with `{seed: true}`.
 *
 * Host patterns (allow, deny): `docs.example.org` is that host only;
 * `*.example.net` is example.net and every host under it, at any depth. Hosts
 * are written as in a URL: an IDN is mapped to punycode, an IPv6 address needs
 * its brackets (`[::1]`); no port, path or other wildcard. Validated at config
 * load (hostPatternProblem).
 *
 * URL patterns (deny_patterns): JavaScript regular expressions, unanchored and
 * case-sensitive, tested against the normalised URL (so against
 * `https://example.com/a?b`, without session parameters, at most
 * max_url_length long). Validated at config load (urlPatternProblem); an
 * operator's pattern with catastrophic backtracking is the operator's to fix.
 *
 * Traps that are not this module's: a calendar (`/cal?d=N` linking to
 * `d=N+1` forever) has a short, clean URL at every step, so nothing here can
 * tell it from a real archive. It is bounded twice elsewhere: by depth (each
 * step is one hop deeper, so a chain from a seed stops after max_depth hops)
 * and by the URL database's per-site budget (max_urls_per_site), which caps
 * however many branches such pages offer. Session IDs in the host or in
 * path segments themselves (ASP.NET's `/(S(…))/`) are left to the same budget
 * and to deny_patterns.
 *
 * A Scope is immutable; build a new one when the config or the seeds change.
 */

import { isSherlockError, SherlockError } from '../common/errors.js';
import { SiteRules } from '../common/site-rules.js';
import { canonicalUrl, MAX_URL_LENGTH, urlParts } from '../common/url.js';
import type { ShepherdConfig } from './config.js';
import { compileHostPattern, matchesHost, registrableDomain, urlPatternProblem, type HostPattern } from '../common/url-patterns.js';
import { ParamNames } from './scope-patterns.js';

/** The keys of [shepherd] a Scope reads (the parsed config, defaults filled in). */
export type ScopeConfig = Pick<
  ShepherdConfig,
  | 'scope'
  | 'max_depth'
  | 'max_url_length'
  | 'max_path_repeats'
  | 'max_query_params'
  | 'allow'
  | 'deny'
  | 'deny_patterns'
  | 'strip_params'
>;

/** Why a URL is not taken: a closed set, also the label of the shepherd's rejection counters. */
export type RejectReason = 'scope' | 'depth' | 'length' | 'repeats' | 'params' | 'denied' | 'pattern' | 'rule' | 'scheme';

export const REJECT_REASONS: readonly RejectReason[] = [
  'scheme',
  'length',
  'denied',
  'pattern',
  'rule',
  'scope',
  'depth',
  'repeats',
  'params',
];

/** Where a URL was found: it is a seed, or a link on the page `url` at `depth` hops from a seed. */
export type JudgeFrom = { seed: true } | { url: string; depth: number };

export type Verdict = { ok: true; url: string; depth: number } | { ok: false; reason: RejectReason };

/** The path and query of a canonical URL's rest (`/path?query`). */
function splitRest(rest: string): { path: string; query: string | undefined } {
  const q = rest.indexOf('?');
  return q < 0 ? { path: rest, query: undefined } : { path: rest.slice(0, q), query: rest.slice(q + 1) };
}

export class Scope {
  private readonly config: ScopeConfig;
  private readonly strip: ParamNames;
  private readonly allow: HostPattern[];
  private readonly deny: HostPattern[];
  private readonly patterns: RegExp[];
  private readonly seedHosts = new Set<string>();
  private readonly seedDomains = new Set<string>();
  /** factsOf()'s memory; it changes no verdict, so a Scope stays immutable to its callers. */
  private readonly facts = new Map<string, UrlFacts>();

  /**
   * A scope for `config` around the seeds' hosts (seedHost of each seed URL;
   * host and domain scope compare with them and their domains). A pattern that
   * does not parse is a SherlockError (SHERLOCK_BAD_CONFIG with the key).
   */
  constructor(
    config: ScopeConfig,
    seedHosts: Iterable<string>,
    private readonly rules = SiteRules.none,
  ) {
    this.config = config;
    this.strip = new ParamNames(config.strip_params);
    this.allow = compileHostPatterns(config.allow, 'shepherd.allow');
    this.deny = compileHostPatterns(config.deny, 'shepherd.deny');
    const badPattern = urlPatternProblem(config.deny_patterns);
    if (badPattern !== undefined) {
      throw new SherlockError('SHERLOCK_BAD_CONFIG', `shepherd.deny_patterns: ${badPattern}`, { key: 'shepherd.deny_patterns' });
    }
    this.patterns = config.deny_patterns.map((pattern) => new RegExp(pattern));
    for (const host of seedHosts) {
      this.seedHosts.add(host);
      this.seedDomains.add(registrableDomain(host));
    }
  }

  /**
   * The canonical URL of `url` (resolved against `base` when relative) with
   * session and tracking parameters stripped (module comment, "Normalising").
   * Throws SHERLOCK_BAD_URL when it has no canonical form.
   */
  normalise(url: string, base?: string): string {
    const { site, rest } = urlParts(canonicalUrl(url, base));
    const { path, query } = splitRest(rest);
    const strippedPath = path.includes(';') ? path.split('/').map((segment) => this.stripSegment(segment)).join('/') : path;
    const pieces = query === undefined ? [] : query.split('&').filter((piece) => piece !== '' && !this.strip.matches(piece));
    const strippedQuery = pieces.length === 0 ? '' : `?${pieces.join('&')}`;
    return canonicalUrl(`${site}${strippedPath}${strippedQuery}`);
  }

  /** One path segment without its stripped `;name=value` parameters. */
  private stripSegment(segment: string): string {
    if (!segment.includes(';')) return segment;
    const [name, ...params] = segment.split(';');
    return [name!, ...params.filter((param) => !this.strip.matches(param))].join(';');
  }

  /** Whether a link to this URL's host is inside the crawl: scope and allow, minus deny. */
  inScope(url: string): boolean {
    let host: string;
    try {
      host = urlParts(this.normalise(url)).host;
    } catch (err) {
      if (isSherlockError(err, 'SHERLOCK_BAD_URL')) return false;
      throw err;
    }
    return !this.deny.some((p) => matchesHost(p, host)) && this.hostInScope(host);
  }

  private hostInScope(host: string): boolean {
    if (this.allow.some((p) => matchesHost(p, host))) return true;
    switch (this.config.scope) {
      case 'any':
        return true;
      case 'host':
        return this.seedHosts.has(host);
      case 'domain':
        return this.seedDomains.has(registrableDomain(host));
    }
  }

  /**
   * Whether the shepherd takes `url`, found as a seed or as a link on `from.url`
   * (module comment, "Judging"); when it does, the normalised URL and its depth.
   */
  judge(url: string, from: JudgeFrom): Verdict {
    const facts = this.factsOf(url, 'seed' in from ? undefined : from.url);
    if (facts.early !== undefined) return reject(facts.early);
    if ('seed' in from) return { ok: true, url: facts.url, depth: 0 };
    if (!facts.inScope) return reject('scope');
    const depth = from.depth + 1;
    if (depth > this.config.max_depth) return reject('depth');
    if (facts.late !== undefined) return reject(facts.late);
    return { ok: true, url: facts.url, depth };
  }

  /**
   * What the rules say of `url` whatever its depth; remembered for an
   * absolute URL (the base cannot change what it means), since every page
   * of a site links the same menus again.
   */
  private factsOf(url: string, base: string | undefined): UrlFacts {
    const absolute = ABSOLUTE.test(url);
    const known = absolute ? this.facts.get(url) : undefined;
    if (known !== undefined) return known;
    const facts = this.findFacts(url, base);
    if (absolute) {
      if (this.facts.size >= FACTS_LIMIT) this.facts.clear();
      this.facts.set(url, facts);
    }
    return facts;
  }

  private findFacts(url: string, base: string | undefined): UrlFacts {
    if (url.length > MAX_URL_LENGTH) return { url: '', early: 'length', inScope: false };
    let normal: string;
    try {
      normal = this.normalise(url, base);
    } catch (err) {
      if (isSherlockError(err, 'SHERLOCK_BAD_URL')) return { url: '', early: 'scheme', inScope: false };
      throw err;
    }
    if (normal.length > this.config.max_url_length) return { url: normal, early: 'length', inScope: false };
    const { host, rest } = urlParts(normal);
    if (this.deny.some((p) => matchesHost(p, host))) return { url: normal, early: 'denied', inScope: false };
    if (this.patterns.some((pattern) => pattern.test(normal))) return { url: normal, early: 'pattern', inScope: false };
    if (this.rules.refusal(normal) !== undefined) return { url: normal, early: 'rule', inScope: false };
    const facts: UrlFacts = { url: normal, inScope: this.hostInScope(host) };
    const { path, query } = splitRest(rest);
    if (repeatsTooOften(path, this.config.max_path_repeats)) facts.late = 'repeats';
    else if (query !== undefined && query.split('&').length > this.config.max_query_params) facts.late = 'params';
    return facts;
  }
}

/**
 * The rules' findings on a URL, depth aside, in judge()'s order: `early`
 * (scheme, length, denied, pattern) before the seed exit, then scope, then
 * (depth, then) `late` (repeats, params).
 */
interface UrlFacts {
  url: string;
  early?: RejectReason;
  inScope: boolean;
  late?: RejectReason;
}

/** A URL whose meaning no base can change: a scheme and an authority (`http:x` alone is relative to an http base). */
const ABSOLUTE = /^https?:\/\//i;

/** URLs whose facts a Scope remembers; past this, it forgets them all and starts again. */
const FACTS_LIMIT = 100_000;

/** The host a seed puts in scope (canonical: lower case, punycode); SHERLOCK_BAD_URL when the URL has no canonical form. */
export function seedHost(url: string): string {
  return urlParts(canonicalUrl(url)).host;
}

function reject(reason: RejectReason): Verdict {
  return { ok: false, reason };
}

function compileHostPatterns(entries: readonly string[], key: string): HostPattern[] {
  return entries.map((entry, index) => {
    const compiled = compileHostPattern(entry);
    if (typeof compiled === 'string') {
      throw new SherlockError('SHERLOCK_BAD_CONFIG', `${key}: entry ${index} (${JSON.stringify(entry)}): ${compiled}`, { key });
    }
    return compiled;
  });
}

/** Whether any segment of `path` (after its leading `/`) occurs more than `limit` times. */
function repeatsTooOften(path: string, limit: number): boolean {
  const counts = new Map<string, number>();
  for (const segment of path.slice(1).split('/')) {
    const count = (counts.get(segment) ?? 0) + 1;
    if (count > limit) return true;
    counts.set(segment, count);
  }
  return false;
}
