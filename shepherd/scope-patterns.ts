/**
 * The parameter names an operator writes in [shepherd] strip_params for the
 * scope (scope.ts), compiled for Scope and checked for the config schema
 * (config.ts), which reports the first bad entry with its index. Host and URL
 * patterns are common/url-patterns.ts's. Their syntax is in scope.ts's module
 * comment.
 */

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
