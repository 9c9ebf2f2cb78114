/**
 * How an operator names sites and URLs in config files: host patterns
 * (`docs.example.org`, `*.example.net`), URL regular expressions, and the
 * registrable domain a host belongs to. The shepherd's scope (allow, deny,
 * deny_patterns) and the site rules (site-rules.ts) compile them here, so a
 * pattern means the same in both; the index's domain strings (index/chains.ts)
 * use the same registrable domain.
 */

import { getDomain } from 'tldts';

/** A host pattern compiled: the exact host, or a domain whose subdomains match too. */
export interface HostPattern {
  host: string;
  subdomains: boolean;
}

const IPV6_LITERAL = /^\[[0-9a-f:.]+\]$/;
const HOST_TEXT = /^[^\s/\\?#@:[\]*%]+$/;

/**
 * The compiled form of a host pattern, or the reason it is not one. The host is
 * put through the URL parser so it compares with canonical hosts (lower case,
 * punycode, normalised IP addresses).
 */
export function compileHostPattern(entry: string): HostPattern | string {
  const subdomains = entry.startsWith('*.');
  const text = subdomains ? entry.slice(2) : entry;
  if (!HOST_TEXT.test(text) && !IPV6_LITERAL.test(text.toLowerCase())) {
    return 'expected a host ("docs.example.org", "[::1]") or "*." and a domain ("*.example.net"), without port or path';
  }
  let host: string;
  try {
    host = new URL(`http://${text}/`).hostname;
  } catch {
    return 'not a valid host name';
  }
  if (host === '') return 'not a valid host name';
  if (subdomains && (host.startsWith('[') || /^[\d.]+$/.test(host))) return '"*." goes only before a domain name, not an address';
  return { host, subdomains };
}

export function matchesHost(pattern: HostPattern, host: string): boolean {
  return host === pattern.host || (pattern.subdomains && host.endsWith(`.${pattern.host}`));
}

/** For a config schema: the first entry of `entries` that is not a host pattern, described; undefined when all are. */
export function hostPatternProblem(entries: readonly string[]): string | undefined {
  for (const [index, entry] of entries.entries()) {
    const compiled = compileHostPattern(entry);
    if (typeof compiled === 'string') return `entry ${index} (${JSON.stringify(entry)}): ${compiled}`;
  }
  return undefined;
}

/** For a config schema: the first entry that is not a valid regular expression, described; undefined when all are. */
export function urlPatternProblem(entries: readonly string[]): string | undefined {
  for (const [index, entry] of entries.entries()) {
    try {
      new RegExp(entry);
    } catch (err) {
      return `entry ${index} (${JSON.stringify(entry)}) is not a valid regular expression: ${(err as Error).message}`;
    }
  }
  return undefined;
}

/** tldts options: the PSL's private section counts (x.github.io and y.github.io are two domains, as browsers treat them for cookies). */
const PSL = { allowPrivateDomains: true } as const;

/** The registrable domain of a canonical host, or the host itself when it has none (an IP address, localhost, a bare public suffix). */
export function registrableDomain(host: string): string {
  if (host.startsWith('[')) return host;
  return getDomain(host, PSL) ?? host;
}
