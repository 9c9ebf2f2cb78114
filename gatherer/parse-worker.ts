/**
 * The worker side of parse-pool.ts (and its inline path): parse one body and
 * flatten the document to bucket body attributes.
 */

import { documentBody, type ParsedDocument } from './parse.js';
import { parseResponseBody, type BodyInput } from './response-body.js';

export interface ParseTask {
  input: BodyInput;
  maxDecodedSize: number;
}

export interface ParseResult {
  kind: ParsedDocument['kind'];
  charset?: string;
  /** Body attributes, in order. */
  items: Array<[string, Uint8Array]>;
}

export async function parseToAttributes(task: ParseTask): Promise<ParseResult> {
  const { doc } = await parseResponseBody(task.input, task.maxDecodedSize);
  const items: Array<[string, Uint8Array]> = [];
  for (const item of documentBody(doc).items) {
    if (item.value === undefined) throw new Error(`parse produced a child object ${item.name}; flat attributes expected`);
    items.push([item.name, item.value]);
  }
  return { kind: doc.kind, ...(doc.charset === undefined ? {} : { charset: doc.charset }), items };
}

export default parseToAttributes;
