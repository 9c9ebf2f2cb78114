/**
 * Which character encoding a fetched text body is in, and its decoding to a
 * string: the order of HTML §13.2.3.2 "Determining the character encoding",
 * without the steps that need a browser (user override, parent document,
 * frequency analysis):
 *
 *  1. BOM — Encoding Standard §6 "BOM sniff": EF BB BF is UTF-8, FE FF
 *     UTF-16BE, FF FE UTF-16LE. It beats everything else, as in the Standard's
 *     "decode".
 *  2. The transport layer: the Content-Type `charset` parameter, if it is a
 *     label of an encoding we can decode (Encoding Standard §4.2 "get an
 *     encoding": trimmed, case-insensitive).
 *  3. For HTML and XHTML only, HTML §13.2.3.2 "prescan a byte stream to
 *     determine its encoding" over the first 1024 bytes: `<meta charset>`,
 *     `<meta http-equiv=content-type content="…charset=…">` and an XML
 *     declaration's `encoding` (in the prescan, a UTF-16 label means UTF-8 and
 *     x-user-defined means windows-1252). encoding-sniffer's Sniffer does this
 *     (its getEncoding is the same run, but returns only the name, and we also
 *     need to know whether a declaration was found).
 *  4. The default: windows-1252 for HTML (what browsers use for most
 *     locales), UTF-8 for XHTML (XML's default) and text/plain.
 *
 * A label that names no encoding we can decode is ignored and the next step
 * decides, as the Standard says, and `problems` says so. "Can decode" means
 * what Node's TextDecoder accepts (with full ICU: every Encoding Standard
 * encoding but "replacement" and x-user-defined); the prescan additionally
 * skips labels its own table lacks (iso-2022-jp). The name returned is the
 * Encoding Standard's name in lower case (`shift_jis`, `windows-1250`), which
 * is also TextDecoder's `encoding`.
 *
 * Decoding is not fatal: bytes that are not valid in the encoding become
 * U+FFFD, as in a browser. A BOM is removed.
 */

import { TextDecoder } from 'node:util';
import { ResultType, Sniffer } from 'encoding-sniffer/sniffer';

/** What the body is, as far as picking an encoding goes. */
export type TextKind = 'html' | 'xhtml' | 'text';

export type CharsetSource = 'bom' | 'header' | 'prescan' | 'default';

export interface CharsetChoice {
  /** Encoding Standard name, lower case, always decodable by decodeText. */
  encoding: string;
  source: CharsetSource;
  /** Labels that were ignored, and why. */
  problems: string[];
}

/** HTML §13.2.3.2: the prescan looks at no more than this many bytes. */
const PRESCAN_BYTES = 1024;

const DEFAULTS: Record<TextKind, string> = { html: 'windows-1252', xhtml: 'utf-8', text: 'utf-8' };

const decoders = new Map<string, TextDecoder>();

/** TextDecoder for an Encoding Standard label, or undefined when Node cannot decode it. Decoders are reused: decode() without `stream` keeps no state. */
function decoderFor(label: string): TextDecoder | undefined {
  const key = label.trim().toLowerCase();
  let decoder = decoders.get(key);
  if (decoder === undefined) {
    try {
      decoder = new TextDecoder(key);
    } catch {
      return undefined;
    }
    decoders.set(key, decoder);
  }
  return decoder;
}

/** Encoding Standard §6 "BOM sniff". */
function bomEncoding(body: Uint8Array): string | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  return undefined;
}

function shown(label: string): string {
  return JSON.stringify(label.length > 40 ? `${label.slice(0, 40)}…` : label);
}

/** Picks the encoding of `body` given the Content-Type charset parameter (if any). */
export function chooseCharset(body: Uint8Array, kind: TextKind, headerLabel?: string): CharsetChoice {
  const problems: string[] = [];
  const bom = bomEncoding(body);
  if (bom !== undefined) return { encoding: bom, source: 'bom', problems };
  if (headerLabel !== undefined) {
    const decoder = decoderFor(headerLabel);
    if (decoder !== undefined) return { encoding: decoder.encoding, source: 'header', problems };
    problems.push(`charset ${shown(headerLabel)} in Content-Type is not a known encoding; ignored`);
  }
  if (kind !== 'text') {
    const sniffer = new Sniffer({ maxBytes: PRESCAN_BYTES });
    sniffer.write(body);
    if (sniffer.resultType === ResultType.META_TAG || sniffer.resultType === ResultType.XML_ENCODING || sniffer.resultType === ResultType.XML_PREFIX) {
      const decoder = decoderFor(sniffer.encoding);
      if (decoder !== undefined) return { encoding: decoder.encoding, source: 'prescan', problems };
      problems.push(`charset ${shown(sniffer.encoding)} declared in the document cannot be decoded; ignored`);
    }
  }
  return { encoding: DEFAULTS[kind], source: 'default', problems };
}

/** Decodes `body` in `encoding` (a name chooseCharset returned); a leading BOM of that encoding is dropped. */
export function decodeText(body: Uint8Array, encoding: string): string {
  const decoder = decoderFor(encoding);
  if (decoder === undefined) throw new RangeError(`encoding ${shown(encoding)} cannot be decoded`);
  return decoder.decode(body);
}
