/**
 * The document text of a bucket's `X` attribute (sherlock-original §2
 * "Attributes": word-type switches, breaks and link brackets inside `X`): the
 * gatherer writes it with TextBuilder, the indexer reads it with readDocText.
 *
 * The text is UTF-8 interleaved with control bytes taken from 0x80–0xBF, the
 * bytes that can never start a UTF-8 character, so a control byte is told from
 * text by looking at one byte, and a run of text between two controls is whole
 * characters.
 *
 *   byte            size  meaning
 *   0x00–0x7F       1     ASCII text
 *   0xC2–0xF4 …     2–4   a UTF-8 character (only the shortest form, no
 *                         surrogates, nothing above U+10FFFF)
 *   0x80 | t        1     the following words are of type t
 *   0x90 | t        1     a break (block boundary: paragraph, heading, list
 *                         item, table cell), then words of type t
 *   0xA0 | n >> 6,  2     open the bracket of link n: the words up to the
 *   0x80 | n & 0x3f       closing byte are the anchor text of the n-th `R`
 *                         attribute of the same body (n = 0…1023)
 *   0xB0            1     close the open link bracket
 *   0xB1, 0x80 | p >> 12 & 0x3f,   4   a page break: a break, and the words
 *   0x80 | p >> 6 & 0x3f,                that follow are on page p (2…262,143;
 *   0x80 | p & 0x3f                      a PDF's: the text starts on page 1)
 *                                        of the document; the word type stays
 *   0xB2–0xBF, C0, C1, F5–FF   never written; the reader rejects them
 *
 * Word types t: 0 text, 1 emphasised, 2 small, 3 heading 1, 4 heading 2,
 * 5 alt (image alt text); 6–15 are not defined and are rejected. The type at
 * the start of the text is 0.
 *
 * What TextBuilder writes, beyond the byte format (the reader accepts any text
 * that keeps the byte format; these are the writer's habits, not checked):
 *  - whitespace runs become one space 0x20, written only between two words:
 *    when the second word comes, before the break, type switch or bracket
 *    opening written for it (a bracket's closing byte is written at once, so
 *    a space after an anchor follows it); no space begins or ends the text
 *    or a block;
 *  - a type switch is written only just before a word whose type differs from
 *    the one in effect; breaks are never doubled and never begin the text;
 *    a page break is written only before a word (a page without words
 *    writes none: the next page's names its own number), in place of the
 *    break there, and may begin the text (a document whose first pages are
 *    blank);
 *  - brackets do not nest (opening one closes the previous one) and every
 *    bracket is closed by the end;
 *  - the output never exceeds the byte cap: the first word that does not fit
 *    is dropped with everything after it, and `cut` says so.
 *
 * The reader distrusts every byte: an invalid or truncated UTF-8 sequence, an
 * undefined control byte, a bracket cut off at the end, opened inside another
 * or never closed, and a close without an open are SherlockError
 * SHERLOCK_CORRUPT_BUCKET naming the offset of the offending byte (plus the
 * offset of `X` in its file when the caller passes one).
 */

import { SherlockError, type ErrorPlace } from '../errors.js';

export const WORD_TYPE = { text: 0, emphasised: 1, small: 2, heading1: 3, heading2: 4, alt: 5 } as const;
export type WordType = (typeof WORD_TYPE)[keyof typeof WORD_TYPE];

/** Highest link index a bracket can carry (10 bits). */
export const MAX_BRACKET_LINK = 1023;
/** Highest page number a page break can carry (18 bits). */
export const MAX_PAGE = (1 << 18) - 1;

const SWITCH = 0x80;
const BREAK = 0x90;
const OPEN = 0xa0;
const CLOSE = 0xb0;
const PAGE = 0xb1;
const PAGE_BYTES = 4;
const SPACE = 0x20;
const LAST_TYPE = WORD_TYPE.alt;

/**
 * Whitespace and C0/DEL controls only separate words. This matches the runs
 * that are not already a single space, so that ordinary text is not rewritten.
 */
const WHITESPACE_RUN = /(?: [\s\x00-\x1f\x7f]|[^\S ]|[\x00-\x1f\x7f])[\s\x00-\x1f\x7f]*/g;

/** True when every unit is ASCII whitespace or a C0/DEL control (which WHITESPACE_RUN would turn into one space). */
function isBlank(chunk: string): boolean {
  for (let i = 0; i < chunk.length; i++) {
    const c = chunk.charCodeAt(i);
    if (c > 0x20 && c !== 0x7f) return false;
  }
  return true;
}

/** Characters of each of TextBuilder#samples() of a long text: more than common/language/detect.ts reads in one window. */
const SAMPLE_CHARS = 1024;
/** A text up to this long is its own sample (the detector windows it). */
const HEAD_CHARS = 4 * SAMPLE_CHARS;

export type DocTextToken =
  | { kind: 'text'; text: string; type: WordType }
  /** `page`: a page break, the words after it on that page. */
  | { kind: 'break'; page?: number }
  | { kind: 'link-open'; n: number }
  | { kind: 'link-close' };

/** Writes `X` text; single use: append, then finish() once. */
export class TextBuilder {
  private out: Buffer;
  private pos = 0;
  private readonly cap: number;
  /** The type the written bytes leave in effect, and the one asked for by setType. */
  private written: WordType = WORD_TYPE.text;
  private type: WordType = WORD_TYPE.text;
  private pendingSpace = false;
  private pendingBreak = false;
  /** The page the next word begins, when it is a new one (0: none). */
  private pendingPage = 0;
  /** No word since the start or the last break: whitespace here is dropped. */
  private blockStart = true;
  private linkOpen = false;
  private cutOff = false;
  /**
   * Where the last word written began (before its space or break, after a
   * bracket byte), and the type in effect there: a word that turns out not to
   * fit is taken back to here, even when it began in an earlier append (a word
   * may come in pieces, e.g. "AT", "&", "T").
   */
  private wordStart = 0;
  private wordStartType: WordType = WORD_TYPE.text;
  // Samples of the text for a language detector (samples()), whitespace collapsed: its first HEAD_CHARS
  // characters, the last ones appended (`tail`, at most 2 × SAMPLE_CHARS), and the tail as it was when the
  // text's length passed each doubling of HEAD_CHARS (the two latest kept), from which the middle is taken.
  private head = '';
  private tail = '';
  private chars = 0;
  private nextMark = HEAD_CHARS;
  private marks: Array<{ at: number; text: string }> = [];

  constructor(capBytes: number) {
    if (!Number.isInteger(capBytes) || capBytes < 1) throw new RangeError(`bad text cap ${capBytes}`);
    this.cap = capBytes;
    this.out = Buffer.allocUnsafe(Math.min(capBytes, 16 * 1024));
  }

  /** True once something was dropped because it did not fit under the cap. */
  get cut(): boolean {
    return this.cutOff;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.pos;
  }

  /** Appends text; runs of whitespace anywhere in it, or across calls, count as one space. */
  append(chunk: string): void {
    if (this.cutOff || chunk.length === 0) return;
    if (isBlank(chunk)) {
      // As the regex would make it: one space (between the tags of most pages), but without the regex.
      this.space();
      return;
    }
    const collapsed = chunk.replace(WHITESPACE_RUN, ' ');
    this.keepSamples(collapsed);
    const start = collapsed.charCodeAt(0) === SPACE ? 1 : 0;
    const trailing = collapsed.length > start && collapsed.charCodeAt(collapsed.length - 1) === SPACE;
    const end = trailing ? collapsed.length - 1 : collapsed.length;
    if (start === 1) this.space();
    if (end > start) this.words(start === 0 && end === collapsed.length ? collapsed : collapsed.slice(start, end));
    if (trailing) this.space();
  }

  private keepSamples(collapsed: string): void {
    if (this.head.length < HEAD_CHARS) this.head += this.head === '' ? collapsed.trimStart() : ` ${collapsed}`;
    this.tail += ` ${collapsed}`;
    if (this.tail.length > 2 * SAMPLE_CHARS) this.tail = this.tail.slice(-SAMPLE_CHARS);
    this.chars += collapsed.length + 1;
    if (this.chars >= this.nextMark) {
      this.marks = [...this.marks.slice(-1), { at: this.chars, text: this.tail.slice(-SAMPLE_CHARS) }];
      this.nextMark *= 2;
    }
  }

  /**
   * What a language detector reads of the text (common/language/detect.ts):
   * the whole text when it is short; else about SAMPLE_CHARS characters from
   * its start, its middle (a sample taken between a quarter and the whole of
   * its length, the closest to half) and its end, so that a page is not named
   * by its first lines alone.
   */
  samples(): string[] {
    if (this.head.length < HEAD_CHARS) return [this.head];
    const half = this.chars / 2;
    const middle = this.marks.reduce<{ at: number; text: string } | undefined>((best, m) => (best === undefined || Math.abs(m.at - half) < Math.abs(best.at - half) ? m : best), undefined);
    return [this.head.slice(0, SAMPLE_CHARS), middle!.text.trimStart(), this.tail.slice(-SAMPLE_CHARS).trimStart()];
  }

  /** Words appended from now on are of this type. */
  setType(type: WordType): void {
    this.type = type;
  }

  /** Marks a block boundary before the next word. */
  breakBlock(): void {
    if (this.pos > 0) this.pendingBreak = true;
    this.pendingSpace = false;
    this.blockStart = true;
  }

  /** The words appended from now on are on page `n` (2…MAX_PAGE): a break, written as a page break. */
  breakPage(n: number): void {
    if (!Number.isInteger(n) || n < 2 || n > MAX_PAGE) throw new RangeError(`page ${n} outside 2…${MAX_PAGE}`);
    this.breakBlock();
    this.pendingPage = n;
  }

  /** Opens the bracket of link n (closing an open one first). */
  openLink(n: number): void {
    if (!Number.isInteger(n) || n < 0 || n > MAX_BRACKET_LINK) throw new RangeError(`link index ${n} outside 0…${MAX_BRACKET_LINK}`);
    if (this.linkOpen) this.closeLink();
    if (this.cutOff) return;
    // The space and a break belong before the bracket, not inside the anchor text.
    const before = this.separatorBytes(false);
    if (this.pos + before + 3 > this.cap) {
      this.cutOff = true; // the opening pair and the closing byte it will need do not fit
      return;
    }
    this.reserve(this.pos + before + 3);
    this.flushSeparators(false);
    this.out[this.pos++] = OPEN | (n >> 6);
    this.out[this.pos++] = 0x80 | (n & 0x3f);
    this.linkOpen = true;
    this.markWordStart(this.pos);
  }

  /** Closes the open bracket, if any (its byte was reserved when it opened). */
  closeLink(): void {
    if (!this.linkOpen) return;
    this.out[this.pos++] = CLOSE;
    this.linkOpen = false;
    this.markWordStart(this.pos);
  }

  /** The finished text: an open bracket is closed. */
  finish(): Buffer {
    this.closeLink();
    return Buffer.from(this.out.subarray(0, this.pos));
  }

  private space(): void {
    if (!this.blockStart) this.pendingSpace = true;
  }

  private markWordStart(at: number): void {
    this.wordStart = at;
    this.wordStartType = this.written;
  }

  private reserve(size: number): void {
    if (size <= this.out.length) return;
    const grown = Buffer.allocUnsafe(Math.min(this.cap, Math.max(size, this.out.length * 2)));
    this.out.copy(grown, 0, 0, this.pos);
    this.out = grown;
  }

  /** The bytes flushSeparators(typed) writes. */
  private separatorBytes(typed: boolean): number {
    const switched = typed && this.type !== this.written ? 1 : 0;
    const space = this.pendingSpace ? 1 : 0;
    if (this.pendingPage > 0) return space + PAGE_BYTES + switched;
    return space + (this.pendingBreak ? 1 : switched);
  }

  /** Writes the pending space, then the pending page break or break, or (with `typed`) a type switch. */
  private flushSeparators(typed: boolean): void {
    if (this.pendingSpace || this.pendingBreak || this.pendingPage > 0) this.markWordStart(this.pos);
    if (this.pendingSpace) this.out[this.pos++] = SPACE;
    const page = this.pendingPage;
    if (page > 0) {
      this.out[this.pos++] = PAGE;
      this.out[this.pos++] = 0x80 | ((page >> 12) & 0x3f);
      this.out[this.pos++] = 0x80 | ((page >> 6) & 0x3f);
      this.out[this.pos++] = 0x80 | (page & 0x3f);
    }
    if (this.pendingBreak && page === 0) {
      this.out[this.pos++] = BREAK | this.type;
      this.written = this.type;
    } else if (typed && this.type !== this.written) {
      this.out[this.pos++] = SWITCH | this.type;
      this.written = this.type;
    }
    this.pendingSpace = false;
    this.pendingBreak = false;
    this.pendingPage = 0;
  }

  /** Writes words without leading or trailing space; at the cap, keeps only whole words. */
  private words(text: string): void {
    const separators = this.separatorBytes(true);
    const room = this.cap - (this.linkOpen ? 1 : 0) - this.pos - separators;
    // A UTF-16 unit takes at most 3 UTF-8 bytes: most text is known to fit without counting.
    if (3 * text.length <= room || Buffer.byteLength(text, 'utf8') <= room) {
      this.reserve(this.pos + separators + Math.min(room, 3 * text.length) + (this.linkOpen ? 1 : 0));
      this.flushSeparators(true);
      this.pos += this.out.write(text, this.pos, 'utf8');
      // Searched only when there is a space, so that the search stays inside this text.
      if (text.includes(' ')) this.markWordStart(this.out.lastIndexOf(SPACE, this.pos - 1));
      this.blockStart = false;
      return;
    }
    this.cutOff = true;
    if (room <= 0 && (this.pendingSpace || this.pendingBreak || this.pendingPage > 0)) return; // the word before is whole
    if (room > 0) {
      // Write what fits (Buffer.write never splits a character), then back off to
      // the last space, so that no half word is indexed.
      this.reserve(this.cap);
      this.flushSeparators(true);
      const textStart = this.pos;
      const end = textStart + this.out.write(text, textStart, room, 'utf8');
      const lastSpace = this.out.subarray(textStart, end).lastIndexOf(SPACE);
      if (lastSpace >= 0) {
        this.pos = textStart + lastSpace;
        return;
      }
    }
    // Not one word of this text fits: drop the word it began or continued.
    this.pos = this.wordStart;
    this.written = this.wordStartType;
  }
}

function corrupt(offset: number, message: string, at: ErrorPlace): SherlockError {
  return new SherlockError('SHERLOCK_CORRUPT_BUCKET', `document text: ${message}`, { ...at, offset: (at.offset ?? 0) + offset });
}

function hex(byte: number): string {
  return `0x${byte.toString(16).padStart(2, '0')}`;
}

/**
 * Length of the UTF-8 character starting at `i` (lead byte `lead` ≥ 0xC0), or
 * throws naming the first bad byte (RFC 3629 §4 well-formed sequences).
 */
function utf8Length(buf: Uint8Array, i: number, lead: number, at: ErrorPlace): number {
  let n: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) n = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    n = 3;
    if (lead === 0xe0) low = 0xa0; // overlong
    if (lead === 0xed) high = 0x9f; // surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    n = 4;
    if (lead === 0xf0) low = 0x90; // overlong
    if (lead === 0xf4) high = 0x8f; // above U+10FFFF
  } else throw corrupt(i, `byte ${hex(lead)} starts no UTF-8 character`, at);
  for (let k = 1; k < n; k++) {
    const byte = buf[i + k];
    if (byte === undefined) throw corrupt(i, 'UTF-8 character cut off at the end', at);
    if (byte < (k === 1 ? low : 0x80) || byte > (k === 1 ? high : 0xbf)) {
      throw corrupt(i + k, `bad UTF-8 continuation byte ${hex(byte)}`, at);
    }
  }
  return n;
}

/** What walkDocText reports, in order: text runs as byte ranges of the buffer, breaks, link brackets. */
export interface DocTextVisitor {
  text(start: number, end: number, type: WordType): void;
  /** `page`: a page break, the words after it on that page. */
  break(page?: number): void;
  open(n: number): void;
  close(): void;
}

/**
 * Walks `X` text: text runs (valid UTF-8, with their word type), breaks
 * and link brackets in order, to `visitor`. `at` names where the text lies,
 * for errors.
 */
export function walkDocText(buf: Uint8Array, visitor: DocTextVisitor, at: ErrorPlace = {}): void {
  let type: WordType = WORD_TYPE.text;
  let textStart = 0;
  let openAt = -1;
  let i = 0;
  while (i < buf.length) {
    const byte = buf[i]!;
    if (byte < 0x80) {
      i++;
      continue;
    }
    if (byte >= 0xc0) {
      i += utf8Length(buf, i, byte, at);
      continue;
    }
    if (i > textStart) visitor.text(textStart, i, type);
    const low = byte & 0x0f;
    switch (byte & 0xf0) {
      case SWITCH:
      case BREAK:
        if (low > LAST_TYPE) throw corrupt(i, `undefined word type ${low} in control byte ${hex(byte)}`, at);
        if ((byte & 0xf0) === BREAK) visitor.break();
        type = low as WordType;
        i++;
        break;
      case OPEN: {
        const second = buf[i + 1];
        if (second === undefined) throw corrupt(i, 'link bracket cut off at the end', at);
        if ((second & 0xc0) !== 0x80) throw corrupt(i + 1, `second byte ${hex(second)} of a link bracket is not 0x80–0xBF`, at);
        if (openAt >= 0) throw corrupt(i, `link bracket opened inside the bracket opened at ${(at.offset ?? 0) + openAt}`, at);
        openAt = i;
        visitor.open((low << 6) | (second & 0x3f));
        i += 2;
        break;
      }
      default:
        if (byte === PAGE) {
          if (i + PAGE_BYTES > buf.length) throw corrupt(i, 'page break cut off at the end', at);
          let page = 0;
          for (let k = 1; k < PAGE_BYTES; k++) {
            const next = buf[i + k]!;
            if ((next & 0xc0) !== 0x80) throw corrupt(i + k, `byte ${hex(next)} of a page break is not 0x80–0xBF`, at);
            page = (page << 6) | (next & 0x3f);
          }
          if (page < 2) throw corrupt(i, `page break to page ${page}`, at);
          visitor.break(page);
          i += PAGE_BYTES;
          break;
        }
        if (byte !== CLOSE) throw corrupt(i, `undefined control byte ${hex(byte)}`, at);
        if (openAt < 0) throw corrupt(i, 'link bracket closed but none is open', at);
        openAt = -1;
        visitor.close();
        i++;
    }
    textStart = i;
  }
  if (i > textStart) visitor.text(textStart, i, type);
  if (openAt >= 0) throw corrupt(openAt, 'link bracket never closed', at);
}

/** The tokens of `X` text, in order (walkDocText). */
export function readDocText(buf: Uint8Array, at: ErrorPlace = {}): DocTextToken[] {
  const bytes = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const tokens: DocTextToken[] = [];
  walkDocText(
    bytes,
    {
      text: (start, end, type) => tokens.push({ kind: 'text', text: bytes.toString('utf8', start, end), type }),
      break: (page) => tokens.push(page === undefined ? { kind: 'break' } : { kind: 'break', page }),
      open: (n) => tokens.push({ kind: 'link-open', n }),
      close: () => tokens.push({ kind: 'link-close' }),
    },
    at,
  );
  return tokens;
}

/**
 * Which blocks of `tokens` (numbered from 0, a break between two) are link
 * blocks: more than half of their text, in UTF-16 units, inside link
 * brackets. A site's menu, a table of contents, a list of related pages:
 * the indexer leaves them out of a card's near-duplicate signature and the
 * snippets show them last.
 */
export function linkBlocks(tokens: readonly DocTextToken[]): Uint8Array {
  let blocks = 1;
  for (const token of tokens) if (token.kind === 'break') blocks += 1;
  const out = new Uint8Array(blocks);
  let block = 0;
  let inLink = false;
  let linked = 0;
  let all = 0;
  const end = (): void => {
    if (2 * linked > all) out[block] = 1;
    linked = all = 0;
  };
  for (const token of tokens) {
    if (token.kind === 'text') {
      all += token.text.length;
      if (inLink) linked += token.text.length;
    } else if (token.kind === 'break') {
      end();
      block += 1;
    } else inLink = token.kind === 'link-open';
  }
  end();
  return out;
}

/** The words of `X` text without types or brackets, one line per block. */
export function plainText(buf: Uint8Array, at: ErrorPlace = {}): string {
  return plainTextAndAnchors(buf, at).text;
}

/**
 * plainText() and, in the same walk, the text inside each link bracket by
 * link number, whitespace collapsed (a Nutch anchor); empty brackets give "".
 * The text runs' bytes are copied into one buffer and decoded once: a string
 * per run was most of the cost of a segment's parse text.
 */
export function plainTextAndAnchors(buf: Uint8Array, at: ErrorPlace = {}): { text: string; anchors: Map<number, string> } {
  const out = Buffer.allocUnsafe(buf.length);
  let length = 0;
  const anchors = new Map<number, string>();
  let open = -1;
  // The open bracket's runs in `out`, as [start, end) pairs: a break inside a bracket is not the anchor's.
  const runs: number[] = [];
  walkDocText(
    buf,
    {
      text: (start, end) => {
        out.set(buf.subarray(start, end), length);
        if (open >= 0) runs.push(length, length + end - start);
        length += end - start;
      },
      break: () => {
        // Only a page break begins a text: a PDF whose first pages are blank.
        if (length > 0) out[length++] = 0x0a;
      },
      open: (n) => {
        open = n;
        runs.length = 0;
      },
      close: () => {
        let anchor = '';
        for (let r = 0; r < runs.length; r += 2) anchor += out.toString('utf8', runs[r], runs[r + 1]);
        anchors.set(open, anchor.replace(/\s+/g, ' ').trim());
        open = -1;
      },
    },
    at,
  );
  return { text: out.toString('utf8', 0, length), anchors };
}
