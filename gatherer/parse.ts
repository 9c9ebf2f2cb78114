/**
 * The gatherer's document parsing: a fetched, content-decoded body becomes a
 * ParsedDocument (title, text, metas, links, robots directives), and that
 * becomes the body attributes of its bucket (DESIGN §4 "Content";
 * sherlock-original §2 "Attributes").
 *
 * What is parsed, by the Content-Type's MIME type (lower case, no parameters):
 *   text/html, application/xhtml+xml   HTML (parse-html.ts)
 *   text/plain                         text; a blank line is a break
 *   text/csv, text/tab-separated-values text; each line (a row) a block
 *   application/xml, text/xml          a sitemap (sitemap.ts) when its root
 *                                      is <urlset> or <sitemapindex>: its URLs
 *                                      become R links; a feed (feed.ts) when
 *                                      it is <rss>, <rdf:RDF> or <feed>: its
 *                                      entries text, their links R links;
 *                                      other XML: its character data as text
 *                                      (xml-text.ts)
 *   application/rss+xml, atom+xml,     the same
 *   rdf+xml
 *   application/pdf                    PDF (pdf.ts): text, title, links
 *   OOXML, OpenDocument (office.ts     docx, xlsx, pptx, odt, ods, odp: text,
 *   OFFICE_TYPES)                      title, metas, links
 *                                      (these two asynchronous, so in
 *                                      parseDocument() only)
 *   none, body sniffs as HTML          HTML (MIME Sniffing §7.1, the HTML
 *                                      patterns of "identifying a resource
 *                                      with an unknown MIME type")
 *   none, body starts with "%PDF-"     PDF (the same section's pattern)
 *   anything else                      'other': stored, not parsed
 * The charset is chosen and the body decoded by charset.ts.
 *
 * A PDF or office file that cannot be read (encrypted, broken, a zip bomb)
 * is `refused`: the gatherer records it with the outcome that says why
 * (outcome.ts: unparseable, too_large).
 *
 * The document becomes bucket body attributes through common/bucket/doc-body.ts
 * (documentBody), where the attribute layout is described.
 *
 * The robots directives are recorded, not applied: the links of a nofollow
 * page are still stored and the text of a noindex page still written; the
 * shepherd and the indexer honour `p`.
 */

import { noRobots, type DocumentBody } from '../common/bucket/doc-body.js';
import { TextBuilder } from '../common/bucket/doc-text.js';
import { detectLanguage } from '../common/language/detect.js';
import { chooseCharset, decodeText, type TextKind } from './charset.js';
import { parseHtml, type HtmlFields } from './parse-html.js';
import { parseFeed } from './feed.js';
import { OFFICE_TYPES } from '../common/index/cardinfo.js';
import { isPdf } from './document-type.js';
import { OfficeRefused, parseOffice } from './office.js';
import { parsePdf, PdfRefused } from './pdf.js';
import { parseSitemap } from './sitemap.js';
import { parseXmlText } from './xml-text.js';

export interface ParsedDocument extends DocumentBody {
  kind: 'html' | 'text' | 'sitemap' | 'feed' | 'xml' | 'pdf' | 'office' | 'other';
  /** Encoding Standard name of the encoding the body was decoded from; absent for 'other' and binary formats. */
  charset?: string;
  /** What was ignored, dropped or cut, one sentence each (for the log). */
  problems: string[];
  /** Why a body of a type that is parsed could not be (kind 'other' then). */
  refused?: Refusal;
}

/** A document the gatherer could not parse, and the outcome it is recorded with (outcome.ts). */
export interface Refusal {
  outcome: 'unparseable' | 'too_large';
  message: string;
}

export interface ParseInput {
  /** Canonical URL of the document: the base of its relative links. */
  url: string;
  contentType?: string;
  /** The Content-Type header's charset parameter. */
  charsetParam?: string;
  /** Already content-decoded (content-decoding.ts). */
  body: Buffer;
  /** The Content-Language header: a hint of the language where the page declares none. */
  contentLanguage?: string;
}

/** Cap on the `X` text of one document. */
export const MAX_TEXT_BYTES = 2 * 1024 * 1024;


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
    case 'text/csv':
    case 'text/tab-separated-values':
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

/** A table's rows (CSV, TSV): each a block, so that no phrase joins the end of one row to the start of the next. */
function rowsBody(decoded: string, text: TextBuilder): void {
  for (const row of decoded.split('\n')) {
    text.breakBlock();
    text.append(row);
    if (text.cut) return;
  }
}

const XML_TYPES = new Set(['application/xml', 'text/xml', 'application/rss+xml', 'application/atom+xml', 'application/rdf+xml']);

function unparsed(refused?: Refusal): ParsedDocument {
  return { kind: 'other', text: Buffer.alloc(0), metas: [], links: [], robots: noRobots(), problems: [], ...(refused === undefined ? {} : { refused }) };
}

/** A sitemap, a feed, or 'other' for any other XML. XML defaults to UTF-8, as XHTML does. */
function parseXml(input: ParseInput): ParsedDocument {
  const charset = chooseCharset(input.body, 'xhtml', input.charsetParam);
  const decoded = decodeText(input.body, charset.encoding);
  const sitemap = parseSitemap(decoded, input.url);
  if (sitemap !== undefined) {
    return { kind: 'sitemap', charset: charset.encoding, text: Buffer.alloc(0), metas: [], links: sitemap.links, robots: noRobots(), problems: [...charset.problems, ...sitemap.problems] };
  }
  const text = new TextBuilder(MAX_TEXT_BYTES);
  const feed = parseFeed(decoded, input.url, text);
  if (feed !== undefined) return withText('feed', { ...feed, metas: [], robots: noRobots() }, text, charset, input);
  const problems = parseXmlText(decoded, text);
  return withText('xml', { metas: [], links: [], robots: noRobots(), problems }, text, charset, input);
}

/**
 * Parses a fetched body of any type; never throws on bad content, which ends
 * up in `problems` or `refused`. `maxDecodedSize` (gatherer.max_decoded_size)
 * is what an office file's parts may inflate to, all together.
 */
export async function parseDocument(input: ParseInput, maxDecodedSize: number): Promise<ParsedDocument> {
  if (isPdf(input.contentType, input.body)) return parsePdfDocument(input);
  if (input.contentType !== undefined && OFFICE_TYPES.has(input.contentType)) return parseOfficeDocument(input, input.contentType, maxDecodedSize);
  return parseTextDocument(input);
}

async function parsePdfDocument(input: ParseInput): Promise<ParsedDocument> {
  const text = new TextBuilder(MAX_TEXT_BYTES);
  try {
    const { language, ...fields } = await parsePdf(input.body, input.url, text);
    return withText('pdf', { ...fields, ...(language === undefined ? {} : { language }), robots: noRobots() }, text, undefined, input);
  } catch (err) {
    if (err instanceof PdfRefused) return unparsed({ outcome: 'unparseable', message: err.message });
    throw err;
  }
}

async function parseOfficeDocument(input: ParseInput, mime: string, maxDecodedSize: number): Promise<ParsedDocument> {
  const text = new TextBuilder(MAX_TEXT_BYTES);
  try {
    const fields = await parseOffice(input.body, mime, input.url, text, maxDecodedSize);
    return withText('office', { ...fields, robots: noRobots() }, text, undefined, input);
  } catch (err) {
    if (err instanceof OfficeRefused) return unparsed({ outcome: err.tooLarge ? 'too_large' : 'unparseable', message: err.message });
    throw err;
  }
}

/** Parses a body of the types read synchronously: markup and text (all but PDF). */
export function parseTextDocument(input: ParseInput): ParsedDocument {
  if (input.contentType !== undefined && XML_TYPES.has(input.contentType)) return parseXml(input);
  const kind = textKind(input.contentType, input.body);
  if (kind === undefined) return unparsed();
  const charset = chooseCharset(input.body, kind, input.charsetParam);
  const decoded = decodeText(input.body, charset.encoding);
  const text = new TextBuilder(MAX_TEXT_BYTES);
  let fields: HtmlFields;
  if (kind === 'text') {
    if (input.contentType === 'text/plain') plainTextBody(decoded, text);
    else rowsBody(decoded, text);
    fields = { metas: [], links: [], robots: noRobots(), problems: [] };
  } else {
    fields = parseHtml(decoded, input.url, text);
  }
  return withText(kind === 'text' ? 'text' : 'html', fields, text, charset, input);
}

/** A document with text: its fields, the text finished, its language detected from the title and text. */
function withText(kind: 'html' | 'text' | 'feed' | 'xml' | 'pdf' | 'office', fields: HtmlFields, text: TextBuilder, charset: { encoding: string; problems: string[] } | undefined, input: ParseInput): ParsedDocument {
  const problems = [...(charset?.problems ?? []), ...fields.problems];
  if (text.cut) problems.push(`text cut at ${MAX_TEXT_BYTES} bytes`);
  const samples = text.samples();
  if (fields.title !== undefined) samples[0] = `${fields.title}. ${samples[0]}`;
  const detectedLanguage = detectLanguage(samples, { declared: fields.language ?? input.contentLanguage }).lang;
  return { ...fields, kind, ...(charset === undefined ? {} : { charset: charset.encoding }), text: text.finish(), detectedLanguage, problems };
}
