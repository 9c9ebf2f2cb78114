/**
 * The worker side of parse-pool.ts (and its inline path): parse one body and
 * turn the document into the deflated body part of its bucket, so that the
 * main thread only adds the header.
 */

import { deflatedBody } from '../common/bucket.js';
import { documentBody } from '../common/doc-body.js';
import type { ParsedDocument } from './parse.js';
import { parseResponseBody, type BodyInput } from './response-body.js';

export interface ParseTask {
  input: BodyInput;
  maxDecodedSize: number;
}

export interface ParseResult {
  kind: ParsedDocument['kind'];
  charset?: string;
  /** bucket.ts deflatedBody() of the body attributes. */
  body: Uint8Array;
}

export async function parseToBody(task: ParseTask): Promise<ParseResult> {
  const { doc } = await parseResponseBody(task.input, task.maxDecodedSize);
  return { kind: doc.kind, ...(doc.charset === undefined ? {} : { charset: doc.charset }), body: deflatedBody(documentBody(doc)) };
}

export default parseToBody;
