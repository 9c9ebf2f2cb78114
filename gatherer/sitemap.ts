/**
 * XML sitemaps (sitemaps.org protocol 0.9): the URLs a site lists for
 * crawlers. A `Sitemap:` line in robots.txt makes the shepherd plan the
 * sitemap like a page; fetched, it parses here into R links, which the
 * shepherd judges like any page's links (so a sitemap cannot widen the
 * crawl, and its URLs are one hop from it).
 *
 * A body is a sitemap when its root element is <urlset> (the URLs of
 * pages) or <sitemapindex> (the URLs of more sitemaps), in any namespace
 * prefix. Each <loc> inside a <url> or <sitemap> gives one URL, resolved
 * against the sitemap's own URL (the protocol wants absolute URLs; a
 * relative one costs nothing to accept) and canonicalised; unusable ones are
 * counted into `problems`. At most MAX_SITEMAP_URLS are kept, the protocol's
 * limit per file. Anything that is not a sitemap (an RSS feed, any other XML)
 * gives undefined, and the body is stored unparsed as before.
 *
 * Parsing stops at an element nested deeper than MAX_DEPTH (a sitemap needs
 * 3, 5 with extensions such as image:image), keeping what came before:
 * htmlparser2's Parser puts each open element at the front of an array and
 * searches that array for each close tag, so 100,000 nested elements and as
 * many unmatched close tags (0.7 MB) took 20 s, and a 10 MiB body an hour.
 */

import { Parser } from 'htmlparser2';
import type { Link } from '../common/bucket/doc-body.js';
import { isSherlockError } from '../common/errors.js';
import { canonicalUrl } from '../common/url.js';

export const MAX_SITEMAP_URLS = 50_000;
export const MAX_DEPTH = 64;

/** Thrown from the Parser's callback to stop it, caught in parseSitemap (and feed.ts parseFeed). */
export class TooDeep extends Error {}

const ROOTS = new Set(['urlset', 'sitemapindex']);
const ENTRIES = new Set(['url', 'sitemap']);

/** `ns:name` → `name`, lower case. */
export function localName(name: string): string {
  return name.slice(name.indexOf(':') + 1).toLowerCase();
}

/** The links of a sitemap, or undefined when `xml` is not one. */
export function parseSitemap(xml: string, base: string): { links: Link[]; problems: string[] } | undefined {
  const stack: string[] = [];
  let root: string | undefined;
  let loc: string | undefined;
  let dropped = 0;
  let over = 0;
  const links: Link[] = [];
  const seen = new Set<string>();
  const parser = new Parser(
    {
      onopentagname(name) {
        const local = localName(name);
        if (root === undefined) root = local;
        if (local === 'loc' && ENTRIES.has(stack[stack.length - 1] ?? '') && stack.length === 2) loc = '';
        if (stack.length >= MAX_DEPTH) throw new TooDeep();
        stack.push(local);
      },
      ontext(text) {
        if (loc !== undefined) loc += text;
      },
      onclosetag(name) {
        const local = localName(name);
        if (local === 'loc' && loc !== undefined) {
          take(loc.trim());
          loc = undefined;
        }
        stack.pop();
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  const take = (text: string): void => {
    if (text === '') return;
    let url: string;
    try {
      url = canonicalUrl(text, base);
    } catch (err) {
      if (!isSherlockError(err, 'SHERLOCK_BAD_URL')) throw err;
      dropped += 1;
      return;
    }
    if (seen.has(url)) return;
    if (links.length >= MAX_SITEMAP_URLS) {
      over += 1;
      return;
    }
    seen.add(url);
    links.push({ type: 'R', url });
  };
  let tooDeep = false;
  try {
    parser.end(xml);
  } catch (err) {
    if (!(err instanceof TooDeep)) throw err;
    tooDeep = true;
  }
  if (root === undefined || !ROOTS.has(root)) return undefined;
  const problems: string[] = [];
  if (tooDeep) problems.push(`elements nested deeper than ${MAX_DEPTH}: the rest of the sitemap ignored`);
  if (dropped > 0) problems.push(`${dropped} sitemap URLs without a canonical form dropped`);
  if (over > 0) problems.push(`${over} sitemap URLs beyond ${MAX_SITEMAP_URLS} dropped`);
  return { links, problems };
}
