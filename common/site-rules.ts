/**
 * Per-site rules (docs/site-rules.md): TOML files of `[[site]]` tables, each
 * naming the URLs it applies to by exactly one matcher and setting how the
 * gatherer, the shepherd, the indexer and the searcher treat them. Read by
 * every daemon at start and on SIGHUP (through cli/settings.ts) and by
 * `sherlock check rules`.
 *
 * Where: every `*.toml` in one directory, `[sites] dir` in sherlock.toml; by
 * default `sites.d/` beside the config file (none without a config file). A
 * relative dir is taken from the config file's directory. Files are read in
 * byte order of their names, rules in file order: that order is the rules'.
 *
 * Matchers (exactly one per rule), against a canonical URL (common/url.ts):
 *   host    a host pattern as in [shepherd] allow/deny: `docs.example.org`, or
 *           `*.example.net` for the domain and every host under it;
 *   domain  the host's registrable domain (Public Suffix List, private
 *           section honoured: x.github.io is its own domain), as the scope's
 *           domain mode and the searcher's domain strings compute it;
 *   prefix  the URL starts with this (canonicalised) URL;
 *   regex   a JavaScript regular expression found anywhere in the URL.
 *
 * Combining: each setting comes from the last matching rule that sets it,
 * except the ones that only restrict, which add up: `reject` and
 * `robots_disallow` are the union of every matching rule's lists.
 *
 * A setting of a whole host (connections, result_cap) may be set only by
 * host and domain rules, and is looked up by host (hostSetting), not by URL.
 *
 * Validation is the config's (common/config.ts): a TOML error, an unknown key
 * (with did-you-mean), a value out of range, a bad pattern or a rule without
 * exactly one matcher is SHERLOCK_BAD_CONFIG naming FILE:LINE, and nothing of
 * the files is used. SiteRules is immutable; a reload builds a new one.
 *
 * Matching cost: host rules are found by looking up the host and each of its
 * parent domains in a map, domain rules by the host's registrable domain
 * (both remembered per host, a few thousand hosts at most); prefix and regex
 * rules are tried in turn. So a URL costs a few map lookups plus the prefix
 * and regex rules, what the shepherd can afford for every link it merges.
 */

import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { configRelative, didYouMean, duration, keyLines, parseTomlFile, readConfigFile } from './config.js';
import { SherlockError } from './errors.js';
import { canonicalOrNone, urlParts } from './url.js';
import { compileHostPattern, registrableDomain, urlPatternProblem } from './url-patterns.js';

/** The `[sites]` table of sherlock.toml. */
export const sitesConfig = z
  .object({
    /** Directory of the site rule files (*.toml); empty: `sites.d` beside the config file. */
    dir: z.string().default(''),
  })
  .strict();

export type SitesConfig = z.output<typeof sitesConfig>;

export const MATCHERS = ['host', 'domain', 'prefix', 'regex'] as const;
export type MatcherKind = (typeof MATCHERS)[number];

/** The largest result_cap: more is no cap that a page of results would notice. */
export const MAX_RESULT_CAP = 1000;

/** The most requests at once a rule may allow to one address: more is a load test, not a crawl. */
export const MAX_SITE_CONNECTIONS = 16;

const patterns = () =>
  z.array(z.string()).superRefine((entries, ctx) => {
    const problem = urlPatternProblem(entries);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });

/** The settings a rule may give; durations in milliseconds once parsed. */
const settingsShape = {
  /** The rest of the host's address after each request, instead of gatherer.min_delay (robots.txt's Crawl-delay still wins when longer). */
  delay: duration({ max: '1h' }).optional(),
  /** Requests at once to the host's address, each resting `delay` after its own (host and domain rules only; docs/site-rules.md). */
  connections: z.number().int().min(1).max(MAX_SITE_CONNECTIONS).optional(),
  /** Bounds of the adaptive refetch interval, instead of shepherd.min_refetch / max_refetch. */
  min_refetch: duration({ min: '1m' }).optional(),
  max_refetch: duration({ min: '1m' }).optional(),
  /** When set, only URLs matching one of these regular expressions are planned. */
  accept: patterns().optional(),
  /** URLs matching one of these regular expressions are never planned. */
  reject: patterns().optional(),
  /** Extra path prefixes treated as disallowed by robots.txt (stricter only: nothing can allow what robots.txt disallows). */
  robots_disallow: z
    .array(z.string().regex(/^\/[^\s]*$/, 'expected a path starting with "/"'))
    .optional(),
  /** false: fetch and store, but leave out of the index. */
  index: z.boolean().optional(),
  /** Added to the static weight of the URLs' cards, as a share of its range: -1 to 1 (a penalty or a bonus). */
  weight: z.number().min(-1).max(1).optional(),
  /** At most this many of the site's results in one result list (the searcher; host and domain rules only). */
  result_cap: z.number().int().min(1).max(MAX_RESULT_CAP).optional(),
};

/** Settings of a whole host, which only a host or domain rule may give: they are looked up by host (hostSetting). */
const HOST_ONLY: ReadonlySet<SettingName> = new Set<SettingName>(['connections', 'result_cap']);

const ruleSchema = z
  .object({
    host: z.string().optional(),
    domain: z.string().optional(),
    prefix: z.string().optional(),
    regex: z.string().optional(),
    ...settingsShape,
  })
  .strict();

export type RuleSettings = Omit<z.output<typeof ruleSchema>, MatcherKind>;
export type SettingName = keyof RuleSettings;
export const SETTING_NAMES = Object.keys(settingsShape) as SettingName[];
const RULE_KEYS = [...MATCHERS, ...SETTING_NAMES];

/** Settings that only restrict: every matching rule's list counts. */
const UNION: ReadonlySet<SettingName> = new Set<SettingName>(['reject', 'robots_disallow']);

export interface SiteRule {
  /** Where it is written: FILE:LINE of its `[[site]]` header. */
  where: string;
  matcher: { kind: MatcherKind; text: string };
  settings: RuleSettings;
  /** Its place in the order of all rules. */
  order: number;
}

/** What applies to one URL: the matching rules in order, each setting and the rules it came from. */
export interface Effective {
  rules: SiteRule[];
  settings: RuleSettings;
  from: Partial<Record<SettingName, SiteRule[]>>;
}

/** Where the rule files are for this config: `[sites] dir`, else sites.d beside the config file, else none. */
export function siteRulesDir(sites: SitesConfig, configFile: string | undefined): string | undefined {
  if (sites.dir === '') return configFile === undefined ? undefined : join(dirname(configFile), 'sites.d');
  return configRelative(sites.dir, configFile);
}

/** The `*.toml` files of `dir` in byte order of their names; none when it does not exist. */
export function siteRuleFiles(dir: string | undefined): string[] {
  if (dir === undefined || !existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.toml'))
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    .map((name) => join(dir, name));
}

interface Compiled {
  rule: SiteRule;
  /** For prefix and regex rules. */
  test?: (url: string) => boolean;
}

/** A rule file's name and text: what SiteRules are made from, and what a worker thread is given to make them again. */
export interface RuleSource {
  file: string;
  text: string;
}

export class SiteRules {
  readonly rules: readonly SiteRule[];
  readonly sources: readonly RuleSource[];
  private readonly byHost = new Map<string, Compiled[]>();
  private readonly bySubdomain = new Map<string, Compiled[]>();
  private readonly byDomain = new Map<string, Compiled[]>();
  private readonly byUrl: Compiled[] = [];
  /** Host → its host and domain rules; a cache that changes no answer. */
  private readonly hostRules = new Map<string, Compiled[]>();
  /** Every accept and reject pattern, compiled once. */
  private readonly regexes = new Map<string, RegExp>();

  /** The rules of the files in `dir` (siteRuleFiles); SHERLOCK_BAD_CONFIG with FILE:LINE on the first problem. */
  static load(dir: string | undefined): SiteRules {
    const files = siteRuleFiles(dir);
    return SiteRules.fromTexts(files.map((file) => ({ file, text: readConfigFile(file) })));
  }

  /** The rules of these texts, in this order (`file` names them in errors and reports). */
  static fromTexts(sources: readonly RuleSource[]): SiteRules {
    const compiled: Compiled[] = [];
    for (const { file, text } of sources) compiled.push(...compileFile(file, text, compiled.length));
    return new SiteRules(compiled, sources);
  }

  static readonly none = new SiteRules([], []);

  private constructor(compiled: Compiled[], sources: readonly RuleSource[]) {
    this.rules = compiled.map((c) => c.rule);
    this.sources = sources;
    for (const c of compiled) {
      for (const pattern of [...(c.rule.settings.accept ?? []), ...(c.rule.settings.reject ?? [])]) this.regexes.set(pattern, new RegExp(pattern));
      const { kind, text } = c.rule.matcher;
      if (kind === 'host') {
        const pattern = compileHostPattern(text) as { host: string; subdomains: boolean };
        pushTo(pattern.subdomains ? this.bySubdomain : this.byHost, pattern.host, c);
      } else if (kind === 'domain') {
        pushTo(this.byDomain, text, c);
      } else {
        this.byUrl.push(c);
      }
    }
  }

  get files(): string[] {
    return this.sources.map((source) => source.file);
  }

  get empty(): boolean {
    return this.rules.length === 0;
  }

  /** The rules matching a canonical URL, in rule order. */
  matching(url: string): SiteRule[] {
    if (this.rules.length === 0) return [];
    const found = [...this.forHost(urlParts(url).host)];
    for (const c of this.byUrl) if (c.test!(url)) found.push(c);
    return found.sort((a, b) => a.rule.order - b.rule.order).map((c) => c.rule);
  }

  /** What applies to a canonical URL (see the module comment for how rules combine). */
  effective(url: string): Effective {
    const rules = this.matching(url);
    const settings: Record<string, unknown> = {};
    const from: Partial<Record<SettingName, SiteRule[]>> = {};
    for (const rule of rules) {
      for (const name of SETTING_NAMES) {
        const value = rule.settings[name];
        if (value === undefined) continue;
        if (UNION.has(name)) {
          settings[name] = [...((settings[name] as string[] | undefined) ?? []), ...(value as string[])];
          (from[name] ??= []).push(rule);
        } else {
          settings[name] = value;
          from[name] = [rule];
        }
      }
    }
    return { rules, settings: settings as RuleSettings, from };
  }

  /**
   * Why the rules keep a canonical URL out of the crawl, naming the rule: a
   * `reject` pattern it matches, or an `accept` list none of whose patterns
   * it matches. Undefined when they do not.
   */
  refusal(url: string): string | undefined {
    if (this.empty) return undefined;
    const e = this.effective(url);
    const test = (pattern: string): boolean => this.regexes.get(pattern)!.test(url);
    const rejected = e.settings.reject?.find(test);
    if (rejected !== undefined) return `reject ${JSON.stringify(rejected)} of ${listedBy(e, 'reject', rejected)}`;
    if (e.settings.accept !== undefined && !e.settings.accept.some(test)) return `no accept pattern of ${e.from.accept![0]!.where} matches`;
    return undefined;
  }

  /** Why a site rule's robots_disallow refuses a canonical URL, naming the rule; undefined when none does. */
  robotsRefusal(url: string): string | undefined {
    if (this.empty) return undefined;
    const e = this.effective(url);
    const { rest } = urlParts(url);
    const path = e.settings.robots_disallow?.find((prefix) => rest.startsWith(prefix));
    return path === undefined ? undefined : `disallowed by site rule ${listedBy(e, 'robots_disallow', path)} (robots_disallow ${path})`;
  }

  /** One setting for a canonical URL, as effective() gives it. */
  setting<K extends SettingName>(url: string, name: K): RuleSettings[K] | undefined {
    return this.effective(url).settings[name];
  }

  /**
   * A setting of a whole host: from its host and domain rules (the only ones
   * that may set connections and result_cap), the last that sets it winning
   * as in effective().
   */
  hostSetting<K extends SettingName>(host: string, name: K): RuleSettings[K] | undefined {
    if (this.empty) return undefined;
    let value: RuleSettings[K] | undefined;
    let order = -1;
    for (const c of this.forHost(host)) {
      const set = c.rule.settings[name];
      if (set !== undefined && c.rule.order > order) {
        value = set;
        order = c.rule.order;
      }
    }
    return value;
  }

  /** Whether any rule sets `name`. */
  sets(name: SettingName): boolean {
    return this.rules.some((rule) => rule.settings[name] !== undefined);
  }

  private forHost(host: string): Compiled[] {
    let found = this.hostRules.get(host);
    if (found !== undefined) return found;
    found = [...(this.byHost.get(host) ?? []), ...(this.byDomain.get(registrableDomain(host)) ?? [])];
    for (let name = host; ; ) {
      found.push(...(this.bySubdomain.get(name) ?? []));
      const dot = name.indexOf('.');
      if (dot < 0) break;
      name = name.slice(dot + 1);
    }
    if (this.hostRules.size >= HOST_CACHE) this.hostRules.clear();
    this.hostRules.set(host, found);
    return found;
  }
}

/** Where the first matching rule listing `entry` in its `name` list is written. */
function listedBy(e: Effective, name: 'reject' | 'robots_disallow', entry: string): string {
  return e.from[name]!.find((rule) => rule.settings[name]!.includes(entry))!.where;
}

/** Hosts whose rules are remembered before the memory starts over. */
const HOST_CACHE = 10_000;

function pushTo(map: Map<string, Compiled[]>, key: string, c: Compiled): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [c]);
  else list.push(c);
}

function bad(where: string, message: string): SherlockError {
  return new SherlockError('SHERLOCK_BAD_CONFIG', `${where}: ${message}`, { source: where });
}

/** One file's `[[site]]` tables as compiled rules numbered from `first`. */
function compileFile(file: string, text: string, first: number): Compiled[] {
  const doc = parseTomlFile(text, file);
  const lines = keyLines(text);
  const at = (key: string): string => `${file}:${lines.get(key) ?? '?'}`;
  for (const key of Object.keys(doc)) {
    if (key !== 'site') throw bad(lines.has(key) ? at(key) : at(`${key}.0`), `${key}: unknown key${didYouMean(key, ['site'])} (rules are [[site]] tables)`);
  }
  const sites = doc['site'] ?? [];
  if (!Array.isArray(sites)) throw bad(at('site'), 'site: expected [[site]] tables');
  return sites.map((table: unknown, index: number): Compiled => {
    const where = at(`site.${index}`);
    const keyAt = (key: string): string => (lines.has(`site.${index}.${key}`) ? at(`site.${index}.${key}`) : where);
    if (typeof table !== 'object' || table === null || Array.isArray(table)) throw bad(where, 'site: expected a [[site]] table');
    for (const key of Object.keys(table)) {
      if (!(RULE_KEYS as string[]).includes(key)) throw bad(keyAt(key), `${key}: unknown key${didYouMean(key, RULE_KEYS)}`);
    }
    const checked = ruleSchema.safeParse(table);
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      const key = String(issue.path[0] ?? '');
      const value = (table as Record<string, unknown>)[key];
      throw bad(keyAt(key), `${key}: ${issue.message}, got ${JSON.stringify(value)}`);
    }
    const rule = checked.data;
    const kinds = MATCHERS.filter((kind) => rule[kind] !== undefined);
    if (kinds.length !== 1) {
      const found = kinds.length === 0 ? 'none' : kinds.join(', ');
      throw bad(where, `a rule needs exactly one matcher of ${MATCHERS.join(', ')}; found ${found}`);
    }
    const kind = kinds[0]!;
    const hostOnly = Object.keys(rule).find((key) => HOST_ONLY.has(key as SettingName));
    if (hostOnly !== undefined && kind !== 'host' && kind !== 'domain') {
      throw bad(keyAt(hostOnly), `${hostOnly}: applies to whole hosts, so only a host or domain rule may set it, not a ${kind} rule`);
    }
    const { host: _h, domain: _d, prefix: _p, regex: _r, ...settings } = rule;
    if (settings.min_refetch !== undefined && settings.max_refetch !== undefined && settings.min_refetch > settings.max_refetch) {
      throw bad(keyAt('min_refetch'), 'min_refetch: longer than max_refetch');
    }
    const matcher = compileMatcher(kind, rule[kind]!, keyAt(kind));
    return { rule: { where, matcher: { kind, text: matcher.text }, settings, order: first + index }, ...(matcher.test === undefined ? {} : { test: matcher.test }) };
  });
}

/** A matcher's text in the form it compares (a canonical host, domain or URL) and, for prefix and regex, its test. */
function compileMatcher(kind: MatcherKind, text: string, where: string): { text: string; test?: (url: string) => boolean } {
  switch (kind) {
    case 'host': {
      const pattern = compileHostPattern(text);
      if (typeof pattern === 'string') throw bad(where, `host: ${pattern}, got ${JSON.stringify(text)}`);
      return { text: pattern.subdomains ? `*.${pattern.host}` : pattern.host };
    }
    case 'domain': {
      const pattern = compileHostPattern(text);
      if (typeof pattern === 'string' || pattern.subdomains) throw bad(where, `domain: expected a domain name ("example.co.uk"), got ${JSON.stringify(text)}`);
      if (registrableDomain(pattern.host) !== pattern.host) {
        throw bad(where, `domain: ${pattern.host} is not a registrable domain (that is ${registrableDomain(pattern.host)}); use host = "${pattern.host}" for one host`);
      }
      return { text: pattern.host };
    }
    case 'prefix': {
      const canonical = canonicalOrNone(text);
      if (canonical === undefined) throw bad(where, `prefix: expected an http or https URL, got ${JSON.stringify(text)}`);
      return { text: canonical, test: (url) => url.startsWith(canonical) };
    }
    case 'regex': {
      const problem = urlPatternProblem([text]);
      if (problem !== undefined) throw bad(where, `regex: ${problem.replace(/^entry 0 /, '')}`);
      const regex = new RegExp(text);
      return { text, test: (url) => regex.test(url) };
    }
  }
}
