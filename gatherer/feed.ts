/**
 * News feeds: RSS 2.0 (and 0.9x), RSS 1.0 (RDF) and Atom 1.0 (issue 30). A
 * feed is read as a page about its entries: the channel's title is the
 * title; each entry is a block whose title is a heading and the anchor text
 * of the entry's link (an R link, which the shepherd judges like any page's,
 * as it does a sitemap's URLs), followed by its summary or content as text.
 *
 * A body is a feed when its root element is <rss>, <rdf:RDF> or <feed>, in
 * any namespace prefix. The entry's link is RSS's <link> text, RSS 1.0's
 * <link> or rdf:about, Atom's <link href> with rel "alternate" or no rel;
 * resolved against the feed's URL and canonicalised (xml:base is not
 * followed). Summaries are HTML escaped into text in most feeds
 * (`&lt;p&gt;…`): their tags are dropped and entities decoded as htmlparser2
 * decodes the feed's own. At most MAX_FEED_LINKS links are kept.
 *
 * As for sitemaps, parsing stops at an element nested deeper than
 * MAX_DEPTH, keeping what came before (htmlparser2's close-tag search is
 * quadratic in the depth; gatherer/sitemap.ts).
 */

import { Parser } from 'htmlparser2';
import type { Link } from '../common/bucket/doc-body.js';
import { MAX_BRACKET_LINK, WORD_TYPE, type TextBuilder } from '../common/bucket/doc-text.js';
import { LinkList } from './link-list.js';
import { localName, MAX_DEPTH, TooDeep } from './sitemap.js';

export const MAX_FEED_LINKS = 10_000;

const ROOTS = new Set(['rss', 'rdf', 'feed']);
const ENTRIES = new Set(['item', 'entry']);
/** Where an entry's text is: RSS's description, RSS 1.0's content:encoded, Atom's summary and content. */
const BODIES = new Set(['description', 'encoded', 'summary', 'content']);

export interface FeedFields {
  title?: string;
  links: Link[];
  problems: string[];
}

/** Tags of HTML escaped into a summary; entities are decoded already. Not `<[^>]*>`: a summary of many `<` and no `>` would make that quadratic. */
const TAG = /<[^<>]*>/g;

/** The fields of a feed, its entries written into `text`; undefined when `xml` is not a feed (nothing is written then). */
export function parseFeed(xml: string, base: string, text: TextBuilder): FeedFields | undefined {
  const stack: string[] = [];
  let root: string | undefined;
  let title: string | undefined;
  const links = new LinkList(base, MAX_FEED_LINKS, 'feed links');
  // The element whose text is being collected, and the entry being read.
  let collecting: 'title' | 'body' | 'link' | undefined;
  let collectedAt = 0;
  let buffer = '';
  // An entry's parts come in any order: it is written when it closes.
  let entry: { title?: string; link?: string; bodies: string[] } | undefined;

  /** The entry's title as a heading, bracketed as its link's anchor text, then its text. */
  const writeEntry = (done: NonNullable<typeof entry>): void => {
    const n = done.link === undefined ? undefined : links.index(done.link);
    text.breakBlock();
    text.setType(WORD_TYPE.heading2);
    if (n !== undefined && n <= MAX_BRACKET_LINK) text.openLink(n);
    text.append(done.title ?? '');
    text.closeLink();
    text.setType(WORD_TYPE.text);
    for (const body of done.bodies) {
      text.breakBlock();
      text.append(body);
    }
  };
  /** Collects the text of the element just opened (at the top of the stack) until it closes. */
  const collect = (what: NonNullable<typeof collecting>): void => {
    collecting = what;
    collectedAt = stack.length;
    buffer = '';
  };

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        const local = localName(name);
        if (root === undefined) {
          root = local;
          if (!ROOTS.has(root)) throw new NotFeed();
        }
        if (stack.length >= MAX_DEPTH) throw new TooDeep();
        const parent = stack[stack.length - 1] ?? '';
        stack.push(local);
        if (collecting !== undefined) return; // markup inside a title or an Atom xhtml content
        if (ENTRIES.has(local)) {
          const about = attributes['rdf:about'];
          entry = { ...(about === undefined ? {} : { link: about }), bodies: [] };
        } else if (entry !== undefined && ENTRIES.has(parent)) {
          if (local === 'title') collect('title');
          else if (local === 'link') {
            const href = attributes['href'];
            const rel = attributes['rel'];
            if (href === undefined) collect('link');
            else if (rel === undefined || rel === 'alternate') entry.link = href;
          } else if (BODIES.has(local)) collect('body');
        } else if (entry === undefined && local === 'title' && title === undefined && (parent === 'channel' || parent === 'feed')) collect('title');
      },
      ontext(chunk) {
        if (collecting !== undefined) buffer += chunk;
      },
      onclosetag(name) {
        const local = localName(name);
        stack.pop();
        if (collecting !== undefined && stack.length < collectedAt) {
          const value = buffer.replace(TAG, ' ');
          if (collecting === 'title') {
            const clean = value.replace(/\s+/g, ' ').trim();
            if (entry === undefined) title = clean;
            else entry.title = clean;
          } else if (collecting === 'link') entry!.link = value;
          else entry!.bodies.push(value);
          collecting = undefined;
        } else if (collecting === undefined && ENTRIES.has(local) && entry !== undefined) {
          writeEntry(entry);
          entry = undefined;
        }
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  const problems: string[] = [];
  try {
    parser.end(xml);
  } catch (err) {
    if (err instanceof NotFeed) return undefined;
    if (!(err instanceof TooDeep)) throw err;
    problems.push(`elements nested deeper than ${MAX_DEPTH}: the rest of the feed ignored`);
  }
  if (root === undefined || !ROOTS.has(root)) return undefined;
  problems.push(...links.problems());
  return { ...(title === undefined || title === '' ? {} : { title }), links: links.links, problems };
}

/** Thrown from the Parser's callback at a root that is not a feed's: nothing more is read. */
class NotFeed extends Error {}
