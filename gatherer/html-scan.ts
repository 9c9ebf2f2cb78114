/**
 * A streaming HTML scanner for parse-html.ts: the events htmlparser2's
 * Parser (v10, HTML mode, lower-cased names) gives for a whole document,
 * found by jumping from `<` to `<` with indexOf instead of a state machine
 * stepping through every character, and without an attributes object for
 * tags whose attributes nobody reads.
 *
 * Kept from htmlparser2 (its Tokenizer, then its Parser), because the
 * documents' text and links were defined by them:
 *  - markup: `<` and an ASCII letter opens a tag, whose name runs to
 *    whitespace, `/` or `>`; attributes as the Tokenizer reads them (a name
 *    up to `=`, whitespace, `/` or `>`; a value quoted, or unquoted up to
 *    whitespace or `>`; the first of a name wins); `</` and a letter closes,
 *    up to whitespace or `>`, then skips to `>`; `</>` is text; `</` and
 *    anything else, `<!…>` and `<?…>` are skipped to the next `>`, `<!--` to
 *    `-->` (`<!-->` included), `<![CDATA[` to `]]>`; any other `<` is text;
 *  - raw text: after <script>, <style>, <textarea>, <xmp> (and the names
 *    the Tokenizer's shortcut takes for them: <xitle>, <xextarea>, <tmp>),
 *    everything up to `</name` followed by whitespace or `>` is text, decoded
 *    only for <title>; a self-closed one (`<script/>`) is not raw;
 *  - entities: decoded in text and in the attribute values read, by
 *    htmlparser2's own Tokenizer run over just the piece holding a `&`
 *    (legacy names without `;` in text, not before `=` or a letter in
 *    attributes);
 *  - tree: an open tag first closes what it implies (OPEN_IMPLIES_CLOSE,
 *    e.g. <p> or <li> before another); void elements close at once; a close
 *    tag closes every element above its match, and one with no match is
 *    ignored, except </p> (an empty p) and </br> (a br); `/>` closes only
 *    inside <svg> or <math> (not inside their HTML integration points);
 *    what is still open is closed at the end;
 *  - at the end of the input, a tag cut off inside its name or attributes is
 *    not opened (but a name cut off while it could still be a raw-text one
 *    is text) (though, as there, one cut inside its attributes already
 *    closed what it implies and is closed at the end); a cut-off comment is
 *    dropped; a cut-off declaration, `<?` or `</`-bogus comment is text, as
 *    it stands.
 * One difference, on input cut off inside a close tag's tail (`</p junk`
 * with no `>`): htmlparser2 gives the document's last character as text, this
 * scanner nothing.
 */

import { Tokenizer } from 'htmlparser2';

/** Parser's openImpliesClose: opening the key closes open elements of the set while one is innermost. */
const P = new Set(['p']);
const FORM = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const TABLE_SECTIONS = new Set(['thead', 'tbody']);
const DD_DT = new Set(['dd', 'dt']);
const RT_RP = new Set(['rt', 'rp']);
const OPEN_IMPLIES_CLOSE = new Map<string, ReadonlySet<string>>([
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th'])],
  ['td', new Set(['thead', 'th', 'td'])],
  ['body', new Set(['head', 'link', 'script'])],
  ['li', new Set(['li'])],
  ...['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((name) => [name, P] as const),
  ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((name) => [name, FORM] as const),
  ['option', new Set(['option'])],
  ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', DD_DT],
  ['dt', DD_DT],
  ...[
    'address', 'article', 'aside', 'blockquote', 'details', 'div', 'dl', 'fieldset', 'figcaption', 'figure', 'footer',
    'form', 'header', 'hr', 'main', 'nav', 'ol', 'pre', 'section', 'table', 'ul',
  ].map((name) => [name, P] as const),
  ['rt', RT_RP],
  ['rp', RT_RP],
  ['tbody', TABLE_SECTIONS],
  ['tfoot', TABLE_SECTIONS],
]);
const VOID = new Set([
  'area', 'base', 'basefont', 'br', 'col', 'command', 'embed', 'frame', 'hr', 'img', 'input', 'isindex', 'keygen',
  'link', 'meta', 'param', 'source', 'track', 'wbr',
]);
const FOREIGN = new Set(['math', 'svg']);
const INTEGRATION_POINTS = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignobject', 'desc', 'title']);

/** What the scanner reports, in document order. */
export interface ScanHandler {
  /** An element opened; `attributes` only for the names in `ScanOptions.attributesOf`. */
  open(name: string, attributes: ReadonlyMap<string, string> | undefined): void;
  /** An element closed (explicitly, implied, void, or at the end). */
  close(name: string): void;
  /** Decoded text; pieces may come in several calls. */
  text(data: string): void;
  /** While true, text is not sliced, decoded or reported. */
  readonly muted: boolean;
}

const TAB = 0x09;
const LF = 0x0a;
const FF = 0x0c;
const CR = 0x0d;
const SPACE = 0x20;
const BANG = 0x21;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const DASH = 0x2d;
const SLASH = 0x2f;
const EQUALS = 0x3d;
const GT = 0x3e;
const QUESTION = 0x3f;
const LBRACKET = 0x5b;

function isWhitespace(c: number): boolean {
  return c === SPACE || c === LF || c === TAB || c === FF || c === CR;
}

function isAlpha(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

/** Ends a tag or attribute name (Tokenizer's isEndOfTagSection). */
function endsName(c: number): boolean {
  return c === SLASH || c === GT || isWhitespace(c);
}

/**
 * The Tokenizer's raw-text shortcut: the first letter picks a family, the
 * second the rest to match and the end tag waited for (hence <xitle> ends
 * like <title>).
 */
const T_FAMILY: Readonly<Record<string, readonly [rest: string, end: string]>> = { i: ['tle', 'title'], e: ['xtarea', 'textarea'], m: ['p', 'xmp'] };
const RAW_TEXT: Readonly<Record<string, Readonly<Record<string, readonly [rest: string, end: string]>>>> = {
  s: { c: ['ript', 'script'], t: ['yle', 'style'] },
  t: T_FAMILY,
  x: T_FAMILY,
};

/** The end tag a raw-text element (lower-case name) waits for. */
function rawTextEnd(name: string): string | undefined {
  const entry = RAW_TEXT[name[0]!]?.[name[1] ?? ''];
  return entry !== undefined && name.slice(2) === entry[0] ? entry[1] : undefined;
}

/** Whether a name cut off by the end of input is text: the Tokenizer was still matching a raw-text name. */
function cutInRawTextName(name: string): boolean {
  const family = RAW_TEXT[name[0]!];
  if (family === undefined) return false;
  if (name.length === 1) return true;
  const entry = family[name[1]!];
  return entry !== undefined && entry[0].startsWith(name.slice(2));
}

/** Entities decoded by htmlparser2's Tokenizer over one piece of markup, so that they decode exactly as there. */
class EntityDecoder {
  private input = '';
  private out = '';
  private readonly tokenizer: Tokenizer;

  constructor() {
    const slice = (start: number, end: number): void => {
      this.out += this.input.slice(start, end);
    };
    const codePoint = (cp: number): void => {
      this.out += String.fromCodePoint(cp);
    };
    const ignore = (): void => {};
    this.tokenizer = new Tokenizer(
      { decodeEntities: true },
      {
        ontext: slice,
        ontextentity: codePoint,
        onattribdata: slice,
        onattribentity: codePoint,
        onattribend: ignore,
        onattribname: ignore,
        oncdata: ignore,
        onclosetag: ignore,
        oncomment: ignore,
        ondeclaration: ignore,
        onend: ignore,
        onopentagend: ignore,
        onopentagname: ignore,
        onprocessinginstruction: ignore,
        onselfclosingtag: ignore,
      },
    );
  }

  /** Decodes the text or attribute value that `markup` carries. */
  private run(markup: string): string {
    this.input = markup;
    this.out = '';
    this.tokenizer.reset();
    this.tokenizer.write(markup);
    this.tokenizer.end();
    return this.out;
  }

  /** Text outside raw-text elements, which holds no markup. */
  text(raw: string): string {
    return this.run(raw);
  }

  /** The content of a <title>, which may hold `<` of any kind but no `</title` end. */
  title(raw: string): string {
    return this.run(`<title>${raw}`);
  }

  /** An attribute value as it stood, with its quote (none for unquoted). */
  attribute(raw: string, quote: number): string {
    const q = quote === 0 ? '' : String.fromCharCode(quote);
    return this.run(`<a v=${q}${raw}${q}>`);
  }
}

const decoder = new EntityDecoder();

/** Scans a whole document, reporting to `handler`; attributes are read only for the tags in `attributesOf`. */
export function scanHtml(html: string, handler: ScanHandler, attributesOf: ReadonlySet<string>): void {
  new Scanner(html, handler, attributesOf).run();
}

/**
 * Open elements, innermost last, with how many of each name are open. A
 * close tag with no open match is answered from the count: searching the
 * stack for it made a page of 80,000 `<div>` then 80,000 `</x>` (0.7 MiB)
 * take 12 s to scan, and a 10 MiB one would take most of an hour.
 */
class OpenElements {
  private readonly names: string[] = [];
  private readonly counts = new Map<string, number>();

  get length(): number {
    return this.names.length;
  }

  top(): string | undefined {
    return this.names[this.names.length - 1];
  }

  holds(name: string): boolean {
    return (this.counts.get(name) ?? 0) > 0;
  }

  push(name: string): void {
    this.names.push(name);
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
  }

  pop(): string {
    const name = this.names.pop()!;
    this.counts.set(name, this.counts.get(name)! - 1);
    return name;
  }
}

class Scanner {
  private readonly n: number;
  private readonly stack = new OpenElements();
  /** Whether `/>` closes: inside <svg>/<math>, innermost last. */
  private readonly foreign: boolean[] = [false];

  constructor(
    private readonly html: string,
    private readonly handler: ScanHandler,
    private readonly attributesOf: ReadonlySet<string>,
  ) {
    this.n = html.length;
  }

  run(): void {
    const { html, n } = this;
    let pos = 0;
    let textStart = 0;
    for (;;) {
      const lt = html.indexOf('<', pos);
      if (lt < 0 || lt + 1 >= n) break;
      const c = html.charCodeAt(lt + 1);
      let next: number;
      if (isAlpha(c)) {
        this.text(textStart, lt);
        next = this.openTag(lt + 1);
      } else if (c === SLASH) {
        const after = this.closeTag(lt, textStart);
        if (after === undefined) {
          pos = lt + 2;
          continue;
        }
        next = after;
      } else if (c === BANG) {
        this.text(textStart, lt);
        next = this.declaration(lt + 2);
      } else if (c === QUESTION) {
        this.text(textStart, lt);
        next = this.skipTo(lt + 2, lt + 2);
      } else {
        pos = lt + 1;
        continue;
      }
      pos = textStart = next;
    }
    this.text(textStart, n);
    const { stack, handler } = this;
    while (stack.length > 0) handler.close(stack.pop());
  }

  /** Reports html[start, end) as text, entities decoded. */
  private text(start: number, end: number): void {
    if (end <= start || this.handler.muted) return;
    const raw = this.html.slice(start, end);
    this.handler.text(raw.includes('&') ? decoder.text(raw) : raw);
  }

  /** Text of a raw-text element (only a title's is decoded), or markup cut off at the end. */
  private rawText(start: number, end: number, title: boolean): void {
    if (end <= start || this.handler.muted) return;
    const raw = this.html.slice(start, end);
    this.handler.text(title && raw.includes('&') ? decoder.title(raw) : raw);
  }

  /** To the `>` at or after `from`; at the end of input, html[textFrom…] is text, as it stands. Returns where text resumes. */
  private skipTo(from: number, textFrom: number): number {
    const gt = this.html.indexOf('>', from);
    if (gt >= 0) return gt + 1;
    this.rawText(textFrom, this.n, false);
    return this.n;
  }

  /** `<!` seen, `at` just after it. */
  private declaration(at: number): number {
    const { html, n } = this;
    if (at >= n) return n;
    const c = html.charCodeAt(at);
    if (c === LBRACKET && html.startsWith('CDATA[', at + 1)) {
      const end = html.indexOf(']]>', at + 7);
      return end < 0 ? n : end + 3;
    }
    if (c === DASH) {
      if (at + 1 >= n) return this.skipTo(n, at);
      if (html.charCodeAt(at + 1) === DASH) {
        // The two dashes that open the comment may also close it: `<!-->`.
        const end = html.indexOf('-->', at);
        return end < 0 ? n : end + 3;
      }
      return this.skipTo(at + 2, at);
    }
    return this.skipTo(at + 1, at);
  }

  /** `</` at `lt`; undefined when it is text (`</>`, `</ >`, or only whitespace to the end). */
  private closeTag(lt: number, textStart: number): number | undefined {
    const { html, n } = this;
    let i = lt + 2;
    while (i < n && isWhitespace(html.charCodeAt(i))) i++;
    if (i >= n) return undefined;
    const c = html.charCodeAt(i);
    if (c === GT) return undefined;
    this.text(textStart, lt);
    if (!isAlpha(c)) return this.skipTo(i, i);
    const start = i;
    while (i < n && html.charCodeAt(i) !== GT && !isWhitespace(html.charCodeAt(i))) i++;
    if (i >= n) return n;
    this.closeElement(html.slice(start, i).toLowerCase());
    const gt = html.indexOf('>', i);
    return gt < 0 ? n : gt + 1;
  }

  /** Parser.onclosetag. */
  private closeElement(name: string): void {
    const { stack, handler } = this;
    if (FOREIGN.has(name) || INTEGRATION_POINTS.has(name)) this.foreign.pop();
    if (VOID.has(name)) {
      if (name === 'br') {
        handler.open('br', this.attributesOf.has('br') ? new Map() : undefined);
        handler.close('br');
      }
      return;
    }
    if (stack.holds(name)) {
      // Everything above the innermost `name`, then it.
      while (stack.length > 0) {
        const top = stack.pop();
        handler.close(top);
        if (top === name) break;
      }
    } else if (name === 'p') {
      this.startElement('p');
      handler.open('p', this.attributesOf.has('p') ? new Map() : undefined);
      stack.pop();
      handler.close('p');
    }
  }

  /** Parser.emitOpenTag: implied closes, then onto the stack. */
  private startElement(name: string): void {
    const { stack, handler } = this;
    const implied = OPEN_IMPLIES_CLOSE.get(name);
    if (implied !== undefined) {
      while (stack.length > 0 && implied.has(stack.top()!)) handler.close(stack.pop());
    }
    if (VOID.has(name)) return;
    stack.push(name);
    if (FOREIGN.has(name)) this.foreign.push(true);
    else if (INTEGRATION_POINTS.has(name)) this.foreign.push(false);
  }

  /** An open tag whose name starts at `start`; returns where text resumes. */
  private openTag(start: number): number {
    const { html, n, handler } = this;
    let i = start + 1;
    while (i < n && !endsName(html.charCodeAt(i))) i++;
    if (i >= n) {
      // Cut off inside the name: nothing, or text while it could still have been a raw-text name.
      if (cutInRawTextName(html.slice(start).toLowerCase())) this.text(start, n);
      return n;
    }
    const name = html.slice(start, i).toLowerCase();
    this.startElement(name);
    const attributes = this.attributesOf.has(name) ? new Map<string, string>() : undefined;
    let selfClosing = false;
    for (;;) {
      while (i < n && isWhitespace(html.charCodeAt(i))) i++;
      if (i >= n) return n;
      let c = html.charCodeAt(i);
      if (c === GT) break;
      if (c === SLASH) {
        i++;
        while (i < n && isWhitespace(html.charCodeAt(i))) i++;
        if (i >= n) return n;
        if (html.charCodeAt(i) === GT) {
          selfClosing = true;
          break;
        }
        continue;
      }
      // An attribute name: its first character whatever it is, then up to `=`, whitespace, `/` or `>`.
      const nameStart = i++;
      while (i < n && (c = html.charCodeAt(i)) !== EQUALS && !endsName(c)) i++;
      if (i >= n) return n;
      const nameEnd = i;
      while (i < n && isWhitespace(html.charCodeAt(i))) i++;
      if (i >= n) return n;
      if (html.charCodeAt(i) !== EQUALS) {
        if (attributes !== undefined) this.attribute(attributes, nameStart, nameEnd, '');
        continue;
      }
      i++;
      while (i < n && isWhitespace(html.charCodeAt(i))) i++;
      if (i >= n) return n;
      const quote = html.charCodeAt(i);
      let valueStart: number;
      let valueEnd: number;
      if (quote === DQUOTE || quote === SQUOTE) {
        valueStart = i + 1;
        valueEnd = html.indexOf(quote === DQUOTE ? '"' : "'", valueStart);
        if (valueEnd < 0) return n;
        i = valueEnd + 1;
      } else {
        valueStart = i;
        while (i < n && (c = html.charCodeAt(i)) !== GT && !isWhitespace(c)) i++;
        if (i >= n) return n;
        valueEnd = i;
      }
      if (attributes !== undefined) {
        const raw = html.slice(valueStart, valueEnd);
        const value = raw.includes('&') ? decoder.attribute(raw, quote === DQUOTE || quote === SQUOTE ? quote : 0) : raw;
        this.attribute(attributes, nameStart, nameEnd, value);
      }
    }
    const end = i + 1;
    const foreign = this.foreign[this.foreign.length - 1] === true;
    handler.open(name, attributes);
    if (VOID.has(name)) handler.close(name);
    if (selfClosing) {
      if (foreign && this.stack.top() === name) {
        this.stack.pop();
        handler.close(name);
      }
      return end;
    }
    const rawEnd = rawTextEnd(name);
    return rawEnd === undefined ? end : this.rawTextElement(end, rawEnd);
  }

  private attribute(attributes: Map<string, string>, start: number, end: number, value: string): void {
    const name = this.html.slice(start, end).toLowerCase();
    if (!attributes.has(name)) attributes.set(name, value);
  }

  /** Raw text from `start` to `</end` and whitespace or `>`; then that close tag. */
  private rawTextElement(start: number, end: string): number {
    const { html, n } = this;
    let from = start;
    for (;;) {
      const at = html.indexOf('</', from);
      const after = at + 2 + end.length;
      if (at < 0 || after >= n) break;
      let k = 0;
      while (k < end.length && (html.charCodeAt(at + 2 + k) | 0x20) === end.charCodeAt(k)) k++;
      const c = html.charCodeAt(after);
      if (k === end.length && (c === GT || isWhitespace(c))) {
        this.rawText(start, at, end === 'title');
        this.closeElement(html.slice(at + 2, after).toLowerCase());
        const gt = html.indexOf('>', after);
        return gt < 0 ? n : gt + 1;
      }
      from = at + 1;
    }
    this.rawText(start, n, end === 'title');
    return n;
  }
}
