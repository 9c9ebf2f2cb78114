/**
 * A document as bucket body attributes: what the gatherer writes after
 * parsing a page and what the shepherd (links) and the indexer (title, text,
 * metas) read back. DESIGN §4 "Store"; sherlock-original §2 "Attributes";
 * every letter is listed in docs/buckets.md.
 *
 * Body attributes written by documentBody, in this order:
 *   M  the title, then each meta: an optional weight digit '0'–'3', one byte
 *      0x90 + meta type, the UTF-8 text. Meta types: 0 title, 1 keywords,
 *      2 meta (description), 3 urlword, 4 file, 5 ext (the last three come
 *      from the indexer, not the gatherer)
 *   X  the text (common/bucket/doc-text.ts), left out when empty
 *   R F I Y  the links (anchor, frame, image, redirect or refresh), canonical
 *      URL strings, in document order; the n-th `R` is link n of the brackets
 *      in `X`; an `I` may go on with a space and the image's alt text (a
 *      canonical URL never holds a space: the URL parser encodes it)
 *   c  the canonical URL from <link rel=canonical>
 *   p  one attribute per robots directive set: "noindex", "nofollow", "noarchive"
 *   l  the language from <html lang>
 *   g  the document's language as decided from its text, the declared one
 *      a hint (common/language/detect.ts): an ISO 639-1 code or "und"
 *   n  a PDF's page count, decimal
 * parseBody reads them back: documentBody ∘ parseBody is the identity on a
 * DocumentBody whose metas hold no title (the title has its own field).
 */

import { BucketObject } from './bucket.js';
import { SherlockError } from '../errors.js';

export type LinkType = 'R' | 'F' | 'I' | 'Y';

export interface Link {
  type: LinkType;
  /** Canonical (common/url.ts). */
  url: string;
  /** An image's alt text (type `I` only), whitespace collapsed, not empty. */
  text?: string;
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
  /** ISO 639-1 code or "und": the language decided from the text (`g`). */
  detectedLanguage?: string;
  /** A PDF's pages (`n`). */
  pages?: number;
}

export const ROBOTS_DIRECTIVES = ['noindex', 'nofollow', 'noarchive'] as const;
const META_TYPE_BYTE = 0x90;
const WEIGHT_DIGIT_0 = 0x30;

export function noRobots(): Robots {
  return { noindex: false, nofollow: false, noarchive: false };
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
  for (const link of doc.links) body.add(link.type, link.text === undefined ? link.url : `${link.url} ${link.text}`);
  if (doc.canonical !== undefined) body.add('c', doc.canonical);
  for (const directive of ROBOTS_DIRECTIVES) if (doc.robots[directive]) body.add('p', directive);
  if (doc.language !== undefined) body.add('l', doc.language);
  if (doc.detectedLanguage !== undefined) body.add('g', doc.detectedLanguage);
  if (doc.pages !== undefined) body.add('n', String(doc.pages));
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
 * Throws SHERLOCK_CORRUPT_BUCKET for a malformed `M`, `p` or `n`.
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
      case 'Y':
        doc.links.push({ type: item.name, url: value.toString('utf8') });
        break;
      case 'I': {
        const image = value.toString('utf8');
        const space = image.indexOf(' ');
        doc.links.push(space < 0 ? { type: 'I', url: image } : { type: 'I', url: image.slice(0, space), text: image.slice(space + 1) });
        break;
      }
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
      case 'g':
        doc.detectedLanguage = value.toString('utf8');
        break;
      case 'n': {
        const pages = value.toString('latin1');
        if (!/^\d{1,9}$/.test(pages)) throw corruptBody(`page count n is not a whole number: ${JSON.stringify(pages.slice(0, 20))}`);
        doc.pages = Number(pages);
        break;
      }
    }
  }
  return doc;
}
