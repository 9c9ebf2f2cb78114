/**
 * The benchmark site: which loopback address serves which part of which Debian
 * documentation tree, and how each host behaves. Pure functions only: the site
 * server (`site-server.ts`), the corpus extraction (`extract.ts`) and the
 * politeness analysis of the access log (`access-log.ts`) all read the same
 * layout, so "a page of the site", "disallowed" and "an error path" mean the
 * same thing everywhere.
 *
 * Invariants:
 * - Every host is an address in 127.0.0.0/8, all on one port; 127.0.0.1 is the
 *   hub (a seed page linking every host, and the sink for external links).
 * - Hosts cut from one package share its document root; each path belongs to
 *   exactly one of them (`ownerOf`): the longest matching `owns` prefix, else the
 *   package's default host (empty `owns`). A link to a path another host owns is
 *   rewritten to that host's absolute URL when the page is served.
 * - Links to anything outside the site (absolute http(s) URLs) are rewritten to
 *   the hub's `/external/…`, which answers 404: a crawler that strays still
 *   sends nothing beyond loopback.
 * - Behaviour is deterministic per path (a hash), so repeated runs see the same
 *   site: the same redirects, missing pages and errors.
 */

/** How a host answers, beyond serving files. */
export type Behaviour = 'normal' | 'slow' | 'flaky';

export interface HostSpec {
  /** Short name used in reports, e.g. "postgresql-sql". */
  readonly name: string;
  /** Loopback address, e.g. "127.0.0.3". */
  readonly address: string;
  /** Debian package whose files it serves. */
  readonly pkg: string;
  /** Absolute document root (shared by all hosts cut from one package). */
  readonly root: string;
  /** Path prefixes this host owns; empty for the package's default host. */
  readonly owns: readonly string[];
  /** Path of the page a crawl of this host starts from. */
  readonly entry: string;
  /** robots.txt `Disallow` prefixes for `User-agent: *`; undefined = no robots.txt (404). */
  readonly disallow: readonly string[] | undefined;
  /** robots.txt `Crawl-delay` in seconds for `User-agent: *`. */
  readonly crawlDelay?: number;
  readonly behaviour: Behaviour;
}

export interface SiteLayout {
  readonly port: number;
  readonly hosts: readonly HostSpec[];
}

export const HUB_ADDRESS = '127.0.0.1';
/** Milliseconds a slow host waits before answering. */
export const SLOW_DELAY_MS = 10;
/** Prefix of the redirecting aliases the server puts into a few links. */
export const REDIRECT_PREFIX = '/_r';
/** A user agent every robots.txt shuts out completely (parsers must pick the right group). */
export const SHUT_OUT_AGENT = 'ExampleBadBot';

/** 32-bit FNV-1a of a string: a stable hash for per-path behaviour. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** What the server does with a path on a host, before looking at the disk. */
export type PathFate =
  | { kind: 'serve' }
  | { kind: 'gone' } // a page that exists on disk but is answered with 404
  | { kind: 'error'; status: 500 | 503 } // flaky host: a server error
  | { kind: 'reset' }; // flaky host: the connection is destroyed without an answer

/**
 * Deterministic fate of a page path (never the host's entry page): about 1 in
 * 97 HTML pages is "gone" (404) on every host; on a flaky host about 6% answer 500, 3% 503 and 3% reset.
 */
export function pathFate(host: HostSpec, path: string): PathFate {
  // The entry page always answers: a crawl must be able to start.
  if (!path.endsWith('.html') || path === host.entry) return { kind: 'serve' };
  const h = fnv1a(host.name + ' ' + path);
  if (h % 97 === 13) return { kind: 'gone' };
  if (host.behaviour === 'flaky') {
    const r = h % 100;
    if (r < 6) return { kind: 'error', status: 500 };
    if (r < 9) return { kind: 'error', status: 503 };
    if (r < 12) return { kind: 'reset' };
  }
  return { kind: 'serve' };
}

/** About 1 in 50 links to a page on the same host goes through a 301 alias. */
export function linkRedirects(host: HostSpec, path: string): boolean {
  return path.endsWith('.html') && fnv1a('redirect ' + host.name + ' ' + path) % 50 === 7;
}

/** The host that owns `path` among the hosts sharing `root`. */
export function ownerOf(layout: SiteLayout, root: string, path: string): HostSpec | undefined {
  let best: HostSpec | undefined;
  let bestLength = -1;
  for (const host of layout.hosts) {
    if (host.root !== root) continue;
    if (host.owns.length === 0) {
      if (bestLength < 0) {
        best = host;
        bestLength = 0;
      }
      continue;
    }
    for (const prefix of host.owns) {
      if (path.startsWith(prefix) && prefix.length > bestLength) {
        best = host;
        bestLength = prefix.length;
      }
    }
  }
  return best;
}

/** True when `path` is disallowed for `User-agent: *` on `host` (plain prefix rules, RFC 9309 §2.2.2). */
export function isDisallowed(host: HostSpec, path: string): boolean {
  if (host.disallow === undefined) return false;
  return host.disallow.some((prefix) => prefix !== '' && path.startsWith(prefix));
}

/** The robots.txt body of a host, or undefined when it has none (answered 404). */
export function robotsTxt(host: HostSpec): string | undefined {
  if (host.disallow === undefined) return undefined;
  const lines = [
    `# robots.txt of the sherlock benchmark host ${host.name} (${host.pkg})`,
    `User-agent: ${SHUT_OUT_AGENT}`,
    'Disallow: /',
    '',
    'User-agent: *',
    ...host.disallow.map((prefix) => `Disallow: ${prefix}`),
  ];
  if (host.crawlDelay !== undefined) lines.push(`Crawl-delay: ${host.crawlDelay}`);
  return lines.join('\n') + '\n';
}

export function hostUrl(layout: SiteLayout, address: string, path: string): string {
  return `http://${address}:${layout.port}${path}`;
}

/** True when `path` (the part of a URL after the authority) is a page of the site as a crawler sees it. */
export function isSitePage(layout: SiteLayout, host: HostSpec, path: string): boolean {
  return (
    path.endsWith('.html') &&
    ownerOf(layout, host.root, path) === host &&
    !isDisallowed(host, path) &&
    pathFate(host, path).kind === 'serve'
  );
}

const HREF = /(\shref\s*=\s*)(["'])([^"']*)\2/gi;

/**
 * Rewrites the href attributes of one HTML page served by `host` at `pagePath`:
 * links into another host of the same package become absolute URLs on that
 * host, a few same-host links go through a redirecting alias, and absolute
 * links leaving the site point at the hub's 404 sink. Everything else is kept
 * byte for byte.
 */
export function rewriteLinks(layout: SiteLayout, host: HostSpec, pagePath: string, html: string): string {
  const base = new URL(`http://${host.address}:${layout.port}${pagePath}`);
  return html.replace(HREF, (whole: string, lead: string, quote: string, value: string) => {
    const raw = value.replaceAll('&amp;', '&');
    if (raw === '' || raw.startsWith('#') || /[^\x20-\x7e]/.test(raw)) return whole;
    const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(raw);
    if (scheme !== null) {
      const s = scheme[1]!.toLowerCase();
      if (s !== 'http' && s !== 'https') return whole; // mailto:, javascript:, …
      let target: URL;
      try {
        target = new URL(raw);
      } catch {
        return whole;
      }
      if (target.hostname === host.address && target.port === String(layout.port)) return whole;
      const sink = `/external/${encodeURIComponent(target.hostname)}${target.pathname}`;
      return `${lead}${quote}${hostUrl(layout, HUB_ADDRESS, sink)}${quote}`;
    }
    if (raw.startsWith('//')) return `${lead}${quote}${hostUrl(layout, HUB_ADDRESS, '/external/')}${quote}`;
    let target: URL;
    try {
      target = new URL(raw, base);
    } catch {
      return whole;
    }
    const path = decodePath(target.pathname);
    const owner = ownerOf(layout, host.root, path);
    if (owner !== undefined && owner !== host) {
      return `${lead}${quote}${hostUrl(layout, owner.address, target.pathname + target.search + target.hash)}${quote}`;
    }
    if (owner === host && linkRedirects(host, path) && !isDisallowed(host, path)) {
      return `${lead}${quote}${REDIRECT_PREFIX}${target.pathname}${target.search}${target.hash}${quote}`;
    }
    return whole;
  });
}

/** Percent-decodes a URL path; a malformed escape leaves the path as it was. */
export function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** The hub's seed page: one link per host's entry page. */
export function hubPage(layout: SiteLayout): string {
  const items = layout.hosts.map(
    (h) => `<li><a href="${hostUrl(layout, h.address, h.entry)}">${h.name}</a> (${h.pkg}, ${h.behaviour})</li>`,
  );
  return `<!DOCTYPE html>\n<html><head><title>sherlock benchmark site</title></head><body>\n<h1>sherlock benchmark site</h1>\n<ul>\n${items.join('\n')}\n</ul>\n</body></html>\n`;
}
