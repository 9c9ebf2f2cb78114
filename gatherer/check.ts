/**
 * What the gatherer would do with one URL, writing nothing and needing no
 * state directory: the engine of `sherlock check robots|fetch URL` (cli/check.ts
 * prints the reports). The [gatherer] table of the config applies as in the
 * daemon (user agent, timeouts, body cap, private addresses, delays).
 *
 * robots (checkRobots): the URL's host is resolved through the gatherer's
 * Resolver, address check included (a refused or failed lookup means the
 * check cannot run, as the gatherer would record the URL as a dns failure
 * without a request). Then robots.txt is fetched as gatherer.ts fetchRobots
 * does: interpretRobots decides, redirects are followed up to robots.ts
 * MAX_REDIRECTS, a redirect to another host resolves that host (a failure
 * there is a dns outcome, so disallow-all). The report gives each fetch, the
 * policy, its expiry, Crawl-delay and the delay the address would rest, the
 * sitemaps, and the verdict for the URL.
 *
 * fetch (checkFetch): when robots.txt allows it, one GET of the URL with the
 * Fetcher (no conditional headers; a redirect is reported, not followed), and
 * for ok and too_large responses the body content-decoded (up to
 * gatherer.max_decoded_size) and parsed as the gatherer's describe() does.
 */

import { plainText } from '../common/bucket/doc-text.js';
import type { LinkType } from '../common/bucket/doc-body.js';
import { isSherlockError } from '../common/errors.js';
import { logger } from '../common/log.js';
import { SiteRules } from '../common/site-rules.js';
import { urlParts } from '../common/url.js';
import type { GathererConfig } from './config.js';
import { resolverFor } from './dns.js';
import { headerValue } from './document.js';
import type { Fetcher, FetchResponse } from './fetch.js';
import type { Outcome } from './outcome.js';
import type { ParsedDocument } from './parse.js';
import { requestRobots } from './robots-fetch.js';
import { interpretRobots, robotsUrl, type PolicyKind, type RobotsPolicy } from './robots.js';

const log = logger('check');

/** R links listed in a fetch report. */
const FIRST_LINKS = 5;

/** One request for robots.txt, or the lookup that kept it from being made. */
export interface RobotsFetchReport {
  url: string;
  address: string | null;
  outcome: Outcome;
  code: number;
  message: string;
  status: number | null;
  elapsedMs: number | null;
  /** Where a redirect pointed. */
  location: string | null;
}

export interface RobotsReport {
  url: string;
  /** The address the URL's host resolved to, which the gatherer would connect to. */
  address: string;
  robotsUrl: string;
  /** In order: the robots URL, then each redirect target. */
  fetches: RobotsFetchReport[];
  /** Of the last fetch. */
  status: number | null;
  outcome: Outcome;
  policy: PolicyKind;
  fetchedAt: string;
  expiresAt: string;
  crawlDelayMs: number | null;
  /** What the address rests between requests: max(min_delay or the site rule's delay, min(Crawl-delay, max_crawl_delay)). */
  delayMs: number;
  /** The site rule whose delay replaces min_delay (FILE:LINE), if one does. */
  delayRule: string | null;
  sitemaps: string[];
  verdict: 'allowed' | 'disallowed';
  /** Why a site rule's robots_disallow disallows the URL robots.txt allows, if it does. */
  ruleRefusal: string | null;
}

export interface FetchReport {
  url: string;
  address: string;
  outcome: Outcome;
  code: number;
  message: string;
  status: number | null;
  statusText: string | null;
  elapsedMs: number;
  headerCount: number;
  bodyBytes: number;
  truncated: boolean;
  contentType: string | null;
  location: string | null;
  retryAfter: number | null;
}

export type DocumentReport =
  | {
      kind: ParsedDocument['kind'];
      charset: string | null;
      decodedBytes: number;
      decodedTruncated: boolean;
      title: string | null;
      links: Record<LinkType, number>;
      firstLinks: string[];
      robots: { noindex: boolean; nofollow: boolean; noarchive: boolean };
      canonical: string | null;
      language: string | null;
      /** The language told from the text, the declared one a hint (bucket attribute g). */
      detectedLanguage: string | null;
      problems: string[];
      /** With withText only. */
      text?: string;
    }
  | { error: string };

/** The robots.txt answer, or why the URL's own host gave none (refused, or a failed lookup). */
export type RobotsCheck = { ok: true; report: RobotsReport } | { ok: false; problem: string };

/** The fetch and what parsing found; both null when robots.txt disallows the URL, document null when the body is not parsed. */
export interface FetchCheck {
  fetch: FetchReport | null;
  document: DocumentReport | null;
}

// ------------------------------------------------------------ robots.txt

/** The robots.txt answer for the canonical `url`, as gatherer.ts fetchRobots reaches it. */
export async function checkRobots(url: string, config: GathererConfig, fetcher: Fetcher, rules = SiteRules.none): Promise<RobotsCheck> {
  const resolver = resolverFor(config);
  const { host, site } = urlParts(url);
  const own = await resolver.resolve(host);
  if (!own.ok) {
    const what = own.refused ? 'refused' : own.temporary ? 'host lookup failed (temporary)' : 'host lookup failed';
    return { ok: false, problem: `${what}: ${own.message}` };
  }
  const fetches: RobotsFetchReport[] = [];
  let current = robotsUrl(site);
  let policy: RobotsPolicy | undefined;
  while (policy === undefined) {
    const { response, fetched, address } = await requestRobots(current, { host, address: own.address }, resolver, fetcher);
    log.debug('fetched robots.txt', { url: current, address });
    const options = { url: current, userAgent: config.user_agent, now: Date.now(), expireMs: config.robots_expire, errorRetryMs: config.error_backoff };
    const decision = interpretRobots(response, options, fetches.length);
    fetches.push({
      url: current,
      address: address ?? null,
      outcome: response.outcome,
      code: response.code,
      message: response.message,
      status: fetched?.status ?? null,
      elapsedMs: fetched?.elapsedMs ?? null,
      location: fetched?.location ?? null,
    });
    if (decision.kind === 'redirect') current = decision.location;
    else policy = decision.policy;
  }
  const last = fetches[fetches.length - 1]!;
  const crawlDelay = Math.min(policy.crawlDelayMs ?? 0, config.max_crawl_delay);
  const effective = rules.effective(url);
  const allowed = policy.allowed(url);
  const ruleRefusal = allowed ? (rules.robotsRefusal(url) ?? null) : null;
  return {
    ok: true,
    report: {
      url,
      address: own.address,
      robotsUrl: fetches[0]!.url,
      fetches,
      status: last.status,
      outcome: last.outcome,
      policy: policy.kind,
      fetchedAt: new Date(policy.fetchedAt).toISOString(),
      expiresAt: new Date(policy.expiresAt).toISOString(),
      crawlDelayMs: policy.crawlDelayMs ?? null,
      delayMs: Math.max(effective.settings.delay ?? config.min_delay, crawlDelay),
      delayRule: effective.from.delay?.[0]?.where ?? null,
      sitemaps: policy.sitemaps,
      verdict: allowed && ruleRefusal === null ? 'allowed' : 'disallowed',
      ruleRefusal,
    },
  };
}

// ------------------------------------------------------------ the fetch

/** One GET of the URL robots.txt allowed (none when it did not), and the parse of an ok or too_large body. */
export async function checkFetch(robots: RobotsReport, config: GathererConfig, fetcher: Fetcher, withText: boolean): Promise<FetchCheck> {
  if (robots.verdict !== 'allowed') return { fetch: null, document: null };
  log.debug('fetching', { url: robots.url, address: robots.address });
  const response = await fetcher.fetch({ url: robots.url, address: robots.address });
  const document = response.outcome === 'ok' || response.outcome === 'too_large' ? await parse(response, config, withText) : null;
  return { fetch: fetchReport(response), document };
}

function fetchReport(response: FetchResponse): FetchReport {
  return {
    url: response.url,
    address: response.address,
    outcome: response.outcome,
    code: response.code,
    message: response.message,
    status: response.status ?? null,
    statusText: response.statusText ?? null,
    elapsedMs: response.elapsedMs,
    headerCount: response.headers.length,
    bodyBytes: response.body.length,
    truncated: response.truncated,
    contentType: headerValue(response.headers, 'content-type') ?? null,
    location: response.location ?? null,
    retryAfter: response.retryAfter ?? null,
  };
}

/** What gatherer.ts describe() makes of an ok or too_large body, before it becomes bucket attributes. */
async function parse(response: FetchResponse, config: GathererConfig, withText: boolean): Promise<DocumentReport> {
  // Loaded here, not at the top: every `sherlock` command loads this module, and the parsers weigh about 130 MB.
  const { parseResponseBody } = await import('./response-body.js');
  let parsed;
  try {
    parsed = await parseResponseBody(response, config.max_decoded_size);
  } catch (err) {
    if (!isSherlockError(err)) throw err;
    return { error: `not parsed: ${err.message}` };
  }
  const { doc, decoded } = parsed;
  const links: Record<LinkType, number> = { R: 0, F: 0, I: 0, Y: 0 };
  for (const link of doc.links) links[link.type] += 1;
  return {
    kind: doc.kind,
    charset: doc.charset ?? null,
    decodedBytes: decoded.data.length,
    decodedTruncated: decoded.truncated,
    title: doc.title ?? null,
    links,
    firstLinks: doc.links.filter((link) => link.type === 'R').slice(0, FIRST_LINKS).map((link) => link.url),
    robots: doc.robots,
    canonical: doc.canonical ?? null,
    language: doc.language ?? null,
    detectedLanguage: doc.detectedLanguage ?? null,
    problems: doc.problems,
    ...(withText ? { text: plainText(doc.text, { url: response.url }) } : {}),
  };
}
