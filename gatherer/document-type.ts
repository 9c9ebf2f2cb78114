/**
 * Which kind of parser a body goes to, decided before any parser is loaded:
 * the main thread asks this of every response, and importing parse.ts there
 * would load every parser and the language detector's tables (about 130 MB)
 * into a thread that never parses.
 */

import { OFFICE_TYPES } from '../common/index/cardinfo.js';

const PDF_MAGIC = Buffer.from('%PDF-', 'latin1');

/** True when a body is a PDF: typed so, or of no type and starting as one. */
export function isPdf(mime: string | undefined, body: Uint8Array): boolean {
  return mime === 'application/pdf' || (mime === undefined && Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, PDF_MAGIC.length)).equals(PDF_MAGIC));
}

/** True for a body parsed where its time and memory can be capped (parse-pool.ts): a PDF or an office file. */
export function needsDocumentWorker(mime: string | undefined, body: Uint8Array): boolean {
  return isPdf(mime, body) || (mime !== undefined && OFFICE_TYPES.has(mime));
}
