/**
 * What a response's Content-Type says, and what the gatherer makes of it
 * before the body arrives: `gatherer.type_limits`, a list of "PATTERN SIZE"
 * entries, gives a type's body cap (over `max_body_size`, the cap of every
 * other type), or 0 for a type whose body is not fetched at all (the
 * response is recorded `unsupported_type` with its header only). A pattern
 * is a MIME type ("application/pdf"), a prefix ending in "*"
 * ("image/*", "application/vnd.oasis.opendocument.*") or "*"; the first
 * entry that matches decides. Only a 2xx response's type is looked up: an
 * error page or a redirect keeps max_body_size. An archive's import cuts a
 * payload at its type's cap too, but imports a type capped at 0: the record
 * is archived already.
 */

import { z } from 'zod';
import { parseSize } from '../common/units.js';

/** Content-Type split into the MIME type (lower case) and its charset parameter. */
export function contentType(value: string | undefined): { mime?: string; charset?: string } {
  if (value === undefined) return {};
  const [type, ...params] = value.split(';');
  const mime = type!.trim().toLowerCase();
  const out: { mime?: string; charset?: string } = mime === '' ? {} : { mime };
  for (const param of params) {
    const m = /^\s*charset\s*=\s*"?([^";\s]+)"?\s*$/i.exec(param);
    if (m !== null) out.charset = m[1]!;
  }
  return out;
}

export interface TypeLimit {
  /** Lower case; a trailing "*" matches any rest. */
  pattern: string;
  /** Bytes of body kept; 0: the body is not fetched. */
  bytes: number;
}

const PATTERN = /^(\*|[a-z0-9][a-z0-9!#$&^_.+-]*\/(\*|[a-z0-9][a-z0-9!#$&^_.+-]*\*?))$/;
const MAX_LIMIT = parseSize('1GiB')!;

/** One `type_limits` entry, "PATTERN SIZE", validated. */
export const typeLimit = z.string().transform((text, ctx): TypeLimit => {
  const [pattern = '', size, extra] = text.trim().toLowerCase().split(/\s+/);
  const bytes = size === undefined ? undefined : parseSize(size);
  if (!PATTERN.test(pattern) || bytes === undefined || extra !== undefined || bytes > MAX_LIMIT) {
    ctx.addIssue({ code: 'custom', message: `expected "MIME-TYPE SIZE" such as "application/pdf 64MiB", "image/* 0" (not fetched) or "* 10MiB", the size at most 1GiB; not ${JSON.stringify(text)}` });
    return z.NEVER;
  }
  return { pattern, bytes };
});

/** The body cap of a 2xx response of this Content-Type header: the first matching limit's, else `fallback`. */
export function bodyCap(limits: readonly TypeLimit[], header: string | undefined, fallback: number): number {
  const mime = contentType(header).mime ?? '';
  for (const { pattern, bytes } of limits) {
    if (pattern === '*' || pattern === mime || (pattern.endsWith('*') && mime.startsWith(pattern.slice(0, -1)))) return bytes;
  }
  return fallback;
}
