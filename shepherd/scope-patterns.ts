/**
 * The patterns an operator writes in [shepherd] for the scope (scope.ts):
 * host patterns (allow, deny), URL patterns (deny_patterns) and parameter
 * names (strip_params), compiled for Scope and checked for the config schema
 * (config.ts), which reports the first bad entry with its index. Their
 * syntax is in scope.ts's module comment.
 */

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

/** For the config schema: the first entry of `entries` that is not a host pattern, described; undefined when all are. */
export function hostPatternProblem(entries: readonly string[]): string | undefined {
  for (const [index, entry] of entries.entries()) {
    const compiled = compileHostPattern(entry);
    if (typeof compiled === 'string') return `entry ${index} (${JSON.stringify(entry)}): ${compiled}`;
  }
  return undefined;
}

/** For the config schema: the first entry that is not a valid regular expression, described; undefined when all are. */
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

const PARAM_NAME = /^[^\s&=;#?/*]+\*?$/;

/** For the config schema: the first strip_params entry that is not a parameter name (or prefix*), described. */
export function paramNameProblem(entries: readonly string[]): string | undefined {
  for (const [index, entry] of entries.entries()) {
    if (!PARAM_NAME.test(entry)) {
      return `entry ${index} (${JSON.stringify(entry)}): expected a parameter name, optionally ending in "*" for a prefix`;
    }
  }
  return undefined;
}

/** Compiled strip_params: exact names and prefixes, all lower case. */
export class ParamNames {
  private readonly exact = new Set<string>();
  private readonly prefixes: string[] = [];

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const name = entry.toLowerCase();
      if (name.endsWith('*')) this.prefixes.push(name.slice(0, -1));
      else this.exact.add(name);
    }
  }

  /** Whether a `name=value` (or bare `name`) piece is one to strip. */
  matches(piece: string): boolean {
    const eq = piece.indexOf('=');
    const name = (eq < 0 ? piece : piece.slice(0, eq)).toLowerCase();
    return this.exact.has(name) || this.prefixes.some((prefix) => name.startsWith(prefix));
  }
}
