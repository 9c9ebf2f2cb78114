/**
 * XML that is neither a sitemap nor a feed (issue 30: "XML: text"): its
 * character data as text, words apart at every tag (data formats put one
 * value an element: `<name>Ada</name><born>1815</born>` is two words, not
 * "Ada1815"). No title, links or structure: an XML vocabulary says which
 * element is a title, and we know only sitemaps' and feeds'.
 *
 * As for sitemaps, reading stops at an element nested deeper than
 * MAX_DEPTH (htmlparser2's close-tag search is quadratic in the depth;
 * gatherer/sitemap.ts), and once the text is cut at its cap.
 */

import { Parser } from 'htmlparser2';
import type { TextBuilder } from '../common/bucket/doc-text.js';
import { MAX_DEPTH, TooDeep } from './sitemap.js';

/** Thrown once the text is full: nothing more would be kept. */
class Full extends Error {}

/** Writes the character data of `xml` into `text`; what was cut short, one sentence each. */
export function parseXmlText(xml: string, text: TextBuilder): string[] {
  let depth = 0;
  const parser = new Parser(
    {
      onopentag() {
        if (++depth > MAX_DEPTH) throw new TooDeep();
        text.append(' ');
      },
      ontext(chunk) {
        text.append(chunk);
        if (text.cut) throw new Full();
      },
      onclosetag() {
        depth -= 1;
        text.append(' ');
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  try {
    parser.end(xml);
  } catch (err) {
    if (err instanceof TooDeep) return [`elements nested deeper than ${MAX_DEPTH}: the rest of the XML ignored`];
    if (!(err instanceof Full)) throw err;
  }
  return [];
}
