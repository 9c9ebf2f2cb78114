/**
 * The gatherer's document parsing: a fetched, content-decoded body becomes a
 * ParsedDocument (title, text, metas, links, robots directives), and that
 * becomes the body attributes of its bucket (DESIGN §4 "Content";
 * sherlock-original §2 "Attributes").
 *
 * What is parsed, by the Content-Type's MIME type (lower case, no parameters):
 *   text/html, application/xhtml+xml   HTML (parse-html.ts)
 *   text/plain                         text; a blank line is a break
 *   none, body sniffs as HTML          HTML (MIME Sniffing §7.1, the HTML
 *                                      patterns of "identifying a resource
 *                                      with an unknown MIME type")
 *   anything else                      'other': stored, not parsed
 * The charset is chosen and the body decoded by charset.ts.
 *
 * Body attributes written by documentBody, in this order:
 *   M  the title, then each meta: an optional weight digit '0'–'3', one byte
 *      0x90 + meta type, the UTF-8 text. Meta types: 0 title, 1 keywords,
 *      2 meta (description), 3 urlword, 4 file, 5 ext (the last three come
 *      from the indexer, not from here)
 *   X  the text (common/doc-text.ts), left out when empty
 *   R F I Y  the links (anchor, frame, image, refresh), canonical URL strings,
 *      in document order; the n-th `R` is link n of the brackets in `X`
 *   c  the canonical URL from <link rel=canonical>
 *   p  one attribute per robots directive set: "noindex", "nofollow", "noarchive"
 *   l  the language from <html lang>
 * parseBody reads them back: documentBody ∘ parseBody is the identity on a
 * DocumentBody whose metas hold no title (the title has its own field).
 *
 * The robots directives are recorded, not applied: the links of a nofollow
 * page are still stored and the text of a noindex page still written; the
 * shepherd and the indexer honour `p`.
 */

import { BucketObject } from '../common/bucket.js';
import { TextBuilder } from '../common/doc-text.js';
import { SherlockError } from '../common/errors.js';
import { chooseCharset, decodeText, type TextKind } from './charset.js';
import { parseHtml, type HtmlFields } from './parse-html.js';

export type LinkType = 'R' | 'F' | 'I' | 'Y';

export interface Link {
  type: LinkType;
  /** Canonical (common/url.ts). */
  url: string;
}

/** Meta types by their number in the type byte. */
export const META_TYPES = ['title', 'keywords', 'meta', 'urlword', 'file', 'ext'] as const;
export type MetaType = (typeof META_TYPES)[number];

export interface Meta {
  type: MetaType;
  weight?: 0 | 1 | 2 | 3;
  text: string;
}

export interface Robots {
  noindex: boolean;
  nofollow: boolean;
  noarchive: boolean;
}

/** What a bucket body holds of a document. Absent fields are left out, never undefined. */
export interface DocumentBody {
  title?: string;
  /** `X` text, empty when there is none. */
  text: Buffer;
  /** Not the title. */
  metas: Meta[];
  links: Link[];
  canonical?: string;
  robots: Robots;
  /** BCP 47 shape, lower case. */
  language?: string;
}

export interface ParsedDocument extends DocumentBody {
  kind: 'html' | 'text' | 'other';
  /** Encoding Standard name of the encoding the body was decoded from; absent for 'other'. */
  charset?: string;
  /** What was ignored, dropped or cut, one sentence each (for the log). */
  problems: string[];
}

export interface ParseInput {
  /** Canonical URL of the document: the base of its relative links. */
  url: string;
  contentType?: string;
  /** The Content-Type header's charset parameter. */
  charsetParam?: string;
  /** Already content-decoded (content-decoding.ts). */
  body: Buffer;
}

/** Cap on the `X` text of one document. */
export const MAX_TEXT_BYTES = 2 * 1024 * 1024;

const ROBOTS_DIRECTIVES = ['noindex', 'nofollow', 'noarchive'] as const;
const META_TYPE_BYTE = 0x90;
const WEIGHT_DIGIT_0 = 0x30;

/** MIME Sniffing §7.1: HTML patterns, each followed by a tag-terminating byte (space or '>'). */
const HTML_PATTERNS = [
  '<!doctype html',
  '<html',
  '<head',
  '<script',
  '<iframe',
  '<h1',
  '<div',
  '<font',
  '<table',
  '<a',
  '<style',
  '<title',
  '<b',
  '<body',
  '<br',
  '<p',
  '<!--',
].map((pattern) => Buffer.from(pattern, 'latin1'));

function noRobots(): Robots {
  return { noindex: false, nofollow: false, noarchive: false };
}

/** True when a body of unknown type starts, after a UTF-8 BOM and whitespace, like HTML. */
export function sniffsAsHtml(body: Buffer): boolean {
  let i = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  // MIME Sniffing's whitespace bytes: HT, LF, FF, CR, space.
  while (i < body.length && (body[i] === 0x09 || body[i] === 0x0a || body[i] === 0x0c || body[i] === 0x0d || body[i] === 0x20)) i++;
  return HTML_PATTERNS.some((pattern) => {
    const end = i + pattern.length;
    if (end >= body.length) return false;
    for (let k = 0; k < pattern.length; k++) {
      if ((body[i + k]! | (pattern[k]! >= 0x61 ? 0x20 : 0)) !== pattern[k]) return false;
    }
    return body[end] === 0x20 || body[end] === 0x3e;
  });
}

function textKind(contentType: string | undefined, body: Buffer): TextKind | undefined {
  switch (contentType) {
    case 'text/html':
      return 'html';
    case 'application/xhtml+xml':
      return 'xhtml';
    case 'text/plain':
      return 'text';
    case undefined:
      return sniffsAsHtml(body) ? 'html' : undefined;
    default:
      return undefined;
  }
}

/** A blank line (whitespace only between two line feeds) separates paragraphs. */
const BLANK_LINE = /\n[^\S\n]*\n/;

function plainTextBody(decoded: string, text: TextBuilder): void {
  for (const paragraph of decoded.split(BLANK_LINE)) {
    text.breakBlock();
    text.append(paragraph);
    if (text.cut) return;
  }
}

/** Parses a fetched body; never throws on bad content, which ends up in `problems`. */
export function parseDocument(input: ParseInput): ParsedDocument {
  const kind = textKind(input.contentType, input.body);
  if (kind === undefined) return { kind: 'other', text: Buffer.alloc(0), metas: [], links: [], robots: noRobots(), problems: [] };
  const charset = chooseCharset(input.body, kind, input.charsetParam);
  const decoded = decodeText(input.body, charset.encoding);
  const text = new TextBuilder(MAX_TEXT_BYTES);
  let fields: HtmlFields;
  if (kind === 'text') {
    plainTextBody(decoded, text);
    fields = { metas: [], links: [], robots: noRobots(), problems: [] };
  } else {
    fields = parseHtml(decoded, input.url, text);
  }
  const problems = [...charset.problems, ...fields.problems];
  if (text.cut) problems.push(`text cut at ${MAX_TEXT_BYTES} bytes`);
  return { ...fields, kind: kind === 'text' ? 'text' : 'html', charset: charset.encoding, text: text.finish(), problems };
}

function metaValue(meta: Meta): Buffer {
  const type = META_TYPES.indexOf(meta.type);
  const head = meta.weight === undefined ? [META_TYPE_BYTE + type] : [WEIGHT_DIGIT_0 + meta.weight, META_TYPE_BYTE + type];
  return Buffer.concat([Buffer.from(head), Buffer.from(meta.text, 'utf8')]);
}

/** The bucket body attributes of a document, in the order of the module comment. */
export function documentBody(doc: DocumentBody): BucketObject {
  const body = new BucketObject();
  if (doc.title !== undefined) body.add('M', metaValue({ type: 'title', text: doc.title }));
  for (const meta of doc.metas) {
    if (meta.type === 'title') throw new RangeError('a title goes in DocumentBody.title, not in metas');
    body.add('M', metaValue(meta));
  }
  if (doc.text.length > 0) body.add('X', doc.text);
  for (const link of doc.links) body.add(link.type, link.url);
  if (doc.canonical !== undefined) body.add('c', doc.canonical);
  for (const directive of ROBOTS_DIRECTIVES) if (doc.robots[directive]) body.add('p', directive);
  if (doc.language !== undefined) body.add('l', doc.language);
  return body;
}

function corruptBody(message: string): SherlockError {
  return new SherlockError('SHERLOCK_CORRUPT_BUCKET', `document body: ${message}`);
}

function parseMeta(value: Buffer): Meta {
  let i = 0;
  let weight: Meta['weight'];
  const first = value[0];
  if (first !== undefined && first >= WEIGHT_DIGIT_0 && first <= WEIGHT_DIGIT_0 + 3) {
    weight = (first - WEIGHT_DIGIT_0) as Meta['weight'];
    i = 1;
  }
  const type = META_TYPES[(value[i] ?? 0) - META_TYPE_BYTE];
  if (type === undefined) throw corruptBody(`M attribute ${JSON.stringify(value.subarray(0, 8).toString('latin1'))} has no meta type byte`);
  const meta: Meta = { type, text: value.toString('utf8', i + 1) };
  if (weight !== undefined) meta.weight = weight;
  return meta;
}

/**
 * The document fields of a bucket body, as documentBody wrote them; other
 * attributes are skipped. The first unweighted title meta is the title.
 * Throws SHERLOCK_CORRUPT_BUCKET for a malformed `M` or `p`.
 */
export function parseBody(body: BucketObject): DocumentBody {
  const doc: DocumentBody = { text: Buffer.alloc(0), metas: [], links: [], robots: noRobots() };
  for (const item of body.items) {
    if (item.value === undefined) continue;
    const value = item.value;
    switch (item.name) {
      case 'M': {
        const meta = parseMeta(value);
        if (meta.type === 'title' && meta.weight === undefined && doc.title === undefined) doc.title = meta.text;
        else doc.metas.push(meta);
        break;
      }
      case 'X':
        doc.text = value;
        break;
      case 'R':
      case 'F':
      case 'I':
      case 'Y':
        doc.links.push({ type: item.name, url: value.toString('utf8') });
        break;
      case 'c':
        doc.canonical = value.toString('utf8');
        break;
      case 'p': {
        const directive = ROBOTS_DIRECTIVES.find((name) => value.equals(Buffer.from(name)));
        if (directive === undefined) throw corruptBody(`unknown robots directive ${JSON.stringify(value.subarray(0, 20).toString('latin1'))}`);
        doc.robots[directive] = true;
        break;
      }
      case 'l':
        doc.language = value.toString('utf8');
        break;
    }
  }
  return doc;
}
