/**
 * Reading the JSON body of an HTTP request (the JSON API's POST): its
 * content type must be application/json (UTF-8, the only charset JSON has:
 * RFC 8259 §8.1), its size at most a bound, its text one JSON object. A
 * refusal says which, with the HTTP status it gets; a syntax error names
 * the character where the text stops being JSON, since JSON.parse no
 * longer says where.
 */

import type { IncomingMessage } from 'node:http';
import type { ErrorFields } from './protocol.js';

export type BodyOutcome = { ok: true; value: Record<string, unknown> } | { ok: false; status: 400 | 413 | 415; error: ErrorFields };

/** Reads the body of `req` when it is a JSON object of at most `max` bytes. */
export async function readJsonBody(req: IncomingMessage, max: number): Promise<BodyOutcome> {
  const bad = (status: 400 | 413 | 415, message: string): BodyOutcome => ({ ok: false, status, error: { code: 'BAD_MESSAGE', message } });
  const [media = '', ...params] = (req.headers['content-type'] ?? '').split(';').map((part) => part.trim().toLowerCase());
  const charset = params.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (media !== 'application/json' || (charset !== undefined && charset !== 'utf-8')) {
    return bad(415, 'the body must be JSON, sent with content-type: application/json');
  }
  const tooBig = `the body must be at most ${max} bytes`;
  if (Number(req.headers['content-length'] ?? 0) > max) return bad(413, tooBig);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) return bad(413, tooBig);
      chunks.push(chunk);
    }
  } catch {
    // The client went away mid-body: the refusal has no one to go to, and is no fault of ours.
    return bad(400, 'the body did not arrive whole');
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    return bad(400, 'the body is not UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const { offset, expected } = jsonSyntaxError(text);
    return bad(400, `the body is not valid JSON: at character ${offset}, expected ${expected}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad(400, 'the body must be a JSON object');
  return { ok: true, value: value as Record<string, unknown> };
}

/** Past this depth the scan stops rather than recurse further (JSON.parse has refused the text already). */
const MAX_DEPTH = 512;

/** Where `text`, which JSON.parse refused, stops being JSON: the offset (UTF-16 code units) and what a JSON text has there. */
export function jsonSyntaxError(text: string): { offset: number; expected: string } {
  let at = 0;
  class Stop {
    constructor(readonly expected: string) {}
  }
  const space = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  };
  const expect = (char: string, what: string) => {
    space();
    if (text[at] !== char) throw new Stop(what);
    at++;
  };
  const string = () => {
    at++;
    for (;;) {
      const char = text[at];
      if (char === undefined) throw new Stop('a closing quote');
      if (char === '"') return void at++;
      if (char < ' ') throw new Stop('no control character inside a string (escape it)');
      if (char !== '\\') {
        at++;
        continue;
      }
      at++;
      if (text[at] !== undefined && 'bfnrt"\\/'.includes(text[at]!)) at++;
      else if (text[at] === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(at + 1, at + 5))) at += 5;
      else throw new Stop('an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u and four hex digits');
    }
  };
  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const value = (depth: number): void => {
    space();
    if (depth > MAX_DEPTH) throw new Stop(`no deeper nesting than ${MAX_DEPTH}`);
    const char = text[at];
    if (char === '"') return string();
    if (char === '{' || char === '[') {
      const close = char === '{' ? '}' : ']';
      at++;
      space();
      if (text[at] === close) return void at++;
      for (;;) {
        if (close === '}') {
          space();
          if (text[at] !== '"') throw new Stop('a property name in double quotes');
          string();
          expect(':', '":"');
        }
        value(depth + 1);
        space();
        if (text[at] === close) return void at++;
        expect(',', `"," or "${close}"`);
      }
    }
    NUMBER.lastIndex = at;
    if (NUMBER.test(text)) return void (at = NUMBER.lastIndex);
    const word = ['true', 'false', 'null'].find((w) => text.startsWith(w, at));
    if (word === undefined) throw new Stop('a value (an object, array, string, number, true, false or null)');
    at += word.length;
  };
  try {
    value(0);
    space();
    if (at < text.length) throw new Stop('the end of the body');
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    return { offset: at, expected: err.expected };
  }
  // Unreachable for a text JSON.parse refused; said plainly rather than guessed.
  return { offset: text.length, expected: 'the end of the body' };
}
