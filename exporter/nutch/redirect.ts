/**
 * The representative URL of a redirect, as Nutch's fetcher records it
 * (`_repr_` in the datum of the target, URLUtil.chooseRepr in Nutch 1.x):
 *
 *   1. source and target in different registrable domains: the target;
 *   2. permanent: the source when it is a site's root (`/`), else the target;
 *   3. temporary: the source when only it is a root, the target when only
 *      it is; neither a root on the same host: the one with fewer path
 *      segments, then the shorter path (the source when equal); otherwise
 *      (both roots, or two hosts) the host with fewer labels (the source
 *      when equal).
 *
 * A "path" is the URL's path and query (Java's URL.getFile()), segments and
 * labels counted as Java's String.split counts them (trailing empty ones
 * dropped). The domain is the PSL's registrable domain as the index's
 * `site:` strings have it (private section included; Nutch's own suffix list
 * has only the ICANN part).
 *
 * RedirectTargets gives the crawldb's rows their `_repr_` as Nutch's
 * updatedb leaves it on a target it learnt of through a redirect: the
 * redirects in their targets' order (UrlSnapshot.redirects) merged with the
 * rows in URL order, so that memory stays one redirect whatever the crawl.
 */

import { urlStrings } from '../../common/index/chains.js';
import { urlParts } from '../../common/url.js';
import type { RedirectRow } from '../../shepherd/status.js';

/** How many pieces Java's `s.split(sep)` gives: trailing empty pieces dropped, at least one for a string with no separator. */
function javaSplitLength(s: string, sep: string): number {
  const pieces = s.split(sep);
  while (pieces.length > 0 && pieces[pieces.length - 1] === '') pieces.pop();
  return s.includes(sep) ? pieces.length : 1;
}

/** Nutch's chooseRepr for canonical URLs; the target when either is not one. */
export function representativeUrl(source: string, target: string, temporary: boolean): string {
  let src, dst;
  try {
    src = urlParts(source);
    dst = urlParts(target);
  } catch {
    return target;
  }
  if (urlStrings(source).domain !== urlStrings(target).domain) return target;
  const srcRoot = src.rest === '/';
  const dstRoot = dst.rest === '/';
  if (!temporary) return srcRoot ? source : target;
  if (srcRoot && !dstRoot) return source;
  if (!srcRoot && dstRoot) return target;
  if (!srcRoot && !dstRoot && src.host === dst.host) {
    const srcSegments = javaSplitLength(src.rest, '/');
    const dstSegments = javaSplitLength(dst.rest, '/');
    if (srcSegments !== dstSegments) return dstSegments < srcSegments ? target : source;
    return dst.rest.length < src.rest.length ? target : source;
  }
  return javaSplitLength(dst.host, '.') < javaSplitLength(src.host, '.') ? target : source;
}

/** The HTTP statuses of a permanent redirect (Nutch's moved, db_redir_perm); every other 3xx is temporary. */
export const PERMANENT_REDIRECTS: ReadonlySet<number> = new Set([301, 308]);

const ASCII = /^[\x00-\x7f]*$/;

/** The byte order of canonical URLs (SQLite's BINARY, Hadoop's Text): their UTF-8 bytes, which ASCII strings compare as. */
function compareUrls(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** The representative URLs of redirect targets, asked for in ascending URL order. */
export class RedirectTargets {
  private next: RedirectRow | undefined;

  /** `redirects`: in target order, then source order. */
  constructor(private readonly redirects: Iterator<RedirectRow>) {
    this.advance();
  }

  /** `_repr_` of `url` when a redirect points to it (the first source in URL order decides); call with ascending URLs. */
  representativeOf(url: string): string | undefined {
    while (this.next !== undefined && this.next.target !== url && compareUrls(this.next.target, url) < 0) this.advance();
    const redirect = this.next;
    if (redirect === undefined || redirect.target !== url) return undefined;
    while (this.next !== undefined && this.next.target === url) this.advance();
    return representativeUrl(redirect.url, url, redirect.status === null || !PERMANENT_REDIRECTS.has(redirect.status));
  }

  private advance(): void {
    const step = this.redirects.next();
    this.next = step.done === true ? undefined : step.value;
  }
}
