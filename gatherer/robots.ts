/**
 * The robots.txt policy of one site (RFC 9309): what a fetch of
 * `/robots.txt` means, which URLs we may then fetch, and the bucket that keeps
 * it.
 *
 * Contract:
 *  - `interpretRobots(response, opts, redirects)` turns one fetch of the
 *    robots URL into a redirect to follow or a policy (RFC 9309 §2.3.1):
 *      2xx                     parsed: kind 'rules' (§2.3.1.1). Any body is
 *                              parsed, an HTML error page too: lines that are
 *                              not records are skipped (§2.3.1.5).
 *      3xx with a location     followed while fewer than MAX_REDIRECTS (5) hops
 *                              were (§2.3.1.2); then, or without a location,
 *                              'allow-all', "unavailable" (§2.3.1.2, §2.3.1.3).
 *                              A 304 is the caller's: it keeps its policy.
 *      4xx                     'allow-all' (§2.3.1.3), 401 and 403 included;
 *                              but 408, 425 and 429 (outcome.ts: temporary,
 *                              "ask again later") count as unreachable.
 *      5xx, other statuses,    'disallow-all' (§2.3.1.4), expiring after
 *      timeout, dns, connect,  errorRetryMs, when the gatherer asks again.
 *      tls, an undecodable body
 *    Other policies expire after expireMs (§2.4: at most 24 hours). Keeping an
 *    older policy while robots.txt is unreachable (§2.4) is the caller's call.
 *  - `RobotsPolicy.allowed(url)` for a canonical URL of the site (common/url):
 *    the rules of the group naming our product token, else of `*` (§2.2.1),
 *    longest match, Allow on a tie (§2.2.2), `*` and a final `$` (§2.2.3);
 *    `/robots.txt` itself is always allowed (§2.2.2). One check costs at most
 *    MATCH_BUDGET steps (about a millisecond), whatever the file: a URL the
 *    rules do not decide within it is refused as if disallowed, and
 *    `verdict(url)` says so (`overBudget`).
 *  - The body is decoded (Content-Encoding gzip, deflate, br) to at most
 *    MAX_ROBOTS_SIZE (512 KiB) bytes (§2.5: at least 500 KiB) and as UTF-8
 *    (§2.3; a BOM is dropped). When that, or the fetcher's cap, cut the file,
 *    its last incomplete line is dropped: a cut rule could allow too much.
 *  - Sitemap lines (§2.2.4) are resolved against the URL the file came from
 *    (`opts.url`; without it relative ones are dropped) and canonicalised;
 *    bad ones are dropped.
 *  - Crawl-delay (not in RFC 9309) is our group's, else the `*` group's, so
 *    a site-wide delay also holds for us when our group names none.
 *
 * Parsing is robots-parser's; matching is ours (RuleMatcher, "matching"
 * below): the same relation as robots-parser's matcher, Google's reference
 * one, in linear time a rule and within a budget a check. Where robots-parser
 * departs from RFC 9309 this module rewrites the rule lines of the text and
 * the URL paths before robots-parser (and the matcher) see them:
 *  1. Percent-encoding (§2.2.2). robots-parser puts patterns through encodeURI
 *     (which escapes `|`, `[`, `]`, `^`, … that the WHATWG parser leaves raw in
 *     a URL, so such rules never matched), never decodes an escaped unreserved
 *     character (rule `/%62az` did not match `/baz`), and a URL's query has `'`
 *     escaped by the WHATWG parser while the rule keeps it raw. Both sides now
 *     go through one normalisation, `normalisePath`: escapes of unreserved
 *     characters (RFC 3986 §2.3) decoded, other escapes upper-cased, a lone `%`
 *     as `%25`, non-ASCII as UTF-8 escapes; every other character outside
 *     unreserved and `! ( ) * ; , / ? : @ & = + $` is escaped. Reserved
 *     characters and their escapes stay different (`%2F` is not `/`), as §2.2.2
 *     says for reserved characters.
 *  2. `%2A` and `%24` in a rule match a literal `*` and `$` in the URL (§2.2.3):
 *     the URL side escapes `*` and `$`; in a rule they stay wildcards (`$` only
 *     at the end).
 *  3. User-agent lines: robots-parser cuts the value only at `/`; we take it up
 *     to `/` or white space (`User-agent: sherlock (our bot)` names sherlock),
 *     the same cut we make to our own User-Agent header (§2.2.1).
 *  4. A group without rules (§2.1, §2.2.2: everything allowed) was not kept by
 *     robots-parser, which then applied the `*` group; an empty Disallow is
 *     added to each run of user-agent lines, which keeps it.
 *  5. robots-parser only answers for URLs of the host it was built for; ours
 *     is a fixed one, since after a redirect (§2.3.1.2) the rules of another
 *     host apply to ours, and allowed() matches only the path and query.
 *  6. `/robots.txt` always allowed, the size limit and the BOM, as above.
 * Groups end, as in robots-parser and Google's matcher, at any record that is
 * not a user-agent line, a Sitemap line included.
 *
 * Bucket (one per robots.txt fetch, kind `K` = "robots"):
 *   header  U  the robots URL         D  fetch time, Unix seconds
 *           H  HTTP status, if any     !  "<code> <message>" unless the fetch was ok
 *           K  "robots"                V  expiry, Unix seconds
 *           Q  policy kind: rules, allow-all or disallow-all
 *   body    B  the robots.txt text (kind 'rules' only)
 *           s  a sitemap URL, one attribute each
 * `policyFromBucket` re-parses B, so a bucket gives the same answers as the
 * policy it was written from (times to the second).
 */

import { createRequire } from 'node:module';
import { brotliDecompressSync, constants, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { BucketObject, type Bucket } from '../common/bucket/bucket.js';
import { SherlockError, isSherlockError, type ErrorPlace } from '../common/errors.js';
import { canonicalUrl, urlParts } from '../common/url.js';
import { CODE, errorAttribute, httpErrorCode, isTemporary, type Outcome } from './outcome.js';

// robots-parser is CommonJS whose typings declare an ES default export, which
// a NodeNext default import would not find at run time; require() it instead.
type RobotsParser = typeof import('robots-parser').default;
type Robot = ReturnType<RobotsParser>;
const robotsParser = createRequire(import.meta.url)('robots-parser') as RobotsParser;

/** Decoded bytes of robots.txt parsed at most; RFC 9309 §2.5 asks for at least 500 KiB. */
export const MAX_ROBOTS_SIZE = 512 * 1024;
/** Redirects followed for robots.txt; RFC 9309 §2.3.1.2 asks for at least five. */
export const MAX_REDIRECTS = 5;
/** How long a fetched robots.txt is trusted unless told otherwise (RFC 9309 §2.4). */
export const DEFAULT_EXPIRE_MS = 24 * 60 * 60 * 1000;
/** The `K` attribute of a robots bucket. */
export const ROBOTS_BUCKET_KIND = 'robots';

const ROBOTS_PATH = '/robots.txt';
/** The host robots-parser is told about; allowed() matches only path and query (deviation 5). */
const PARSER_SITE = 'http://robots.invalid';
const POLICY_KINDS = ['rules', 'allow-all', 'disallow-all'] as const;
/** Outcomes where no complete answer came from the server: robots.txt is unreachable (§2.3.1.4). */
const UNREACHABLE: ReadonlySet<Outcome> = new Set(['timeout', 'dns', 'connect', 'tls']);

export type PolicyKind = (typeof POLICY_KINDS)[number];

/** The fields of the fetcher's response that robots.txt needs. */
export interface RobotsResponse {
  outcome: Outcome;
  status?: number;
  headers: [string, string][];
  /** As received: still content-encoded. */
  body: Buffer;
  /** The fetcher cut the body at its size cap. */
  truncated: boolean;
  /** Canonical absolute redirect target. */
  location?: string;
}

export interface RobotsOptions {
  /**
   * The URL this response answered: the robots URL, or the last redirect
   * target. Relative Sitemap lines resolve against it; without it only
   * absolute ones are kept.
   */
  url?: string;
  /** The whole User-Agent header; its product token is the text before the first `/` or space. */
  userAgent: string;
  /** Unix ms. */
  now: number;
  /** How long a fetched robots.txt is trusted; DEFAULT_EXPIRE_MS when not given. */
  expireMs?: number;
  /** How long an unreachable robots.txt keeps the host shut before it is fetched again. */
  errorRetryMs: number;
}

export interface RobotsPolicy {
  kind: PolicyKind;
  /** Unix ms. */
  fetchedAt: number;
  /** Unix ms; from then on robots.txt is to be fetched again. */
  expiresAt: number;
  crawlDelayMs?: number;
  /** Canonical URLs. */
  sitemaps: string[];
  /** Whether we may fetch a canonical URL of this site: `verdict(url).allowed`. */
  allowed(url: string): boolean;
  /** The answer for a canonical URL of this site, with the matching work it took. */
  verdict(url: string): RobotsVerdict;
  /** The robots.txt text, for kind 'rules'. */
  text?: string;
}

/** One URL checked against a policy. */
export interface RobotsVerdict {
  allowed: boolean;
  /** The matching work done: rules looked at, matcher calls and characters compared (see "Matching"). */
  steps: number;
  /** The work passed MATCH_BUDGET before a rule decided: refused as if disallowed, whatever the rules say. */
  overBudget: boolean;
}

export type RobotsDecision = { kind: 'redirect'; location: string } | { kind: 'policy'; policy: RobotsPolicy };

/** The robots URL of a canonical site `scheme://host[:port]` (RFC 9309 §2.3). */
export function robotsUrl(site: string): string {
  return `${site}${ROBOTS_PATH}`;
}

export function isExpired(policy: RobotsPolicy, now: number): boolean {
  return now >= policy.expiresAt;
}

/** What one fetch of robots.txt means; `redirects` is the number of hops followed before it. */
export function interpretRobots(response: RobotsResponse, opts: RobotsOptions, redirects: number): RobotsDecision {
  const { status } = response;
  const { now } = opts;
  const expiresAt = now + (opts.expireMs ?? DEFAULT_EXPIRE_MS);
  const unreachable = blanket('disallow-all', now, now + opts.errorRetryMs);
  const unavailable = blanket('allow-all', now, expiresAt);
  if (status === undefined || UNREACHABLE.has(response.outcome)) return { kind: 'policy', policy: unreachable };
  if (status >= 200 && status < 300) {
    const text = robotsText(response);
    if (text === undefined) return { kind: 'policy', policy: unreachable };
    const robot = parseRobots(text);
    const sitemaps = new Set<string>();
    for (const sitemap of robot.getSitemaps()) {
      try {
        sitemaps.add(canonicalUrl(sitemap, opts.url));
      } catch (err) {
        if (!isSherlockError(err, 'SHERLOCK_BAD_URL')) throw err;
      }
    }
    return { kind: 'policy', policy: rulesPolicy(robot, text, productToken(opts.userAgent), now, expiresAt, [...sitemaps]) };
  }
  if (status >= 300 && status < 400) {
    if (response.location !== undefined && redirects < MAX_REDIRECTS) return { kind: 'redirect', location: response.location };
    return { kind: 'policy', policy: unavailable };
  }
  if (status >= 400 && status < 500 && !isTemporary(httpErrorCode(status))) return { kind: 'policy', policy: unavailable };
  return { kind: 'policy', policy: unreachable };
}

/** The bucket recording a robots.txt fetch; `url` is the robots URL of the site. */
export function robotsBucket(url: string, policy: RobotsPolicy, response: { status?: number; code: number; message: string }): Bucket {
  const header = new BucketObject().add('U', url).add('D', String(unixSeconds(policy.fetchedAt)));
  if (response.status !== undefined) header.add('H', String(response.status));
  if (response.code !== CODE.ok) header.add('!', errorAttribute(response.code, response.message));
  header.add('K', ROBOTS_BUCKET_KIND).add('V', String(unixSeconds(policy.expiresAt))).add('Q', policy.kind);
  const body = new BucketObject();
  if (policy.text !== undefined) body.add('B', policy.text);
  for (const sitemap of policy.sitemaps) body.add('s', sitemap);
  return { header, body };
}

/** The policy a robots bucket records, for the agent whose User-Agent header is `userAgent`. */
export function policyFromBucket(bucket: Bucket, userAgent: string): RobotsPolicy {
  const { header, body } = bucket;
  const url = header.string('U');
  const place: ErrorPlace = url === undefined ? {} : { url };
  const corrupt = (message: string): SherlockError => new SherlockError('SHERLOCK_CORRUPT_BUCKET', `robots bucket: ${message}`, place);
  if (url === undefined) throw corrupt('attribute U (robots URL) missing');
  const kindMark = header.string('K');
  if (kindMark !== ROBOTS_BUCKET_KIND) throw corrupt(`attribute K is ${JSON.stringify(kindMark)}, "${ROBOTS_BUCKET_KIND}" expected`);
  const time = (name: string): number => {
    const value = header.string(name);
    if (value === undefined) throw corrupt(`attribute ${name} missing`);
    if (!/^\d{1,12}$/.test(value)) throw corrupt(`attribute ${name} is ${JSON.stringify(value)}, not Unix seconds`);
    return Number(value) * 1000;
  };
  const fetchedAt = time('D');
  const expiresAt = time('V');
  const kind = header.string('Q');
  if (kind === undefined) throw corrupt('attribute Q (policy kind) missing');
  if (!isPolicyKind(kind)) throw corrupt(`attribute Q is ${JSON.stringify(kind)}, not a policy kind`);
  if (kind !== 'rules') return blanket(kind, fetchedAt, expiresAt);
  const text = body.string('B');
  if (text === undefined) throw corrupt('attribute B (robots.txt text) missing for kind rules');
  const sitemaps = body.all('s').map((value) => value.toString('utf8'));
  return rulesPolicy(parseRobots(text), text, productToken(userAgent), fetchedAt, expiresAt, sitemaps);
}

function isPolicyKind(value: string): value is PolicyKind {
  return (POLICY_KINDS as readonly string[]).includes(value);
}

function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** The product token of a User-Agent header, lower-cased (RFC 9309 §2.2.1 matches it case-insensitively). */
function productToken(userAgent: string): string {
  return userAgent.trim().split(/[\s/]/, 1)[0]!.toLowerCase();
}

/** A policy that does not look at the URL (but /robots.txt is allowed all the same). */
function blanket(kind: 'allow-all' | 'disallow-all', fetchedAt: number, expiresAt: number): RobotsPolicy {
  const all = kind === 'allow-all';
  const allowed = (url: string): boolean => all || urlParts(url).rest === ROBOTS_PATH;
  return { kind, fetchedAt, expiresAt, sitemaps: [], allowed, verdict: (url) => ({ allowed: allowed(url), steps: 0, overBudget: false }) };
}

function rulesPolicy(robot: Robot, text: string, token: string, fetchedAt: number, expiresAt: number, sitemaps: string[]): RobotsPolicy {
  // Ours when our group gives one, else `*`'s, even when our group exists (politeness; not in the RFC).
  const seconds = robot.getCrawlDelay(token) ?? robot.getCrawlDelay('*');
  const crawlDelayMs = seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : undefined;
  const matcher = new RuleMatcher(groupRules(robot, token));
  const verdict = (url: string): RobotsVerdict => {
    const rest = urlParts(url).rest;
    return rest === ROBOTS_PATH ? { allowed: true, steps: 0, overBudget: false } : matcher.verdict(parserPath(rest));
  };
  const allowed = (url: string): boolean => verdict(url).allowed;
  return { kind: 'rules', fetchedAt, expiresAt, ...(crawlDelayMs === undefined ? {} : { crawlDelayMs }), sitemaps, allowed, verdict, text };
}

// ---------------------------------------------------------------- parsing

const LINE_BREAK = /\r\n|\r|\n/;

/**
 * robots-parser over `text` with the rule and user-agent lines rewritten
 * (deviations 1, 3 and 4 of the module comment). Lines are split into records
 * exactly as robots-parser does: comment cut at `#`, key and value split at the
 * first `:` and trimmed; a line without a key is no record.
 */
function parseRobots(text: string): Robot {
  const lines: string[] = [];
  let inAgents = false;
  for (const line of text.split(LINE_BREAK)) {
    const hash = line.indexOf('#');
    const content = hash < 0 ? line : line.slice(0, hash);
    const colon = content.indexOf(':');
    const key = colon < 0 ? '' : content.slice(0, colon).trim().toLowerCase();
    if (key === '') continue;
    const value = content.slice(colon + 1).trim();
    if (key === 'user-agent') {
      lines.push(`user-agent: ${value.split(/[\s/]/, 1)[0]!}`);
      inAgents = true;
      continue;
    }
    // The empty rule makes robots-parser keep a group that has no rules.
    if (inAgents) lines.push('disallow:');
    inAgents = false;
    lines.push(key === 'allow' || key === 'disallow' ? `${key}: ${normalisePath(value, true)}` : content);
  }
  if (inAgents) lines.push('disallow:');
  return robotsParser(`${PARSER_SITE}${ROBOTS_PATH}`, lines.join('\n'));
}

/**
 * Characters kept raw on both sides: RFC 3986 unreserved, and the delimiters
 * that both robots-parser (encodeURI) and the WHATWG parser leave alone.
 */
const KEPT = /^[A-Za-z0-9\-._~!()*;,/?:@&=+$]$/;
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
const HEX2 = /^[0-9A-Fa-f]{2}$/;

/**
 * The one form rule paths and URL paths are compared in (deviations 1 and 2).
 * In a rule (`pattern`), `*` and a final `$` are wildcards and stay raw; in a
 * URL they are literal characters and are escaped. The result is ASCII and is
 * left unchanged by robots-parser's own pattern normalisation and by WHATWG
 * URL parsing.
 */
function normalisePath(path: string, pattern: boolean): string {
  let out = '';
  for (let i = 0; i < path.length; ) {
    const char = String.fromCodePoint(path.codePointAt(i)!);
    i += char.length;
    if (char === '%') {
      const hex = path.slice(i, i + 2);
      if (!HEX2.test(hex)) {
        out += '%25';
        continue;
      }
      i += 2;
      const decoded = String.fromCharCode(parseInt(hex, 16));
      out += UNRESERVED.test(decoded) ? decoded : `%${hex.toUpperCase()}`;
    } else if (KEPT.test(char) && (pattern ? char !== '$' || i === path.length : char !== '*' && char !== '$')) {
      out += char;
    } else {
      for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return out;
}

// ---------------------------------------------------------------- matching

/**
 * Matching work one URL may cost (RuleMatcher's steps); past it the URL is
 * refused as if disallowed. A step is a rule looked at, a search started or a
 * character compared, so a check costs about a millisecond at most. Files
 * written for people stay far below: 10,000 literal rules against a 200
 * character path take about 200,000 steps, 500 wildcard rules about as many.
 */
export const MATCH_BUDGET = 1_000_000;

/** A rule as robots-parser 3.0.1 keeps it: the pattern normalised (normaliseEncoding, after our normalisePath). */
interface ParserRule {
  pattern: string;
  allow: boolean;
}

/**
 * The rules robots-parser would match a path against for `token`: the group
 * naming it, else `*`'s, else none (its _getRule; an empty token means `*`).
 * robots-parser has no public call for them, so its private `_rules` field is
 * read: robots-parser is pinned (3.0.1), and test/gatherer/robots.test.ts
 * compares our verdicts with its isAllowed() on generated files, which fails
 * should an upgrade change the field.
 */
function groupRules(robot: Robot, token: string): readonly ParserRule[] {
  const groups = (robot as unknown as { _rules: Record<string, ParserRule[] | undefined> })._rules;
  return groups[token === '' ? '*' : token] ?? groups['*'] ?? [];
}

/**
 * The path robots-parser matches for the rest (path and query) of a canonical
 * URL: normalised (deviations 1 and 2), then as the WHATWG parser gives back
 * its pathname and search (an empty query's `?` is dropped) with escapes
 * upper-cased, as robots-parser's _getRule does.
 */
function parserPath(rest: string): string {
  const url = new URL(PARSER_SITE + normalisePath(rest, false));
  return (url.pathname + url.search).replace(/%[0-9a-fA-F]{2}/g, (escape) => escape.toUpperCase());
}

/**
 * A rule compiled for matching: the pattern cut at its `*`s into literal
 * pieces, and whether a final `$` anchors it at the end of the path.
 */
interface CompiledRule {
  allow: boolean;
  /** Pattern length with its `*` and `$`: the longest match wins (RFC 9309 §2.2.2, as robots-parser counts it). */
  length: number;
  /** The piece before the first `*`: a prefix of the path. */
  first: string;
  /** The pieces after each `*`, in order; empty when the pattern has none. */
  rest: string[];
  anchored: boolean;
  /** The sum of the pieces' lengths: a shorter path cannot match. */
  minLength: number;
}

/**
 * Why not robots-parser's matcher: it is Google's, which keeps every length
 * of the path a pattern prefix could match and, at each pattern character,
 * walks them all, so one rule costs pattern length × path length and a
 * check the sum over every rule: a 512 KiB robots.txt of `/*a*a…*b` rules
 * and a 1,000 character URL took over a second of the main thread per URL,
 * and a host with 300 such URLs starved every other host for minutes.
 *
 * Here a pattern is its literal pieces between `*`s. It matches a path when
 * the first piece is a prefix of it and each later piece is found after the
 * one before; taking each piece at its leftmost place leaves the most room
 * for the pieces after it, so the first place found is the right one and no
 * other is tried (no backtracking). A final `$` asks the last piece to end the
 * path, at or after where the pieces before it ended. That is the same
 * relation as Google's matcher (a property test compares them) in
 * O(path length + pattern length) a rule with String.indexOf.
 *
 * Rules are tried longest first, Allow first among equals, so the first that
 * matches decides (RFC 9309 §2.2.2: longest match, Allow on a tie); none
 * matching allows. The work is counted and bounded by MATCH_BUDGET for every
 * check, which puts a ceiling on what any robots.txt can cost per URL.
 */
export class RuleMatcher {
  private readonly rules: CompiledRule[];

  constructor(rules: readonly ParserRule[]) {
    this.rules = rules.map(compileRule).sort((a, b) => b.length - a.length || Number(b.allow) - Number(a.allow));
  }

  /** The verdict for a path as parserPath() gives it. */
  verdict(path: string, budget = MATCH_BUDGET): RobotsVerdict {
    let steps = 0;
    for (const rule of this.rules) {
      if (steps > budget) return { allowed: false, steps, overBudget: true };
      steps += 1;
      if (path.length < rule.minLength) continue;
      const matched = matchRule(rule, path);
      steps += matched.steps;
      if (matched.matches) return { allowed: rule.allow, steps, overBudget: false };
    }
    return { allowed: true, steps, overBudget: false };
  }
}

function compileRule(rule: ParserRule): CompiledRule {
  const { pattern, allow } = rule;
  const anchored = pattern.endsWith('$');
  const [first = '', ...rest] = (anchored ? pattern.slice(0, -1) : pattern).split('*');
  const minLength = first.length + rest.reduce((sum, piece) => sum + piece.length, 0);
  return { allow, length: pattern.length, first, rest, anchored, minLength };
}

/** Whether `rule` matches `path`, and the steps it took: one per search begun, one per character a search passed or compared. */
function matchRule(rule: CompiledRule, path: string): { matches: boolean; steps: number } {
  const { first, rest, anchored } = rule;
  let steps = first.length;
  if (!path.startsWith(first)) return { matches: false, steps };
  if (rest.length === 0) return { matches: !anchored || path.length === first.length, steps };
  let at = first.length;
  const searched = anchored ? rest.length - 1 : rest.length;
  for (let i = 0; i < searched; i++) {
    const piece = rest[i]!;
    const found = path.indexOf(piece, at);
    steps += 1 + (found < 0 ? path.length - at : found - at + piece.length);
    if (found < 0) return { matches: false, steps };
    at = found + piece.length;
  }
  if (!anchored) return { matches: true, steps };
  const last = rest[rest.length - 1]!;
  steps += 1 + last.length;
  return { matches: path.length - last.length >= at && path.endsWith(last), steps };
}

// ---------------------------------------------------------------- the body

/**
 * The text of a 2xx robots.txt: content-decoded and cut at MAX_ROBOTS_SIZE,
 * UTF-8 decoded (a BOM dropped), without a last line the cut left incomplete.
 * Undefined when the body cannot be decoded.
 */
function robotsText(response: RobotsResponse): string | undefined {
  const codings = response.headers
    .filter(([name]) => name.toLowerCase() === 'content-encoding')
    .flatMap(([, value]) => value.split(','))
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  let data = response.body;
  let cut = response.truncated;
  // Codings are listed in the order they were applied.
  for (const coding of codings.reverse()) {
    const decoder = DECODERS[coding];
    if (decoder === undefined) return undefined;
    try {
      const decoded = decodeCapped(data, decoder);
      data = decoded.data;
      cut ||= decoded.cut;
    } catch (err) {
      // node:zlib reports corrupt data with an errno; anything else is ours.
      if (err instanceof Error && 'errno' in err) return undefined;
      throw err;
    }
  }
  if (data.length > MAX_ROBOTS_SIZE) {
    data = data.subarray(0, MAX_ROBOTS_SIZE);
    cut = true;
  }
  const text = new TextDecoder('utf-8').decode(data);
  if (!cut) return text;
  return text.slice(0, Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r')) + 1);
}

/** Decodes a possibly truncated stream, throwing ERR_BUFFER_TOO_LARGE past MAX_ROBOTS_SIZE bytes. */
type Decoder = (data: Buffer) => Buffer;

const ZLIB_OPTIONS = { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: MAX_ROBOTS_SIZE };

const DECODERS: Record<string, Decoder> = {
  gzip: (data) => gunzipSync(data, ZLIB_OPTIONS),
  'x-gzip': (data) => gunzipSync(data, ZLIB_OPTIONS),
  // HTTP's deflate is the zlib format (RFC 9110 §8.4.1.2); some servers send raw deflate.
  deflate: (data) => (isZlibHeader(data) ? inflateSync(data, ZLIB_OPTIONS) : inflateRawSync(data, ZLIB_OPTIONS)),
  br: (data) => brotliDecompressSync(data, { finishFlush: constants.BROTLI_OPERATION_FLUSH, maxOutputLength: MAX_ROBOTS_SIZE }),
};

function isZlibHeader(data: Buffer): boolean {
  return data.length >= 2 && (data[0]! & 0x0f) === 8 && ((data[0]! << 8) | data[1]!) % 31 === 0;
}

function isTooLarge(err: unknown): boolean {
  return err instanceof RangeError && (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
}

/**
 * All of `data` decoded when that fits in MAX_ROBOTS_SIZE bytes; else the
 * output of the longest input prefix that does (node:zlib's synchronous calls
 * return nothing once over their limit). The output of a prefix is a prefix of
 * the output, growing with it, so a binary search finds it in log2(length)
 * bounded decodes; a compression bomb costs no more. The result falls short
 * of the limit by at most one step of the decoder: a gzip or deflate match
 * copies at most 258 bytes, but one brotli command can copy megabytes, so a
 * brotli file of one long repetition may be parsed to less than 500 KiB.
 */
function decodeCapped(data: Buffer, decode: Decoder): { data: Buffer; cut: boolean } {
  try {
    return { data: decode(data), cut: false };
  } catch (err) {
    if (!isTooLarge(err)) throw err;
  }
  let low = 0; // the output of data[0, low) fits: it is `best`
  let best: Buffer = Buffer.alloc(0);
  let high = data.length - 1; // the output of data[0, high + 1) does not
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    try {
      best = decode(data.subarray(0, middle));
      low = middle;
    } catch (err) {
      if (!isTooLarge(err)) throw err;
      high = middle - 1;
    }
  }
  return { data: best, cut: true };
}
