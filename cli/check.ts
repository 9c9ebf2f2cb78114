/**
 * `sherlock check robots|fetch URL`: what the gatherer would do with one URL,
 * writing nothing and needing no state directory. The [gatherer] table of the
 * config applies as in the daemon (user agent, timeouts, body cap, private
 * addresses, delays).
 *
 * robots: the URL is canonicalised (a bad one is a usage error, exit 2) and its
 * host resolved through the gatherer's Resolver, address check included (a
 * refused or failed lookup means the check cannot run: exit 1, as the gatherer
 * would record the URL as a dns failure without a request). Then robots.txt is
 * fetched as gatherer.ts fetchRobots does: interpretRobots decides, redirects
 * are followed up to robots.ts MAX_REDIRECTS, a redirect to another host
 * resolves that host (a failure there is a dns outcome, so disallow-all). The
 * report gives each fetch, the policy, its expiry, Crawl-delay and the delay
 * the address would rest, the sitemaps, and the verdict for the URL. Allowed
 * or disallowed, the answer is the output: exit 0.
 *
 * fetch: the robots check; when allowed, one GET of the URL with the Fetcher
 * (no conditional headers; a redirect is reported, not followed), and for ok
 * and too_large responses the body content-decoded (up to
 * gatherer.max_decoded_size) and parsed as the gatherer's describe() does.
 *
 * stdout is the report (--json: one JSON object, `check fetch`'s `robots` field
 * being `check robots`'s object); logs go to stderr.
 */

import type { Command } from 'commander';
import { plainText } from '../common/bucket/doc-text.js';
import { EXIT, SherlockError, isSherlockError } from '../common/errors.js';
import { logger } from '../common/log.js';
import { canonicalUrl, urlParts } from '../common/url.js';
import type { GathererConfig } from '../gatherer/config.js';
import { resolverFor } from '../gatherer/dns.js';
import { headerValue } from '../gatherer/document.js';
import { fetcherFor, type Fetcher, type FetchResponse } from '../gatherer/fetch.js';
import { CODE, type Outcome } from '../gatherer/outcome.js';
import { parseResponseBody } from '../gatherer/response-body.js';
import { requestRobots } from '../gatherer/robots-fetch.js';
import type { ParsedDocument } from '../gatherer/parse.js';
import type { LinkType } from '../common/bucket/doc-body.js';
import { interpretRobots, robotsUrl, type PolicyKind, type RobotsPolicy } from '../gatherer/robots.js';
import { action, print, printJson } from './command.js';
import { loadSettings, type GlobalOptions } from './settings.js';

const log = logger('check');

/** R links listed in a fetch report. */
const FIRST_LINKS = 5;
/** Width of the label column of the text report. */
const LABEL = 13;

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
  /** What the address rests between requests: max(min_delay, min(Crawl-delay, max_crawl_delay)). */
  delayMs: number;
  sitemaps: string[];
  verdict: 'allowed' | 'disallowed';
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
      problems: string[];
      /** With --show-text only. */
      text?: string;
    }
  | { error: string };

interface CheckOptions {
  json?: boolean;
}

export function registerCheck(program: Command): void {
  const check = program.command('check').description('what the gatherer would do with a URL; writes nothing');

  check
    .command('robots')
    .description("fetch the URL's robots.txt as the gatherer would and say whether the URL may be fetched")
    .argument('<url>', 'the URL to check')
    .option('--json', 'print the report as one JSON object')
    .action(
      action((url: string, opts: CheckOptions, cmd: Command) =>
        afterRobots(url, cmd, async ({ config, robots }) => {
          if (opts.json === true) printJson(robots);
          else printLines(robotsLines(robots, config));
        }),
      ),
    );

  check
    .command('fetch')
    .description('the robots.txt check, then one fetch of the URL (redirects not followed) and what parsing finds')
    .argument('<url>', 'the URL to fetch')
    .option('--json', 'print the report as one JSON object')
    .option('--show-text', 'also print the plain text of the document')
    .action(
      action((url: string, opts: CheckOptions & { showText?: boolean }, cmd: Command) =>
        afterRobots(url, cmd, async ({ config, canonical, fetcher, robots }) => {
          let fetch: FetchReport | null = null;
          let document: DocumentReport | null = null;
          if (robots.verdict === 'allowed') {
            log.debug('fetching', { url: canonical, address: robots.address });
            const response = await fetcher.fetch({ url: canonical, address: robots.address });
            fetch = fetchReport(response);
            if (response.outcome === 'ok' || response.outcome === 'too_large') document = await parse(response, config, opts.showText === true);
          }
          if (opts.json === true) {
            printJson({ url: canonical, robots, fetch, document });
            return;
          }
          const lines = robotsLines(robots, config);
          if (fetch === null) lines.push(['fetch', `not made: disallowed by robots.txt (the gatherer records ${CODE.robotsDenied} without a request)`]);
          else lines.push(...fetchLines(fetch));
          if (document !== null) lines.push(...documentLines(document));
          printLines(lines);
          if (document !== null && 'text' in document && document.text !== undefined) {
            print('');
            for (const line of document.text.split('\n')) if (!print(printable(line))) break;
          }
        }),
      ),
    );
}

interface Checked {
  config: GathererConfig;
  canonical: string;
  fetcher: Fetcher;
  robots: RobotsReport;
}

/** What both commands begin with: config, the canonical URL, the robots.txt check; exit 1 if that cannot run. */
async function afterRobots(url: string, cmd: Command, body: (checked: Checked) => Promise<void>): Promise<number> {
  const config = loadSettings(cmd.optsWithGlobals<GlobalOptions>()).config.gatherer;
  const canonical = usableUrl(url);
  const fetcher = fetcherFor(config);
  try {
    const robots = await checkRobots(canonical, config, fetcher);
    if (robots === undefined) return EXIT.failure;
    await body({ config, canonical, fetcher, robots });
    return EXIT.ok;
  } finally {
    await fetcher.close();
  }
}

/** The canonical form of the command-line URL; a bad one is a usage error. */
function usableUrl(url: string): string {
  try {
    return canonicalUrl(url);
  } catch (err) {
    if (!isSherlockError(err)) throw err;
    throw new SherlockError('SHERLOCK_USAGE', err.message, err.place, { cause: err });
  }
}

// ------------------------------------------------------------ robots.txt

/**
 * The robots.txt answer for `url`, as gatherer.ts fetchRobots reaches it;
 * undefined (after saying why on stderr) when the URL's own host cannot be
 * resolved or its address is refused.
 */
async function checkRobots(url: string, config: GathererConfig, fetcher: Fetcher): Promise<RobotsReport | undefined> {
  const resolver = resolverFor(config);
  const { host, site } = urlParts(url);
  const own = await resolver.resolve(host);
  if (!own.ok) {
    const what = own.refused ? 'refused' : own.temporary ? 'host lookup failed (temporary)' : 'host lookup failed';
    process.stderr.write(`sherlock: ${url}: ${what}: ${own.message}\n`);
    return undefined;
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
  return {
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
    delayMs: Math.max(config.min_delay, crawlDelay),
    sitemaps: policy.sitemaps,
    verdict: policy.allowed(url) ? 'allowed' : 'disallowed',
  };
}

type Line = [label: string, value: string];

function robotsLines(r: RobotsReport, config: GathererConfig): Line[] {
  const lines: Line[] = [
    ['url', r.url],
    ['address', r.address],
  ];
  for (const f of r.fetches) {
    const where = f.address === null ? '' : ` (${f.address})`;
    const to = f.location === null ? '' : ` → ${f.location}`;
    lines.push(['robots.txt', `${f.url}${where}: ${f.outcome} ${f.code}, ${f.message}${to}`]);
  }
  const expires = Date.parse(r.expiresAt) - Date.parse(r.fetchedAt);
  lines.push(['policy', `${r.policy}, expires ${r.expiresAt} (in ${duration(expires)})`]);
  const capped = r.crawlDelayMs !== null && r.crawlDelayMs > config.max_crawl_delay ? `, capped at max_crawl_delay ${duration(config.max_crawl_delay)}` : '';
  lines.push(['crawl-delay', r.crawlDelayMs === null ? 'none' : `${duration(r.crawlDelayMs)}${capped}`]);
  lines.push(['delay', `${duration(r.delayMs)} between requests to ${r.address} (min_delay ${duration(config.min_delay)})`]);
  for (const sitemap of r.sitemaps) lines.push(['sitemap', sitemap]);
  lines.push(['verdict', r.verdict]);
  return lines;
}

// ------------------------------------------------------------ the fetch

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
    problems: doc.problems,
    ...(withText ? { text: plainText(doc.text, { url: response.url }) } : {}),
  };
}

function fetchLines(f: FetchReport): Line[] {
  const lines: Line[] = [
    ['fetch', `${f.outcome} ${f.code}, ${f.message}`],
    ['elapsed', `${f.elapsedMs} ms`],
    ['headers', String(f.headerCount)],
    ['body', `${f.bodyBytes} bytes${f.truncated ? ', truncated at gatherer.max_body_size' : ''}`],
  ];
  if (f.contentType !== null) lines.push(['content-type', f.contentType]);
  if (f.location !== null) lines.push(['location', `${f.location} (not followed)`]);
  else if (f.outcome === 'redirect') lines.push(['location', 'none usable']);
  if (f.retryAfter !== null) lines.push(['retry-after', `${f.retryAfter} s`]);
  return lines;
}

function documentLines(d: DocumentReport): Line[] {
  if ('error' in d) return [['parse', d.error]];
  if (d.kind === 'other') return [['parse', 'other: stored, not parsed (not HTML, plain text or a sitemap)']];
  const lines: Line[] = [
    ['parse', `${d.kind}, ${d.decodedBytes} bytes decoded${d.decodedTruncated ? ' (cut at gatherer.max_decoded_size)' : ''}`],
    ['charset', d.charset ?? '-'],
    ['title', d.title === null ? '-' : printable(d.title)],
    ['links', (Object.keys(d.links) as LinkType[]).map((type) => `${type} ${d.links[type]}`).join(', ')],
  ];
  for (const url of d.firstLinks) lines.push(['link', url]);
  const flags = (Object.keys(d.robots) as (keyof typeof d.robots)[]).filter((flag) => d.robots[flag]);
  lines.push(['robots meta', flags.length === 0 ? 'none' : flags.join(', ')]);
  if (d.canonical !== null) lines.push(['canonical', d.canonical]);
  if (d.language !== null) lines.push(['language', d.language]);
  for (const problem of d.problems) lines.push(['problem', printable(problem)]);
  return lines;
}

// ------------------------------------------------------------ output

function printLines(lines: readonly Line[]): void {
  for (const [label, value] of lines) if (!print(`${label.padEnd(LABEL)}${value}`)) return;
}

/** Text from a page, safe on a terminal: C0 and C1 controls (escape sequences) shown as \xNN. */
function printable(text: string): string {
  return text.replace(/[\x00-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Milliseconds as "1d", "1h30m", "2.5s", "250ms". */
function duration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  let rest = Math.round(ms);
  let out = '';
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return rest === 0 ? out : `${out}${rest / 1000}s`;
}

