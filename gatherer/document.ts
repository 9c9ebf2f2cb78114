/**
 * A fetched object as a bucket: header attributes from the fetch, body
 * attributes from parsing. The attribute letters are listed for everyone in
 * docs/buckets.md; the header ones written here:
 *
 *   U  URL (canonical)            D  download time, Unix seconds
 *   H  HTTP status                T  content type (MIME type, lower case)
 *   E  charset used for decoding  L  Last-Modified, Unix seconds
 *   e  ETag, as sent              C  MD5 of the body as received, hex
 *   S  Server header              W  Retry-After, seconds
 *   k  the address fetched from   !  "<code> <message>" when code ≠ 0
 *   a  ARC file, offset, length   q  queue entry (store.ts adds both)
 *
 * The body is parse.ts's documentBody(); a redirect adds its target as `Y`.
 */

import { BucketObject } from '../common/bucket/bucket.js';
import type { FetchResponse } from './fetch.js';
import { CODE, errorAttribute, type Outcome } from './outcome.js';
import { contentType } from './content-type.js';
import type { Refusal } from './parse.js';

/** The first value of a header, by case-insensitive name. */
export function headerValue(headers: readonly (readonly [string, string])[], name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [n, v] of headers) if (n.toLowerCase() === lower) return v;
  return undefined;
}

export interface HeaderFacts {
  url: string;
  /** When the fetch began (ms). */
  time: number;
  code: number;
  message: string;
  status?: number;
  address?: string;
  headers?: readonly (readonly [string, string])[];
  /** MD5 of the body as received, hex (common/archive/digest.ts md5Hex); written when there is a status. */
  md5?: string;
  charset?: string;
  retryAfter?: number;
}

export function documentHeader(facts: HeaderFacts): BucketObject {
  const header = new BucketObject();
  header.add('U', facts.url);
  header.add('D', String(Math.floor(facts.time / 1000)));
  if (facts.status !== undefined) header.add('H', String(facts.status));
  const headers = facts.headers ?? [];
  const { mime } = contentType(headerValue(headers, 'content-type'));
  if (mime !== undefined) header.add('T', mime);
  if (facts.charset !== undefined) header.add('E', facts.charset);
  const modified = Date.parse(headerValue(headers, 'last-modified') ?? '');
  if (Number.isFinite(modified)) header.add('L', String(Math.floor(modified / 1000)));
  const etag = headerValue(headers, 'etag');
  if (etag !== undefined && etag !== '') header.add('e', etag);
  if (facts.md5 !== undefined && facts.status !== undefined) header.add('C', facts.md5);
  const server = headerValue(headers, 'server');
  if (server !== undefined && server !== '') header.add('S', server.slice(0, 200));
  if (facts.retryAfter !== undefined) header.add('W', String(facts.retryAfter));
  if (facts.address !== undefined) header.add('k', facts.address);
  if (facts.code !== 0) header.add('!', errorAttribute(facts.code, facts.message));
  return header;
}

/** Header facts of a fetch response; `md5` is its body's (made where the body was archived). */
export function responseFacts(response: FetchResponse, found: { charset?: string; md5: string }): HeaderFacts {
  const facts: HeaderFacts = {
    url: response.url,
    time: response.startedAt.getTime(),
    code: response.code,
    message: response.message,
    address: response.address,
    headers: response.headers,
    md5: found.md5,
  };
  if (response.status !== undefined) facts.status = response.status;
  if (found.charset !== undefined) facts.charset = found.charset;
  if (response.retryAfter !== undefined) facts.retryAfter = response.retryAfter;
  return facts;
}

/** What parsing a document's body found (parse-worker.ts), its body part deflated. */
export interface ParsedBody {
  kind: string;
  charset?: string;
  body: Buffer;
  /** Why it could not be parsed (parse.ts). */
  refused?: Refusal;
}

/**
 * The bucket of a response: its header from the fetch, its body from
 * parsing. A 200 whose body is of no type we parse is `unsupported_type`
 * (stored, not parsed); a redirect's body is its target as `Y`. The
 * gatherer's fetches and an archive's import both come through here.
 */
export function responseBucket(response: FetchResponse, md5: string, parsed: ParsedBody | undefined): { header: BucketObject; body: BucketObject | Buffer; outcome: Outcome } {
  let body: BucketObject | Buffer = parsed?.body ?? new BucketObject();
  let result = response;
  if (parsed?.refused !== undefined && response.code === CODE.ok) {
    const { outcome, message } = parsed.refused;
    result = { ...response, outcome, code: outcome === 'too_large' ? CODE.tooLarge : CODE.unparseable, message: `${message}: stored, not parsed` };
  } else if (parsed?.kind === 'other' && response.code === CODE.ok) {
    const type = headerValue(response.headers, 'content-type') ?? 'no content type';
    result = { ...response, outcome: 'unsupported_type', code: CODE.unsupportedType, message: `${type}: stored, not parsed` };
  }
  if (result.outcome === 'redirect' && result.location !== undefined) body = new BucketObject().add('Y', result.location);
  const found = { md5, ...(parsed?.charset === undefined ? {} : { charset: parsed.charset }) };
  return { header: documentHeader(responseFacts(result, found)), body, outcome: result.outcome };
}
