/**
 * From a fetched body to a parsed document: content decoding under the
 * decoded-size cap, then parse.ts. The daemon stores the result as bucket
 * attributes (through parse-pool.ts, in worker threads); `sherlock check
 * fetch` prints it; both go through here so they always agree.
 */

import { decodeContent, type Decoded } from '../common/archive/content-decoding.js';
import { contentType } from './content-type.js';
import { headerValue } from './document.js';
import { parseDocument, type ParsedDocument } from './parse.js';

/** What parsing needs of a response. */
export interface BodyInput {
  url: string;
  headers: readonly (readonly [string, string])[];
  body: Buffer;
}

export async function parseResponseBody(response: BodyInput, maxDecodedSize: number): Promise<{ doc: ParsedDocument; decoded: Decoded }> {
  const type = contentType(headerValue(response.headers, 'content-type'));
  const decoded = await decodeContent(response.body, headerValue(response.headers, 'content-encoding'), maxDecodedSize, response.url);
  const contentLanguage = headerValue(response.headers, 'content-language');
  const doc = await parseDocument({ url: response.url, contentType: type.mime, charsetParam: type.charset, body: decoded.data, ...(contentLanguage === undefined ? {} : { contentLanguage }) }, maxDecodedSize);
  return { doc, decoded };
}
