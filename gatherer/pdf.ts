/**
 * PDF documents (issue 30), read by Mozilla's pdf.js (pdfjs-dist's legacy
 * build, the one made for Node; docs/decisions.md "Which PDF library"):
 *
 *  - text page by page, in the order pdf.js gives a page's text items (the
 *    content stream's, which is reading order in the PDFs that tools write);
 *    a new line joins the previous one with a space, and is a new block
 *    (paragraph) when the gap above it is more than PARAGRAPH_GAP lines, when
 *    it goes back up the page (a new column) or its font size changes; every
 *    page starts a block;
 *  - headings from font size: text set at least HEADING1 × the page's body
 *    size (the size most of its characters have) is heading 1, at least
 *    HEADING2 × heading 2;
 *  - the title: the Info dictionary's /Title, else XMP's dc:title, else the
 *    largest heading-sized text of the first page;
 *  - /Subject as the description meta, /Keywords as keywords, the catalog's
 *    /Lang as the declared language;
 *  - links: URI link annotations, each an R link, the text inside its
 *    rectangle its anchor text (bracketed); a relative URI is resolved against
 *    the PDF's URL.
 *
 * An encrypted PDF that needs a password, or one pdf.js cannot read at all,
 * is refused (PdfRefused); a page that fails is left out and named in the
 * problems. pdf.js decodes no images and runs no scripts here (eval off, no
 * font faces). Time and memory caps are the caller's: parse-pool.ts runs
 * PDFs in workers it can stop.
 */

import { Module, createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Link, Meta } from '../common/bucket/doc-body.js';
import { MAX_BRACKET_LINK, MAX_PAGE, WORD_TYPE, type TextBuilder, type WordType } from '../common/bucket/doc-text.js';
import { LinkList } from './link-list.js';
import { LANGUAGE_TAG, MAX_LINKS, MAX_META, MAX_TITLE, collapse } from './parse-html.js';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
type PdfPage = Awaited<ReturnType<Awaited<ReturnType<PdfJs['getDocument']>['promise']>['getPage']>>;

export interface PdfFields {
  title?: string;
  metas: Meta[];
  links: Link[];
  /** The catalog's /Lang, lower case. */
  language?: string;
  pages: number;
  problems: string[];
}

/** A PDF that cannot be read: encrypted with a password, or not a PDF pdf.js can open. */
export class PdfRefused extends Error {}

/** A line gap above this many times the font size starts a paragraph. */
const PARAGRAPH_GAP = 1.6;
/** Font size ratios to the page's body size that make a heading. */
const HEADING1 = 1.5;
const HEADING2 = 1.2;
/** A font size change of more than this ratio between two lines starts a paragraph. */
const SIZE_CHANGE = 1.15;

let loaded: Promise<PdfJs> | undefined;

/**
 * pdf.js, loaded on the first PDF. When it loads in Node it requires its
 * optional native canvas (@napi-rs/canvas, a Skia build) for DOMMatrix,
 * ImageData and Path2D, which only rendering needs; sherlock never renders,
 * so the canvas's place in the require cache is taken, before pdf.js asks,
 * by a module giving a pure-JavaScript DOMMatrix (one Type3 glyph outline
 * uses it while reading text) and two classes that refuse to be made. No
 * native code loads. Where npm did not install the canvas (a platform
 * without its prebuilt binary), pdf.js prints a warning once and works the
 * same.
 */
export function pdfjs(): Promise<PdfJs> {
  return (loaded ??= (async () => {
    const require = createRequire(import.meta.url);
    const fromPdfJs = createRequire(require.resolve('pdfjs-dist/legacy/build/pdf.mjs'));
    let canvas: string | undefined;
    try {
      canvas = fromPdfJs.resolve('@napi-rs/canvas');
    } catch {
      canvas = undefined;
    }
    if (canvas !== undefined && require.cache[canvas] === undefined) {
      const stand = new Module(canvas);
      stand.filename = canvas;
      stand.loaded = true;
      stand.exports = { DOMMatrix: require('@thednp/dommatrix') as unknown, ImageData: NotRendering, Path2D: NotRendering };
      require.cache[canvas] = stand;
    }
    return import('pdfjs-dist/legacy/build/pdf.mjs');
  })());
}

class NotRendering {
  constructor() {
    throw new Error('sherlock reads PDF text only; it does not render');
  }
}

let urls: { cMapUrl: string; standardFontDataUrl: string } | undefined;

/** Where pdf.js's CMaps and standard fonts are (the text of CJK and base-14 fonts needs them), found once. */
function dataUrls(): { cMapUrl: string; standardFontDataUrl: string } {
  if (urls === undefined) {
    const root = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
    urls = { cMapUrl: join(root, 'cmaps') + '/', standardFontDataUrl: join(root, 'standard_fonts') + '/' };
  }
  return urls;
}

/** How sherlock opens a PDF with pdf.js (bench/peers/pdfjs-floor.ts opens the same way). */
export function openPdf(lib: PdfJs, body: Uint8Array): ReturnType<PdfJs['getDocument']> {
  return lib.getDocument({
    // pdf.js takes the bytes over; a copy leaves the caller's buffer whole.
    data: new Uint8Array(body),
    ...dataUrls(),
    cMapPacked: true,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    isOffscreenCanvasSupported: false,
    verbosity: lib.VerbosityLevel.ERRORS,
  });
}

/** The fields of a PDF, its text written into `text`. */
export async function parsePdf(body: Uint8Array, url: string, text: TextBuilder): Promise<PdfFields> {
  const lib = await pdfjs();
  const task = openPdf(lib, body);
  let doc;
  try {
    doc = await task.promise;
  } catch (err) {
    await task.destroy();
    const name = err instanceof Error ? err.name : '';
    if (name === 'PasswordException') throw new PdfRefused('encrypted PDF: it needs a password');
    throw new PdfRefused(`not a readable PDF: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    const fields: PdfFields = { metas: [], links: [], pages: doc.numPages, problems: [] };
    const links = new LinkList(url, MAX_LINKS, 'PDF links');
    let firstHeading: string | undefined;
    const failed: number[] = [];
    for (let n = 1; n <= doc.numPages && !text.cut; n++) {
      try {
        const page = await doc.getPage(n);
        const heading = await writePage(page, n, text, links);
        if (n === 1) firstHeading = heading;
        page.cleanup();
      } catch (err) {
        if (failed.push(n) === 1) fields.problems.push(`page ${n} unreadable: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (failed.length > 1) fields.problems.push(`${failed.length} pages unreadable in all`);
    fields.links = links.links;
    fields.problems.push(...links.problems());
    const { info, metadata } = await doc.getMetadata();
    const dict = info as Record<string, unknown>;
    const title = infoText(dict['Title'], MAX_TITLE) ?? infoText(metadata?.get('dc:title'), MAX_TITLE) ?? firstHeading;
    if (title !== undefined) fields.title = title;
    const subject = infoText(dict['Subject'], MAX_META);
    if (subject !== undefined) fields.metas.push({ type: 'meta', text: subject });
    const keywords = infoText(dict['Keywords'], MAX_META);
    if (keywords !== undefined) fields.metas.push({ type: 'keywords', text: keywords });
    const language = infoText(dict['Language'], 35)?.toLowerCase();
    if (language !== undefined && LANGUAGE_TAG.test(language)) fields.language = language;
    return fields;
  } finally {
    await doc.destroy();
  }
}

function infoText(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = collapse(value, max);
  return text === '' ? undefined : text;
}

interface Item {
  str: string;
  x: number;
  y: number;
  width: number;
  size: number;
  eol: boolean;
}

/** Writes one page's text; gives its largest heading-sized text (the title where the PDF names none). */
async function writePage(page: PdfPage, n: number, text: TextBuilder, links: LinkList): Promise<string | undefined> {
  const content = await page.getTextContent();
  const items: Item[] = [];
  for (const raw of content.items) {
    if (!('str' in raw)) continue;
    const t = raw.transform as number[];
    items.push({ str: raw.str, x: t[4]!, y: t[5]!, width: raw.width, size: Math.hypot(t[2]!, t[3]!) || raw.height, eol: raw.hasEOL });
  }
  const areas = await linkAreas(page, links);
  const body = bodySize(items);
  // A page break names its page (past MAX_PAGE, a plain break), so that a snippet can say where it was found.
  if (n === 1) text.breakBlock();
  else if (n <= MAX_PAGE) text.breakPage(n);
  else text.breakBlock();
  let last: Item | undefined;
  let lineSize = 0;
  let newLine = true;
  let link: number | undefined;
  let heading: { size: number; parts: string[] } | undefined;
  for (const item of items) {
    if (item.str === '') {
      if (item.eol) newLine = true;
      continue;
    }
    if (last !== undefined) {
      const moved = Math.abs(item.y - last.y) > 0.5 * Math.max(item.size, last.size);
      if (newLine || moved) {
        const gap = last.y - item.y;
        const size = Math.max(item.size, lineSize);
        const sizeChange = Math.max(item.size, lineSize) / Math.max(Math.min(item.size, lineSize), 0.01) > SIZE_CHANGE;
        if (gap > PARAGRAPH_GAP * size || gap < -0.5 * size || sizeChange) text.breakBlock();
        else text.append(' ');
        lineSize = item.size;
      } else if (item.x > last.x + last.width + 0.2 * item.size) {
        text.append(' ');
      }
    } else {
      lineSize = item.size;
    }
    const type = wordType(item.size, body);
    text.setType(type);
    const inLink = linkAt(areas, item);
    if (inLink !== link) {
      if (inLink === undefined) text.closeLink();
      else text.openLink(inLink);
      link = inLink;
    }
    text.append(item.str);
    if (type === WORD_TYPE.heading1 && (heading === undefined || item.size > heading.size * SIZE_CHANGE)) heading = { size: item.size, parts: [] };
    if (heading !== undefined && item.size === heading.size && heading.parts.length < 64) heading.parts.push(item.str);
    last = item;
    newLine = item.eol;
  }
  text.closeLink();
  text.setType(WORD_TYPE.text);
  const title = heading === undefined ? '' : collapse(heading.parts.join(' '), MAX_TITLE);
  return title === '' ? undefined : title;
}

/** The font size most of a page's characters are set in. */
function bodySize(items: readonly Item[]): number {
  const chars = new Map<number, number>();
  for (const item of items) {
    const size = Math.round(item.size * 10) / 10;
    chars.set(size, (chars.get(size) ?? 0) + item.str.length);
  }
  let best = 0;
  let most = -1;
  for (const [size, count] of chars) {
    if (count > most) [best, most] = [size, count];
  }
  return best;
}

function wordType(size: number, body: number): WordType {
  if (body <= 0) return WORD_TYPE.text;
  if (size >= HEADING1 * body) return WORD_TYPE.heading1;
  if (size >= HEADING2 * body) return WORD_TYPE.heading2;
  return WORD_TYPE.text;
}

interface LinkArea {
  left: number;
  bottom: number;
  right: number;
  top: number;
  n: number;
}

/** The page's URI link annotations as rectangles with their link index (those past MAX_BRACKET_LINK are links without anchor text). */
async function linkAreas(page: PdfPage, links: LinkList): Promise<LinkArea[]> {
  const areas: LinkArea[] = [];
  for (const annotation of (await page.getAnnotations()) as Array<Record<string, unknown>>) {
    if (annotation['subtype'] !== 'Link') continue;
    const target = annotation['unsafeUrl'] ?? annotation['url'];
    if (typeof target !== 'string') continue;
    const n = links.index(target);
    const rect = annotation['rect'] as number[] | undefined;
    if (n === undefined || n > MAX_BRACKET_LINK || rect?.length !== 4) continue;
    const [x1, y1, x2, y2] = rect as [number, number, number, number];
    areas.push({ left: Math.min(x1, x2), bottom: Math.min(y1, y2), right: Math.max(x1, x2), top: Math.max(y1, y2), n });
  }
  return areas;
}

/** The link whose rectangle holds the middle of the item's baseline, raised a third of its size. */
function linkAt(areas: readonly LinkArea[], item: Item): number | undefined {
  if (areas.length === 0) return undefined;
  const x = item.x + item.width / 2;
  const y = item.y + item.size / 3;
  return areas.find((a) => x >= a.left && x <= a.right && y >= a.bottom && y <= a.top)?.n;
}
