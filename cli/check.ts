/**
 * `sherlock check robots|fetch URL`: what the gatherer would do with one URL,
 * writing nothing and needing no state directory (gatherer/check.ts does the
 * work; this file parses the arguments and prints the report). `sherlock
 * check rules URL`: the site rules (common/site-rules.ts) that apply to a URL,
 * each with its FILE:LINE and matcher, then each effective setting and the
 * rules it came from; exit 0 whether or not any applies, 78 when a rule file
 * is bad.
 *
 * The URL is canonicalised (a bad one is a usage error, exit 2). A refused or
 * failed lookup of its host means the check cannot run: exit 1. Allowed or
 * disallowed, the answer is the output: exit 0. `check fetch` fetches only
 * what robots.txt allows.
 *
 * Both follow the site rules as the gatherer does: a rule's delay in place
 * of min_delay, its robots_disallow paths disallowed (and not fetched).
 *
 * stdout is the report (--json: one JSON object, `check fetch`'s `robots` field
 * being `check robots`'s object); logs go to stderr.
 */

import type { Command } from 'commander';
import type { LinkType } from '../common/bucket/doc-body.js';
import { EXIT, SherlockError, isSherlockError } from '../common/errors.js';
import { SETTING_NAMES, type Effective, type SiteRule } from '../common/site-rules.js';
import { canonicalUrl } from '../common/url.js';
import { checkFetch, checkRobots, type DocumentReport, type FetchReport, type RobotsReport } from '../gatherer/check.js';
import type { GathererConfig } from '../gatherer/config.js';
import { fetcherFor, type Fetcher } from '../gatherer/fetch.js';
import { CODE } from '../gatherer/outcome.js';
import { action, print, printJson } from './command.js';
import { loadSettings, type GlobalOptions } from './settings.js';

/** Width of the label column of the text report. */
const LABEL = 13;

interface CheckOptions {
  json?: boolean;
}

export function registerCheck(program: Command): void {
  const check = program.command('check').description('what the gatherer would do with a URL, or which site rules apply to it; writes nothing');

  check
    .command('rules')
    .description('the site rules (sites.d) that apply to the URL, and each setting they give with the rule it came from')
    .argument('<url>', 'the URL to check')
    .option('--json', 'print the report as one JSON object')
    .action(
      action((url: string, opts: CheckOptions, cmd: Command) => {
        const { rules } = loadSettings(cmd.optsWithGlobals<GlobalOptions>());
        const canonical = usableUrl(url);
        const effective = rules.effective(canonical);
        if (opts.json === true) printJson(rulesReport(canonical, effective));
        else printLines(rulesLines(canonical, effective, rules.rules.length, rules.files.length));
        return EXIT.ok;
      }),
    );

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
          const { fetch, document } = await checkFetch(robots, config, fetcher, opts.showText === true);
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
  const { config: { gatherer: config }, rules } = loadSettings(cmd.optsWithGlobals<GlobalOptions>());
  const canonical = usableUrl(url);
  const fetcher = fetcherFor(config);
  try {
    const robots = await checkRobots(canonical, config, fetcher, rules);
    if (!robots.ok) {
      process.stderr.write(`sherlock: ${canonical}: ${robots.problem}\n`);
      return EXIT.failure;
    }
    await body({ config, canonical, fetcher, robots: robots.report });
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
  const floor = r.delayRule === null ? `min_delay ${duration(config.min_delay)}` : `delay of site rule ${r.delayRule}`;
  lines.push(['delay', `${duration(r.delayMs)} between requests to ${r.address} (${floor})`]);
  for (const sitemap of r.sitemaps) lines.push(['sitemap', sitemap]);
  lines.push(['verdict', r.ruleRefusal === null ? r.verdict : `${r.verdict}: ${r.ruleRefusal}`]);
  return lines;
}

// ------------------------------------------------------------ site rules

const ruleText = (rule: SiteRule): string => `${rule.where} ${rule.matcher.kind} = ${JSON.stringify(rule.matcher.text)}`;

function rulesLines(url: string, e: Effective, ruleCount: number, fileCount: number): Line[] {
  const lines: Line[] = [['url', url]];
  if (e.rules.length === 0) lines.push(['rules', `none of ${ruleCount} in ${fileCount} files applies`]);
  for (const rule of e.rules) lines.push(['rule', ruleText(rule)]);
  for (const name of SETTING_NAMES) {
    const value = e.settings[name];
    if (value === undefined) continue;
    const shown = name === 'delay' || name === 'min_refetch' || name === 'max_refetch' ? duration(value as number) : Array.isArray(value) ? value.map((v) => JSON.stringify(v)).join(', ') : String(value);
    lines.push([name, `${shown} (from ${e.from[name]!.map((rule) => rule.where).join(', ')})`]);
  }
  return lines;
}

function rulesReport(url: string, e: Effective): Record<string, unknown> {
  return {
    url,
    rules: e.rules.map((rule) => ({ where: rule.where, matcher: rule.matcher, settings: rule.settings })),
    settings: e.settings,
    from: Object.fromEntries(Object.entries(e.from).map(([name, rules]) => [name, rules.map((rule) => rule.where)])),
  };
}

// ------------------------------------------------------------ the fetch

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
  if (d.kind === 'other') return [['parse', 'other: stored, not parsed (not HTML, plain text, a sitemap or a feed)']];
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
  if (d.detectedLanguage !== null) lines.push(['detected', `${d.detectedLanguage} (told from the text)`]);
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

