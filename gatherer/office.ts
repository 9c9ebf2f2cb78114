/**
 * Office documents (issue 30): the text, title, metas and hyperlinks of
 * OOXML files (ECMA-376: docx, xlsx, pptx) and OpenDocument files (ODF 1.3:
 * odt, ods, odp). Both are zip packages of XML parts, read here with yauzl
 * (docs/decisions.md, "Which zip reader") and htmlparser2 in XML mode.
 *
 * The package is hostile until read. Refused with OfficeRefused, tooLarge
 * set (a decompression bomb; the same budget content-decoding.ts applies):
 *  - a central directory of more than MAX_ZIP_ENTRIES entries, or a
 *    document that needs more than MAX_PARTS parts inflated;
 *  - a part whose header declares more bytes than are left of
 *    `maxDecodedSize` (all parts inflated together), before it is inflated;
 *  - a part that inflates past the size its header declares: node:zlib
 *    stops within a chunk of it (maxOutputLength), so the header is never
 *    trusted and no more than `maxDecodedSize` plus a chunk is ever held.
 * Refused as broken or unsupported (tooLarge clear), the message naming the
 * entry and its offset where there is one: an OLE compound file (an
 * encrypted OOXML file, or a legacy .doc/.xls/.ppt), what is not a zip (no
 * end of central directory: random bytes, a file cut short), entries that
 * are encrypted, compressed by a method other than stored or deflate, or
 * named twice (part names are case-insensitive in ECMA-376 Part 2, OPC),
 * data that does not inflate, and a package without its main part.
 * No tricks are followed: a package inside the package (an embedded object)
 * is never opened, and each part is read at most once however often the
 * relationships name it.
 *
 * What is read, in reading order, with a break between paragraphs, table
 * cells and rows, slides and sheet rows:
 *  - docx: word/document.xml (the main part of _rels/.rels), then its
 *    footnotes and endnotes; the text of w:t, not deleted text (w:delText),
 *    field codes (w:instrText) or mc:Fallback copies. A paragraph whose style
 *    (styles.xml, by its name or outline level) is Title or heading 1 is
 *    heading 1, Subtitle or headings 2–9 heading 2.
 *  - xlsx: each sheet in workbook order, its name a heading 1, then a block
 *    per row of its cells' values (shared strings, inline strings, formula
 *    strings, numbers as written; not booleans or errors).
 *  - pptx: each slide in the order of presentation.xml's slide list, the
 *    text of its shapes (title placeholders heading 1, subtitles heading 2)
 *    and tables; speaker notes are not read.
 *  - odt, ods, odp: content.xml's body, text:p and text:h (outline level 1
 *    heading 1, deeper heading 2; paragraphs of style Title and Subtitle,
 *    through their automatic styles' parents, and title and subtitle frames
 *    of a presentation likewise); a spreadsheet's tables are its sheets, as
 *    for xlsx. Annotations, speaker notes and tracked deletions are skipped.
 * Hyperlinks (a docx w:hyperlink, a pptx a:hlinkClick or an xlsx sheet's
 * hyperlink whose relationship is TargetMode="External", an ODF text:a or
 * draw:a xlink:href) are R links, resolved against the document's URL and
 * canonicalised, at most MAX_OFFICE_LINKS, each stored once; their anchor
 * text is bracketed as in feed.ts. A link that is only a fragment (a
 * bookmark, another slide) points into the document itself and is none.
 * Parts are UTF-8 unless a byte order mark says UTF-16.
 * Properties (docProps/core.xml, ODF meta.xml): the title, description and
 * subject (each a 'meta' meta), keywords (one 'keywords' meta) and the
 * language when it has the shape of a BCP 47 tag. The author is not kept:
 * no meta type holds it.
 *
 * As for feeds, an element nested deeper than MAX_DEPTH ends the reading of
 * its part (htmlparser2's close-tag search is quadratic in the depth;
 * gatherer/sitemap.ts), and reading ends once the text is cut at its cap.
 */

import { inflateRaw } from 'node:zlib';
import { Parser } from 'htmlparser2';
import yauzl from 'yauzl';
import type { Link, Meta } from '../common/bucket/doc-body.js';
import { MAX_BRACKET_LINK, WORD_TYPE, type TextBuilder, type WordType } from '../common/bucket/doc-text.js';
import { OFFICE_TYPES } from '../common/index/cardinfo.js';
import { LinkList } from './link-list.js';
import { LANGUAGE_TAG, MAX_META, MAX_TITLE } from './parse-html.js';
import { localName, MAX_DEPTH, TooDeep } from './sitemap.js';


/** Entries a central directory may list: a big workbook or deck has a few thousand. */
export const MAX_ZIP_ENTRIES = 20_000;
/** Parts inflated for one document: its XML parts and their relationships, two a slide or sheet. */
export const MAX_PARTS = 4_000;
/** R links kept, as for feeds; only the first MAX_BRACKET_LINK + 1 can bracket their anchor text. */
export const MAX_OFFICE_LINKS = 10_000;

export interface OfficeFields {
  title?: string;
  metas: Meta[];
  links: Link[];
  language?: string;
  problems: string[];
}

/** A package that is not read: `tooLarge` for a decompression bomb or a limit, else broken or unsupported. */
export class OfficeRefused extends Error {
  constructor(
    message: string,
    readonly tooLarge: boolean,
  ) {
    super(message);
    this.name = 'OfficeRefused';
  }
}

/** [MS-CFB] §2.2: the signature of an OLE compound file, which holds encrypted OOXML and the legacy binary formats. */
const OLE_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/** The relationship types we follow (ECMA-376 Parts 1 and 2), by the end of their URIs: transitional and strict alike. */
const REL = {
  officeDocument: /\/relationships\/officeDocument$/,
  coreProperties: /\/relationships\/metadata\/core-properties$/,
  styles: /\/relationships\/styles$/,
  footnotes: /\/relationships\/(?:footnotes|endnotes)$/,
  worksheet: /\/relationships\/worksheet$/,
  sharedStrings: /\/relationships\/sharedStrings$/,
  slide: /\/relationships\/slide$/,
};

/** Thrown from a Parser callback once the text is full: nothing more would be kept. */
class Full extends Error {}

/** The zip entries of a package by lower-case name, inflated on demand within the limits of the module comment. */
class Package {
  private inflated = 0;
  private partsRead = 0;
  private readonly done = new Set<string>();

  private constructor(
    private readonly body: Buffer,
    private readonly zip: yauzl.ZipFile,
    private readonly entries: ReadonlyMap<string, yauzl.Entry>,
    private readonly maxDecodedSize: number,
    private readonly problems: string[],
  ) {}

  static async open(body: Buffer, maxDecodedSize: number, problems: string[]): Promise<Package> {
    let zip: yauzl.ZipFile;
    try {
      // fromBuffer never auto-closes, so entries can be read after the directory.
      zip = await yauzl.fromBufferPromise(body);
    } catch (err) {
      throw new OfficeRefused(`not a zip file: ${(err as Error).message}`, false);
    }
    if (zip.entryCount > MAX_ZIP_ENTRIES) throw new OfficeRefused(`the zip lists ${zip.entryCount} entries, more than ${MAX_ZIP_ENTRIES}`, true);
    const entries = new Map<string, yauzl.Entry>();
    try {
      for await (const entry of zip.eachEntry()) {
        const key = entry.fileName.toLowerCase();
        if (entries.has(key)) throw new OfficeRefused(`entry ${JSON.stringify(entry.fileName)} at offset ${entry.relativeOffsetOfLocalHeader} is named twice`, false);
        entries.set(key, entry);
      }
    } catch (err) {
      if (err instanceof OfficeRefused) throw err;
      throw new OfficeRefused(`bad zip central directory (entry ${entries.size}): ${(err as Error).message}`, false);
    }
    return new Package(body, zip, entries, maxDecodedSize, problems);
  }

  has(name: string): boolean {
    return this.entries.has(name.toLowerCase());
  }

  /** A part's XML as text; undefined when the package has no such part, or it was read already. */
  async xml(name: string): Promise<string | undefined> {
    const data = await this.inflate(name);
    return data === undefined ? undefined : decodeXml(data);
  }

  private async inflate(name: string): Promise<Buffer | undefined> {
    const key = name.toLowerCase();
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.done.has(key)) {
      this.problems.push(`part ${name} named again: read once`);
      return undefined;
    }
    this.done.add(key);
    if (++this.partsRead > MAX_PARTS) throw new OfficeRefused(`more than ${MAX_PARTS} parts to read`, true);
    const at = `entry ${JSON.stringify(entry.fileName)} at offset ${entry.relativeOffsetOfLocalHeader}`;
    if (entry.isEncrypted()) throw new OfficeRefused(`${at} is encrypted`, false);
    const left = this.maxDecodedSize - this.inflated;
    if (entry.uncompressedSize > left) {
      throw new OfficeRefused(`${at} declares ${entry.uncompressedSize} bytes, past the ${this.maxDecodedSize} bytes a document may inflate to`, true);
    }
    let start: number;
    try {
      start = (await this.zip.readLocalFileHeaderPromise(entry, { minimal: true })).fileDataStart;
    } catch (err) {
      throw new OfficeRefused(`${at}: ${(err as Error).message}`, false);
    }
    const stored = entry.compressedSize;
    const raw = this.body.subarray(start, start + stored);
    let data: Buffer;
    if (entry.compressionMethod === 0) {
      if (stored !== entry.uncompressedSize) throw new OfficeRefused(`${at} is stored in ${stored} bytes but declares ${entry.uncompressedSize}`, false);
      data = raw;
    } else if (entry.compressionMethod === 8) {
      try {
        // maxOutputLength must be positive: a part declared empty may inflate to one byte, which the check below refuses.
        data = await inflatePart(raw, Math.max(1, entry.uncompressedSize));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
          throw new OfficeRefused(`${at} inflates past the ${entry.uncompressedSize} bytes it declares`, true);
        }
        throw new OfficeRefused(`${at} does not inflate: ${(err as Error).message}`, false);
      }
      if (data.length > entry.uncompressedSize) throw new OfficeRefused(`${at} inflates past the ${entry.uncompressedSize} bytes it declares`, true);
    } else {
      throw new OfficeRefused(`${at} uses compression method ${entry.compressionMethod}, not stored or deflate`, false);
    }
    this.inflated += data.length;
    return data;
  }
}

/** Raw deflate (the zip's method 8) on node:zlib's thread pool, stopped within a chunk once the output passes `max` (ERR_BUFFER_TOO_LARGE). */
function inflatePart(raw: Buffer, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => inflateRaw(raw, { maxOutputLength: max }, (err, data) => (err === null ? resolve(data) : reject(err))));
}

/** XML 1.0 §4.3.3 and appendix F: UTF-8 unless a byte order mark says UTF-16 (TextDecoder drops the mark). */
function decodeXml(data: Buffer): string {
  const encoding = data[0] === 0xff && data[1] === 0xfe ? 'utf-16le' : data[0] === 0xfe && data[1] === 0xff ? 'utf-16be' : 'utf-8';
  return new TextDecoder(encoding).decode(data);
}

/** What walkXml reports, element names as `localName` gives them (no prefix, lower case). */
interface XmlHandlers {
  open?(name: string, attributes: Record<string, string>): void;
  text?(chunk: string): void;
  close?(name: string): void;
}

/**
 * Runs `handlers` over a part, not over what is inside an element named in
 * `skip`. A part nested too deep is read up to there, a problem noted; Full
 * ends it too, and is passed on.
 */
function walkXml(xml: string, part: string, handlers: XmlHandlers, problems: string[], skip: ReadonlySet<string> = NOTHING): void {
  let depth = 0;
  let skipping = 0;
  const parser = new Parser(
    {
      onopentag(tag, attributes) {
        if (++depth > MAX_DEPTH) throw new TooDeep();
        const name = localName(tag);
        if (skipping > 0 || skip.has(name)) skipping += 1;
        else handlers.open?.(name, attributes);
      },
      ontext(chunk) {
        if (skipping === 0) handlers.text?.(chunk);
      },
      onclosetag(tag) {
        depth -= 1;
        if (skipping > 0) skipping -= 1;
        else handlers.close?.(localName(tag));
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  try {
    parser.end(xml);
  } catch (err) {
    if (!(err instanceof TooDeep)) throw err;
    problems.push(`${part}: elements nested deeper than ${MAX_DEPTH}: the rest of the part ignored`);
  }
}

const NOTHING: ReadonlySet<string> = new Set();

/** An attribute by its local name, whatever its prefix (`xlink:href`, `w:val`). */
function attribute(attributes: Record<string, string>, name: string): string | undefined {
  for (const key in attributes) if (localName(key) === name) return attributes[key];
  return undefined;
}

/** The `r:id` of an element, in whatever prefix: a prefixed `id` (an unprefixed one, as p:sldId's, is no relationship's). */
/** The relationship an element names by its r:id (in any prefix), if `rels` has it. */
function relationshipOf(attributes: Record<string, string>, rels: Map<string, Relationship>): Relationship | undefined {
  for (const key in attributes) if (key.includes(':') && localName(key) === 'id') return rels.get(attributes[key]!);
  return undefined;
}

/** A part name resolved from `target` against the folder of part `from` (ECMA-376 Part 2, relative references); undefined when it leaves the package. */
function resolvePart(from: string, target: string): string | undefined {
  const segments = target.startsWith('/') ? [] : from.split('/').slice(0, -1);
  for (const segment of target.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.pop() === undefined) return undefined;
      continue;
    }
    try {
      segments.push(decodeURIComponent(segment));
    } catch {
      segments.push(segment);
    }
  }
  return segments.join('/');
}

interface Relationship {
  type: string;
  /** The part it names, or for TargetMode="External" the URL as written. */
  target: string;
  external: boolean;
}

/** The relationships of part `part` ('' for the package) by Id, from its .rels part; empty when it has none. */
async function relationships(pkg: Package, part: string, problems: string[]): Promise<Map<string, Relationship>> {
  const slash = part.lastIndexOf('/');
  const relsName = `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
  const rels = new Map<string, Relationship>();
  const xml = await pkg.xml(relsName);
  if (xml === undefined) return rels;
  walkXml(
    xml,
    relsName,
    {
      open(name, attributes) {
        if (name !== 'relationship') return;
        const id = attributes['Id'];
        const type = attributes['Type'];
        const target = attributes['Target'];
        if (id === undefined || type === undefined || target === undefined) return;
        const external = attributes['TargetMode'] === 'External';
        const resolved = external ? target : resolvePart(part, target);
        if (resolved !== undefined) rels.set(id, { type, target: resolved, external });
      },
    },
    problems,
  );
  return rels;
}

function firstOfType(rels: Map<string, Relationship>, type: RegExp): string | undefined {
  for (const rel of rels.values()) if (!rel.external && type.test(rel.type)) return rel.target;
  return undefined;
}

/** The document's text and links as the walkers write them. */
class Output {
  private readonly list: LinkList;

  constructor(
    readonly text: TextBuilder,
    base: string,
    readonly problems: string[],
  ) {
    this.list = new LinkList(base, MAX_OFFICE_LINKS, 'hyperlinks');
  }

  get links(): Link[] {
    return this.list.links;
  }

  /** Opens the bracket of the link to `raw` (closing any open one), when it is kept and its index fits a bracket. */
  openLink(raw: string | undefined): void {
    this.text.closeLink();
    // A fragment alone points into the document itself (a bookmark, another slide): no link.
    if (raw === undefined || raw.trim().startsWith('#')) return;
    const n = this.list.index(raw);
    if (n !== undefined && n <= MAX_BRACKET_LINK) this.text.openLink(n);
  }

  /** Appends text; Full once the text is cut, so that reading stops. */
  append(chunk: string): void {
    this.text.append(chunk);
    if (this.text.cut) throw new Full();
  }

  /** A heading of its own block (a sheet's name). */
  heading(words: string): void {
    this.text.breakBlock();
    this.text.setType(WORD_TYPE.heading1);
    this.append(words);
    this.text.setType(WORD_TYPE.text);
    this.text.breakBlock();
  }

  finishProblems(): void {
    this.problems.push(...this.list.problems());
  }
}

// ---- Properties ----

interface Properties {
  title?: string;
  metas: Meta[];
  language?: string;
}

/** Whitespace collapsed, cut at `max` characters; undefined when empty. */
function clean(value: string, max: number): string | undefined {
  const collapsed = value.replace(/\s+/g, ' ').trim().slice(0, max);
  return collapsed === '' ? undefined : collapsed;
}

/** The properties readProperties takes, by local name (ODF's is `keyword`, one element each). */
const PROPERTIES = new Set(['title', 'subject', 'description', 'keywords', 'keyword', 'language']);

/**
 * Dublin Core and the keywords from docProps/core.xml (ECMA-376 Part 2,
 * core properties) or ODF meta.xml (ODF 1.3 Part 3, metadata), by local
 * name: the first title, subject, description and language; every
 * keyword, joined.
 */
function readProperties(xml: string, part: string, problems: string[]): Properties {
  const values = new Map<string, string[]>();
  let field: string | undefined;
  let fieldDepth = 0;
  let depth = 0;
  let buffer = '';
  walkXml(
    xml,
    part,
    {
      open(name) {
        depth += 1;
        if (field === undefined && PROPERTIES.has(name)) {
          field = name;
          fieldDepth = depth;
          buffer = '';
        }
      },
      text(chunk) {
        if (field !== undefined) buffer += chunk;
      },
      close() {
        if (field !== undefined && depth === fieldDepth) {
          const key = field === 'keyword' ? 'keywords' : field;
          values.set(key, [...(values.get(key) ?? []), buffer]);
          field = undefined;
        }
        depth -= 1;
      },
    },
    problems,
  );
  const first = (key: string, max: number): string | undefined => clean(values.get(key)?.[0] ?? '', max);
  const properties: Properties = { metas: [] };
  const title = first('title', MAX_TITLE);
  if (title !== undefined) properties.title = title;
  for (const key of ['description', 'subject']) {
    const text = first(key, MAX_META);
    if (text !== undefined && !properties.metas.some((m) => m.text === text)) properties.metas.push({ type: 'meta', text });
  }
  const keywords = clean((values.get('keywords') ?? []).join(', '), MAX_META);
  if (keywords !== undefined) properties.metas.push({ type: 'keywords', text: keywords });
  const language = first('language', 64)?.toLowerCase().replaceAll('_', '-');
  if (language !== undefined) {
    if (LANGUAGE_TAG.test(language)) properties.language = language;
    else problems.push(`${part}: language ${JSON.stringify(language)} is not a language tag; ignored`);
  }
  return properties;
}

// ---- OOXML ----

/** Heading type of a Word style by its name or outline level (WordprocessingML's styles.xml). */
function wordStyleType(name: string | undefined, outlineLevel: number | undefined): WordType | undefined {
  const lower = name?.toLowerCase();
  if (lower === 'title' || lower === 'heading 1' || outlineLevel === 0) return WORD_TYPE.heading1;
  if (lower === 'subtitle' || (lower !== undefined && /^heading [2-9]$/.test(lower)) || (outlineLevel !== undefined && outlineLevel > 0 && outlineLevel < 9)) {
    return WORD_TYPE.heading2;
  }
  return undefined;
}

/** Style ids of styles.xml that are headings. */
async function wordHeadingStyles(pkg: Package, part: string | undefined, problems: string[]): Promise<Map<string, WordType>> {
  const headings = new Map<string, WordType>();
  const xml = part === undefined ? undefined : await pkg.xml(part);
  if (xml === undefined) return headings;
  let id: string | undefined;
  let name: string | undefined;
  let level: number | undefined;
  walkXml(
    xml,
    part!,
    {
      open(tag, attributes) {
        if (tag === 'style') {
          id = attribute(attributes, 'styleid');
          name = undefined;
          level = undefined;
        } else if (tag === 'name') name = attribute(attributes, 'val');
        else if (tag === 'outlinelvl') level = Number(attribute(attributes, 'val'));
      },
      close(tag) {
        if (tag !== 'style' || id === undefined) return;
        const type = wordStyleType(name, level);
        if (type !== undefined) headings.set(id, type);
        id = undefined;
      },
    },
    problems,
  );
  return headings;
}

/** Elements of WordprocessingML whose text is not the document's: deleted runs, field codes, the fallback copy of alternate content. */
const WORD_SKIPPED = new Set(['deltext', 'delinstrtext', 'instrtext', 'fallback']);

/** A WordprocessingML part (the document, footnotes, endnotes) with its relationships. */
async function readWordPart(pkg: Package, part: string, rels: Map<string, Relationship>, styles: Map<string, WordType>, out: Output): Promise<void> {
  const xml = await pkg.xml(part);
  if (xml === undefined) return;
  let inText = false;
  walkXml(
    xml,
    part,
    {
      open(name, attributes) {
        switch (name) {
          case 'p':
          case 'tc':
          case 'tr':
            out.text.breakBlock();
            break;
          case 'pstyle': {
            const id = attribute(attributes, 'val');
            const type = (id === undefined ? undefined : styles.get(id)) ?? wordStyleType(id?.replace(/^heading(\d)$/i, 'heading $1'), undefined);
            if (type !== undefined) out.text.setType(type);
            break;
          }
          case 'outlinelvl': {
            const type = wordStyleType(undefined, Number(attribute(attributes, 'val')));
            if (type !== undefined) out.text.setType(type);
            break;
          }
          case 't':
            inText = true;
            break;
          case 'tab':
          case 'br':
          case 'cr':
            out.append(' ');
            break;
          case 'hyperlink': {
            const rel = relationshipOf(attributes, rels);
            out.openLink(rel?.external === true ? rel.target : undefined);
            break;
          }
        }
      },
      text(chunk) {
        if (inText) out.append(chunk);
      },
      close(name) {
        if (name === 't') inText = false;
        else if (name === 'hyperlink') out.text.closeLink();
        else if (name === 'p') {
          out.text.closeLink();
          out.text.setType(WORD_TYPE.text);
          out.text.breakBlock();
        }
      },
    },
    out.problems,
    WORD_SKIPPED,
  );
}

async function readDocx(pkg: Package, main: string, out: Output): Promise<void> {
  const rels = await relationships(pkg, main, out.problems);
  const styles = await wordHeadingStyles(pkg, firstOfType(rels, REL.styles), out.problems);
  await readWordPart(pkg, main, rels, styles, out);
  for (const rel of rels.values()) {
    if (!rel.external && REL.footnotes.test(rel.type)) await readWordPart(pkg, rel.target, await relationships(pkg, rel.target, out.problems), styles, out);
  }
}

/** The shared strings of a workbook (SpreadsheetML's sharedStrings.xml): each <si>'s text, without phonetic runs. */
async function sharedStrings(pkg: Package, part: string | undefined, problems: string[]): Promise<string[]> {
  const strings: string[] = [];
  const xml = part === undefined ? undefined : await pkg.xml(part);
  if (xml === undefined) return strings;
  let current: string | undefined;
  let inText = false;
  walkXml(
    xml,
    part!,
    {
      open(name) {
        if (name === 'si') current = '';
        else if (name === 't') inText = true;
      },
      text(chunk) {
        if (inText && current !== undefined) current += chunk;
      },
      close(name) {
        if (name === 't') inText = false;
        else if (name === 'si' && current !== undefined) {
          strings.push(current);
          current = undefined;
        }
      },
    },
    problems,
    new Set(['rph']),
  );
  return strings;
}

/** The first cell of a hyperlink's ref (`B2` or `B2:C4`) → its external URL. */
function sheetHyperlinks(xml: string, part: string, rels: Map<string, Relationship>, problems: string[]): Map<string, string> {
  const links = new Map<string, string>();
  walkXml(
    xml,
    part,
    {
      open(name, attributes) {
        if (name !== 'hyperlink') return;
        const ref = attribute(attributes, 'ref')?.split(':')[0]?.toUpperCase();
        const rel = relationshipOf(attributes, rels);
        if (ref !== undefined && rel?.external === true) links.set(ref, rel.target);
      },
    },
    problems,
  );
  return links;
}

/** A worksheet: a block per row, its cells' values apart. */
async function readSheet(pkg: Package, part: string, strings: readonly string[], out: Output): Promise<void> {
  const xml = await pkg.xml(part);
  if (xml === undefined) return;
  const rels = await relationships(pkg, part, out.problems);
  // Hyperlinks follow the cells they name: found first, in a pass of their own, where there are any.
  const links = xml.includes('hyperlink') ? sheetHyperlinks(xml, part, rels, out.problems) : new Map<string, string>();
  let cell: { type: string | undefined; ref: string | undefined; value: string; inline: string } | undefined;
  let collecting: 'value' | 'inline' | undefined;
  walkXml(
    xml,
    part,
    {
      open(name, attributes) {
        if (name === 'row') out.text.breakBlock();
        else if (name === 'c') cell = { type: attribute(attributes, 't'), ref: attribute(attributes, 'r')?.toUpperCase(), value: '', inline: '' };
        else if (cell !== undefined && name === 'v') collecting = 'value';
        else if (cell !== undefined && name === 't') collecting = 'inline';
      },
      text(chunk) {
        if (collecting !== undefined && cell !== undefined) cell[collecting] += chunk;
      },
      close(name) {
        if (name === 'v' || name === 't') collecting = undefined;
        else if (name === 'row') out.text.breakBlock();
        else if (name === 'c' && cell !== undefined) {
          const value = cellValue(cell.type, cell.value, cell.inline, strings);
          if (value !== undefined) {
            out.append(' ');
            out.openLink(cell.ref === undefined ? undefined : links.get(cell.ref));
            out.append(value);
            out.text.closeLink();
          }
          cell = undefined;
        }
      },
    },
    out.problems,
    new Set(['f', 'rph']),
  );
}

/** A cell's text by its type (SpreadsheetML's ST_CellType): booleans and errors are not words. */
function cellValue(type: string | undefined, value: string, inline: string, strings: readonly string[]): string | undefined {
  switch (type) {
    case 's':
      return strings[Number(value)];
    case 'inlineStr':
      return inline;
    case 'b':
    case 'e':
      return undefined;
    default:
      return value; // n, d, str (a formula's string result), or absent: numbers
  }
}

async function readXlsx(pkg: Package, main: string, out: Output): Promise<void> {
  const xml = await pkg.xml(main);
  if (xml === undefined) return;
  const rels = await relationships(pkg, main, out.problems);
  const sheets: Array<{ name: string; part: string }> = [];
  walkXml(
    xml,
    main,
    {
      open(name, attributes) {
        if (name !== 'sheet') return;
        const rel = relationshipOf(attributes, rels);
        if (rel !== undefined && !rel.external && REL.worksheet.test(rel.type)) sheets.push({ name: attribute(attributes, 'name') ?? '', part: rel.target });
      },
    },
    out.problems,
  );
  const strings = await sharedStrings(pkg, firstOfType(rels, REL.sharedStrings), out.problems);
  for (const sheet of sheets) {
    out.heading(sheet.name);
    await readSheet(pkg, sheet.part, strings, out);
  }
}

/** Placeholder types of a slide's title shapes (PresentationML's ST_PlaceholderType). */
const PLACEHOLDER_TYPE = new Map<string, WordType>([
  ['title', WORD_TYPE.heading1],
  ['ctrTitle', WORD_TYPE.heading1],
  ['subTitle', WORD_TYPE.heading2],
]);

/** A slide: its shapes' paragraphs and table cells, each a block. */
async function readSlide(pkg: Package, part: string, out: Output): Promise<void> {
  const xml = await pkg.xml(part);
  if (xml === undefined) return;
  const rels = await relationships(pkg, part, out.problems);
  let shapeType: WordType = WORD_TYPE.text;
  let inText = false;
  out.text.breakBlock();
  walkXml(
    xml,
    part,
    {
      open(name, attributes) {
        switch (name) {
          case 'sp':
            shapeType = WORD_TYPE.text;
            break;
          case 'ph':
            shapeType = PLACEHOLDER_TYPE.get(attribute(attributes, 'type') ?? '') ?? WORD_TYPE.text;
            break;
          case 'p':
            out.text.breakBlock();
            out.text.setType(shapeType);
            break;
          case 'tc':
          case 'tr':
            out.text.breakBlock();
            break;
          case 't':
            inText = true;
            break;
          case 'br':
            out.append(' ');
            break;
          case 'hlinkclick': {
            const rel = relationshipOf(attributes, rels);
            out.openLink(rel?.external === true ? rel.target : undefined);
            break;
          }
        }
      },
      text(chunk) {
        if (inText) out.append(chunk);
      },
      close(name) {
        if (name === 't') inText = false;
        else if (name === 'r' || name === 'p') out.text.closeLink();
        if (name === 'p') out.text.breakBlock();
        else if (name === 'sp') {
          shapeType = WORD_TYPE.text;
          out.text.setType(WORD_TYPE.text);
        }
      },
    },
    out.problems,
    new Set(['fallback']),
  );
}

async function readPptx(pkg: Package, main: string, out: Output): Promise<void> {
  const xml = await pkg.xml(main);
  if (xml === undefined) return;
  const rels = await relationships(pkg, main, out.problems);
  const slides: string[] = [];
  walkXml(
    xml,
    main,
    {
      open(name, attributes) {
        if (name !== 'sldid') return;
        const rel = relationshipOf(attributes, rels);
        if (rel !== undefined && !rel.external && REL.slide.test(rel.type)) slides.push(rel.target);
      },
    },
    out.problems,
  );
  for (const slide of slides) await readSlide(pkg, slide, out);
}

// ---- OpenDocument ----

/** ODF elements whose text is not the document's: comments, speaker notes, tracked deletions, footnote numbers. */
const ODF_SKIPPED = new Set(['annotation', 'notes', 'tracked-changes', 'note-citation']);

/** Word types of presentation frames by their presentation:class attribute. */
const FRAME_TYPE = new Map<string, WordType>([
  ['title', WORD_TYPE.heading1],
  ['subtitle', WORD_TYPE.heading2],
]);

/** content.xml of a text, spreadsheet or presentation (ODF 1.3 Part 3). */
function readOdfContent(xml: string, out: Output): void {
  const parents = new Map<string, string>();
  let spreadsheet = false;
  let paragraphs = 0;
  let cellDepth = 0;
  let frameType: WordType = WORD_TYPE.text;
  /** The style a paragraph has, through the parents of automatic styles, as a heading type. */
  const styleType = (name: string | undefined): WordType | undefined => {
    for (let hops = 0; name !== undefined && hops < 8; hops++) {
      if (name === 'Title') return WORD_TYPE.heading1;
      if (name === 'Subtitle') return WORD_TYPE.heading2;
      name = parents.get(name);
    }
    return undefined;
  };
  walkXml(
    xml,
    'content.xml',
    {
      open(name, attributes) {
        switch (name) {
          case 'style': {
            const styleName = attribute(attributes, 'name');
            const parent = attribute(attributes, 'parent-style-name');
            if (styleName !== undefined && parent !== undefined) parents.set(styleName, parent);
            break;
          }
          case 'spreadsheet':
            spreadsheet = true;
            break;
          case 'table':
            if (spreadsheet) out.heading(attribute(attributes, 'name') ?? '');
            break;
          case 'table-row':
          case 'page':
            out.text.breakBlock();
            break;
          case 'table-cell':
          case 'covered-table-cell':
            cellDepth += 1;
            if (spreadsheet) out.append(' ');
            else out.text.breakBlock();
            break;
          case 'frame':
            frameType = FRAME_TYPE.get(attribute(attributes, 'class') ?? '') ?? WORD_TYPE.text;
            break;
          case 'h':
          case 'p': {
            paragraphs += 1;
            if (!spreadsheet || cellDepth === 0) out.text.breakBlock();
            const level = Number(attribute(attributes, 'outline-level') ?? 1);
            const type = name === 'h' ? (level > 1 ? WORD_TYPE.heading2 : WORD_TYPE.heading1) : (styleType(attribute(attributes, 'style-name')) ?? frameType);
            out.text.setType(type);
            break;
          }
          case 's':
          case 'tab':
          case 'line-break':
            out.append(' ');
            break;
          case 'a':
            out.openLink(attribute(attributes, 'href'));
            break;
        }
      },
      text(chunk) {
        if (paragraphs > 0) out.append(chunk);
      },
      close(name) {
        switch (name) {
          case 'h':
          case 'p':
            paragraphs -= 1;
            out.text.closeLink();
            out.text.setType(paragraphs > 0 ? frameType : WORD_TYPE.text);
            if (!spreadsheet || cellDepth === 0) out.text.breakBlock();
            else out.append(' ');
            break;
          case 'a':
            out.text.closeLink();
            break;
          case 'table-cell':
          case 'covered-table-cell':
            cellDepth -= 1;
            break;
          case 'frame':
            frameType = WORD_TYPE.text;
            break;
          case 'table-row':
            out.text.breakBlock();
            break;
        }
      },
    },
    out.problems,
    ODF_SKIPPED,
  );
}

// ---- The entry ----

const OOXML_READERS = new Map<string, (pkg: Package, main: string, out: Output) => Promise<void>>([
  ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', readDocx],
  ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', readXlsx],
  ['application/vnd.openxmlformats-officedocument.presentationml.presentation', readPptx],
]);

/**
 * The fields of an office document of MIME type `mime` (one of
 * OFFICE_TYPES), its text written into `text`; `url` is the base of its
 * links. Throws OfficeRefused as the module comment says; asynchronous
 * because the zip's directory is read through yauzl's callbacks and parts
 * are inflated on node:zlib's thread pool.
 */
export async function parseOffice(body: Buffer, mime: string, url: string, text: TextBuilder, maxDecodedSize: number): Promise<OfficeFields> {
  if (!OFFICE_TYPES.has(mime)) throw new RangeError(`not an office type: ${mime}`);
  if (body.subarray(0, OLE_MAGIC.length).equals(OLE_MAGIC)) throw new OfficeRefused('encrypted or legacy binary office file (an OLE compound file, not a zip)', false);
  const problems: string[] = [];
  const pkg = await Package.open(body, maxDecodedSize, problems);
  const out = new Output(text, url, problems);
  let properties: Properties = { metas: [] };
  try {
    const reader = OOXML_READERS.get(mime);
    if (reader !== undefined) {
      const root = await relationships(pkg, '', problems);
      const main = firstOfType(root, REL.officeDocument);
      if (main === undefined || !pkg.has(main)) throw new OfficeRefused('not an office file: _rels/.rels names no main part that the zip holds', false);
      const core = firstOfType(root, REL.coreProperties) ?? 'docProps/core.xml';
      const coreXml = await pkg.xml(core);
      if (coreXml !== undefined) properties = readProperties(coreXml, core, problems);
      await reader(pkg, main, out);
    } else {
      if (!pkg.has('content.xml')) throw new OfficeRefused('not an OpenDocument file: no content.xml in the zip', false);
      const metaXml = await pkg.xml('meta.xml');
      if (metaXml !== undefined) properties = readProperties(metaXml, 'meta.xml', problems);
      readOdfContent((await pkg.xml('content.xml'))!, out);
    }
  } catch (err) {
    if (!(err instanceof Full)) throw err;
  }
  text.closeLink();
  text.setType(WORD_TYPE.text);
  out.finishProblems();
  return { ...properties, links: out.links, problems };
}
