/**
 * HTML to document fields: one pass of html-scan.ts (htmlparser2's events,
 * found faster) over the decoded page, writing the text into a TextBuilder
 * (common/bucket/doc-text.ts) and collecting title, metas, links and robots
 * directives.
 *
 * Text: words of <h1>/<h2> are heading 1, of <h3>–<h6> heading 2, of
 * <b>/<strong>/<em>/<i> emphasised, of <small>/<sub>/<sup> small (when nested,
 * the first of heading 1, heading 2, emphasised, small wins); an <img alt> is
 * written as alt words; block elements (BLOCKS) put breaks around
 * themselves. Nothing inside <script>, <style>, <noscript> or <template> is
 * read, not even links. Text in <head> is not document text; as in the HTML
 * parser's "in head" mode, an element that does not belong in a head, or
 * non-blank text, ends the head, and a <head> tag after that is ignored.
 *
 * Links, each resolved with canonicalUrl against the first <base href> seen
 * (the document URL before one is seen, or if it does not parse) and dropped
 * when that fails (not http(s), unparseable): <a href> and <area href> → R,
 * <frame src> and <iframe src> → F, <img src> → I (with the first non-blank
 * alt text it has on the page, for the image's own card), the first
 * <meta http-equiv=refresh> with a URL → Y (HTML "shared declarative refresh
 * steps"; any delay). rel=nofollow anchors are recorded like the others. Each
 * URL is stored once per type, at its first occurrence, and at most MAX_LINKS
 * per type; the anchor text of an <a> whose link is stored goes inside a
 * bracket naming that link's R index (so a repeated URL brackets the same
 * index). Dropped and uncapped links are counted into `problems`.
 *
 * Also: the first <title> outside <svg> (whitespace collapsed, at most
 * MAX_TITLE characters), the first <meta name=description> and
 * <meta name=keywords> (MAX_META characters each), <meta name=robots> and
 * <meta name=sherlock> (names case-insensitive; directives noindex, nofollow,
 * noarchive, none = noindex + nofollow; several metas add up), the first
 * <link rel=canonical href>, and <html lang> when it has the shape of a
 * BCP 47 tag.
 */

import { MAX_BRACKET_LINK, WORD_TYPE, type TextBuilder, type WordType } from '../common/bucket/doc-text.js';
import { canonicalOrNone, MAX_URL_LENGTH } from '../common/url.js';
import { scanHtml } from './html-scan.js';
import type { Link, LinkType, Meta, Robots } from '../common/bucket/doc-body.js';

/** Links stored per type; R indexes must fit a bracket. */
export const MAX_LINKS = 1000;
export const MAX_TITLE = 1024;
export const MAX_META = 4096;
/** Characters of an image's alt text kept with its `I` link. */
export const MAX_ALT = 1024;

if (MAX_LINKS > MAX_BRACKET_LINK + 1) throw new Error('MAX_LINKS exceeds what a link bracket can name');

export interface HtmlFields {
  title?: string;
  metas: Meta[];
  links: Link[];
  canonical?: string;
  robots: Robots;
  language?: string;
  problems: string[];
}

/** Elements whose attributes onOpen reads. */
const READ_ATTRIBUTES = new Set(['html', 'base', 'meta', 'link', 'a', 'area', 'frame', 'iframe', 'img']);
/** The types of `<link rel=alternate>` that name a feed. */
const FEED_TYPES = new Set(['application/rss+xml', 'application/atom+xml']);
/** Elements whose content is never read. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template']);
/** Elements that may stand in <head> without ending it. */
const HEAD_CONTENT = new Set(['title', 'meta', 'link', 'base', 'script', 'style', 'noscript', 'template']);
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'body', 'br', 'button', 'caption', 'center', 'dd', 'details', 'dialog',
  'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'frame', 'frameset', 'h1', 'h2', 'h3', 'h4',
  'h5', 'h6', 'header', 'hgroup', 'hr', 'html', 'iframe', 'legend', 'li', 'main', 'menu', 'nav', 'ol', 'option', 'p',
  'pre', 'section', 'select', 'summary', 'table', 'tbody', 'td', 'textarea', 'tfoot', 'th', 'thead', 'tr', 'ul',
]);
const TYPE_OF = new Map<string, WordType>([
  ['h1', WORD_TYPE.heading1],
  ['h2', WORD_TYPE.heading1],
  ['h3', WORD_TYPE.heading2],
  ['h4', WORD_TYPE.heading2],
  ['h5', WORD_TYPE.heading2],
  ['h6', WORD_TYPE.heading2],
  ['b', WORD_TYPE.emphasised],
  ['strong', WORD_TYPE.emphasised],
  ['em', WORD_TYPE.emphasised],
  ['i', WORD_TYPE.emphasised],
  ['small', WORD_TYPE.small],
  ['sub', WORD_TYPE.small],
  ['sup', WORD_TYPE.small],
]);
/** Which word type wins when elements of several are open. */
const TYPE_PRIORITY: readonly WordType[] = [WORD_TYPE.heading1, WORD_TYPE.heading2, WORD_TYPE.emphasised, WORD_TYPE.small];

/** HTML "shared declarative refresh steps": time, separator, optional `url=`, optionally quoted URL. */
const REFRESH = /^[\t\n\f\r ]*[\d.]+(?:[\t\n\f\r ;,][\t\n\f\r ]*[;,]?[\t\n\f\r ]*(?:url[\t\n\f\r ]*=[\t\n\f\r ]*)?(.*))?$/is;
/** The shape of a BCP 47 tag, lower case (office.ts checks declared languages with it too). */
export const LANGUAGE_TAG = /^[a-z]{1,8}(?:-[a-z0-9]{1,8})*$/;
const NOT_BLANK = /\S/;
const NO_ATTRIBUTES: ReadonlyMap<string, string> = new Map();
/** A URL scheme other than http(s) right at the start (the URL parser's scheme state: letter, then letters, digits, `+-.`). */
const OTHER_SCHEME = /^(?!https?:)[a-z][a-z\d+.-]*:/i;
const HASH = 0x23;

/** Whitespace collapsed and trimmed, cut to `max` UTF-16 units without splitting a surrogate pair. */
export function collapse(text: string, max: number): string {
  let out = text.replace(/\s+/g, ' ').trim();
  if (out.length > max) {
    const high = out.charCodeAt(max - 1);
    out = out.slice(0, high >= 0xd800 && high <= 0xdbff ? max - 1 : max).trimEnd();
  }
  return out;
}

/** The URL of a refresh declaration's content, or undefined when it names none. */
function refreshUrl(content: string): string | undefined {
  let url = REFRESH.exec(content)?.[1];
  if (url === undefined) return undefined;
  const quote = url[0];
  if (quote === '"' || quote === "'") {
    const close = url.indexOf(quote, 1);
    url = url.slice(1, close < 0 ? undefined : close);
  }
  return url.trim() === '' ? undefined : url;
}

/** A list separated by whitespace or commas (rel, robots directives), lower case. */
function tokens(value: string): string[] {
  return value.toLowerCase().split(/[\s,]+/);
}

/** Parses `html` (a whole decoded page at `url`), writing its text into `text`. */
export function parseHtml(html: string, url: string, text: TextBuilder): HtmlFields {
  const fields: HtmlFields = { metas: [], links: [], robots: { noindex: false, nofollow: false, noarchive: false }, problems: [] };
  const stored: Record<LinkType, Map<string, number>> = { R: new Map(), F: new Map(), I: new Map(), Y: new Map() };
  /** The `I` links by their index, to give each its alt text. */
  const images: Link[] = [];
  let base = url;
  let baseSeen = false;
  let refreshSeen = false;
  let htmlSeen = false;
  const dropped = { bad: 0, overCap: 0, firstBad: '' };

  let skipDepth = 0;
  let svgDepth = 0;
  let inHead = false;
  /** The head is over (closed, or ended by body content): a later <head> tag is stray and ignored, as browsers do. */
  let headDone = false;
  let titleParts: string[] | undefined;
  let titleLength = 0;
  /** Open elements per word type (indexed by type). */
  const typeDepth = [0, 0, 0, 0, 0, 0];
  let anchorDepth = 0;
  /** The anchorDepth of the <a> whose bracket is open, 0 for none. */
  let bracketOwner = 0;

  const leaveHead = (): void => {
    inHead = false;
    headDone = true;
  };

  const currentType = (): WordType => TYPE_PRIORITY.find((type) => typeDepth[type]! > 0) ?? WORD_TYPE.text;

  /**
   * Links resolved against the current base, null for dropped ones: a page
   * repeats a fifth of its links (menus, neighbours), and a link to a
   * fragment of it is the page itself, whatever the fragment.
   */
  const resolved = new Map<string, string | null>();
  let self: string | null | undefined;
  const canonical = (raw: string): string | null => canonicalOrNone(raw, base) ?? null;
  const resolveOnce = (raw: string): string | null => {
    if (raw.charCodeAt(0) === HASH && raw.length <= MAX_URL_LENGTH) return (self ??= canonical('#'));
    // Refused by canonicalUrl all the same, but without the cost of its exception (mailto: and the like).
    if (OTHER_SCHEME.test(raw)) return null;
    return canonical(raw);
  };
  const resolve = (raw: string): string | undefined => {
    let target = resolved.get(raw);
    if (target === undefined) {
      target = resolveOnce(raw);
      resolved.set(raw, target);
    }
    if (target !== null) return target;
    if (dropped.bad++ === 0) dropped.firstBad = raw.slice(0, 80);
    return undefined;
  };

  /** Stores a link once per URL and type; returns its index among the links of its type, if stored. */
  const addLink = (type: LinkType, raw: string): number | undefined => {
    const target = resolve(raw);
    if (target === undefined) return undefined;
    const seen = stored[type];
    const known = seen.get(target);
    if (known !== undefined) return known;
    if (seen.size >= MAX_LINKS) {
      dropped.overCap++;
      return undefined;
    }
    seen.set(target, seen.size);
    const link: Link = { type, url: target };
    fields.links.push(link);
    if (type === 'I') images.push(link);
    return seen.size - 1;
  };

  const onMeta = (attribs: ReadonlyMap<string, string>): void => {
    const content = attribs.get('content');
    if (content === undefined) return;
    const name = attribs.get('name')?.trim().toLowerCase();
    if (name === 'robots' || name === 'sherlock') {
      for (const directive of tokens(content)) {
        if (directive === 'noindex' || directive === 'none') fields.robots.noindex = true;
        if (directive === 'nofollow' || directive === 'none') fields.robots.nofollow = true;
        if (directive === 'noarchive') fields.robots.noarchive = true;
      }
    } else if (name === 'description' || name === 'keywords') {
      const type = name === 'description' ? 'meta' : 'keywords';
      const value = collapse(content, MAX_META);
      if (value !== '' && !fields.metas.some((meta) => meta.type === type)) fields.metas.push({ type, text: value });
    }
    if (!refreshSeen && attribs.get('http-equiv')?.trim().toLowerCase() === 'refresh') {
      const target = refreshUrl(content);
      if (target !== undefined) {
        refreshSeen = true;
        addLink('Y', target);
      }
    }
  };

  const onOpen = (name: string, attributes: ReadonlyMap<string, string> | undefined): void => {
    if (SKIPPED.has(name)) skipDepth++;
    if (skipDepth > 0) return;
    if (inHead && !HEAD_CONTENT.has(name)) leaveHead();
    // The tags of READ_ATTRIBUTES come with theirs; no other case reads any.
    const attribs = attributes ?? NO_ATTRIBUTES;
    switch (name) {
      case 'html': {
        const lang = attribs.get('lang')?.trim().toLowerCase().replaceAll('_', '-');
        if (!htmlSeen && lang !== undefined && lang !== '') {
          if (LANGUAGE_TAG.test(lang)) fields.language = lang;
          else fields.problems.push(`<html lang=${JSON.stringify(lang.slice(0, 40))}> is not a language tag; ignored`);
        }
        htmlSeen = true;
        break;
      }
      case 'head':
        inHead = !headDone;
        break;
      case 'title':
        if (fields.title === undefined && svgDepth === 0) titleParts = [];
        break;
      case 'svg':
        svgDepth++;
        break;
      case 'base': {
        const href = attribs.get('href');
        if (!baseSeen && href !== undefined) {
          baseSeen = true;
          const newBase = canonicalOrNone(href, url);
          if (newBase === undefined) {
            fields.problems.push(`<base href=${JSON.stringify(href.slice(0, 80))}> does not resolve to an http(s) URL; ignored`);
          } else {
            base = newBase;
            resolved.clear();
            self = undefined;
          }
        }
        break;
      }
      case 'meta':
        onMeta(attribs);
        break;
      case 'link': {
        const href = attribs.get('href');
        const rel = tokens(attribs.get('rel') ?? '');
        if (fields.canonical === undefined && href !== undefined && rel.includes('canonical')) {
          const canonical = resolve(href);
          if (canonical !== undefined) fields.canonical = canonical;
        }
        // A page's own feed (feed autodiscovery): followed as a link, so its entries are found (feed.ts).
        if (href !== undefined && rel.includes('alternate') && FEED_TYPES.has((attribs.get('type') ?? '').trim().toLowerCase())) addLink('R', href);
        break;
      }
      case 'a': {
        anchorDepth++;
        const href = attribs.get('href');
        const n = href === undefined ? undefined : addLink('R', href);
        if (n !== undefined) {
          text.openLink(n);
          bracketOwner = anchorDepth;
        }
        break;
      }
      case 'area': {
        const href = attribs.get('href');
        if (href !== undefined) addLink('R', href);
        break;
      }
      case 'frame':
      case 'iframe': {
        const src = attribs.get('src');
        if (src !== undefined) addLink('F', src);
        break;
      }
      case 'img': {
        const src = attribs.get('src');
        const alt = attribs.get('alt');
        const n = src === undefined ? undefined : addLink('I', src);
        const image = n === undefined ? undefined : images[n]!;
        if (image !== undefined && image.text === undefined && alt !== undefined) {
          const collapsed = alt.replace(/\s+/g, ' ').trim().slice(0, MAX_ALT).trim();
          if (collapsed !== '') image.text = collapsed;
        }
        if (alt !== undefined) {
          text.setType(WORD_TYPE.alt);
          text.append(` ${alt} `); // alt text is words of its own, not glued to its neighbours
          text.setType(currentType());
        }
        break;
      }
    }
    if (BLOCKS.has(name)) text.breakBlock();
    const type = TYPE_OF.get(name);
    if (type !== undefined) {
      typeDepth[type]!++;
      text.setType(currentType());
    }
  };

  // The scanner closes every element it opened (implied closes included), so depths balance.
  const onClose = (name: string): void => {
    if (skipDepth > 0) {
      if (SKIPPED.has(name)) skipDepth--;
      return;
    }
    switch (name) {
      case 'head':
        leaveHead();
        break;
      case 'title':
        if (titleParts !== undefined) {
          const title = collapse(titleParts.join(''), MAX_TITLE);
          if (title !== '') fields.title = title;
          titleParts = undefined;
        }
        break;
      case 'svg':
        svgDepth--;
        break;
      case 'a':
        if (anchorDepth > 0) {
          if (bracketOwner === anchorDepth) {
            text.closeLink();
            bracketOwner = 0;
          }
          anchorDepth--;
        }
        break;
    }
    if (BLOCKS.has(name)) text.breakBlock();
    const type = TYPE_OF.get(name);
    if (type !== undefined) {
      typeDepth[type]!--;
      text.setType(currentType());
    }
  };

  const onText = (data: string): void => {
    if (skipDepth > 0) return;
    if (titleParts !== undefined) {
      // Whitespace is collapsed at the end; keep no more than the cap could use.
      if (titleLength < 4 * MAX_TITLE) {
        titleParts.push(data);
        titleLength += data.length;
      }
      return;
    }
    if (inHead) {
      if (!NOT_BLANK.test(data)) return;
      leaveHead();
    }
    text.append(data);
  };

  scanHtml(
    html,
    {
      open: onOpen,
      close: onClose,
      text: onText,
      get muted() {
        return skipDepth > 0;
      },
    },
    READ_ATTRIBUTES,
  );

  if (dropped.bad > 0) {
    fields.problems.push(`${dropped.bad} link(s) dropped: not http(s) or unparseable (first ${JSON.stringify(dropped.firstBad)})`);
  }
  if (dropped.overCap > 0) fields.problems.push(`${dropped.overCap} link(s) over the cap of ${MAX_LINKS} per type not stored`);
  return fields;
}
