/**
 * What a route of the JSON API is (http-api.ts routes and guards them), and
 * the readers of GET query parameters into the JSON object a POST body
 * would hold: one value where a field takes one, digits as numbers,
 * true/false as booleans; anything else is passed on as the text it is, so
 * the field's own check refuses it in the WebSocket's words.
 */

import type { IncomingMessage } from 'node:http';
import type { Shared } from './connection.js';
import { MessageError, type ErrorFields } from './protocol.js';

/** What a route gives: the JSON text of its answer (and its media type when not application/json, e.g. OpenSearch suggestions), or the error (with the id the request's body gave). */
export type ApiAnswer = { ok: true; json: string; type?: string } | { ok: false; error: ErrorFields; id?: string | undefined };

export interface ApiRoute {
  /** The GET query parameters as the JSON object a POST body holds; throws MessageError naming a parameter that is not one. */
  fromQuery(params: URLSearchParams): Record<string, unknown>;
  /** Checks the fields (throws MessageError naming the one at fault) and gives the work they ask for; `req` for what its headers ask (Accept). */
  accept(value: Record<string, unknown>, req: IncomingMessage): (shared: Shared, signal: AbortSignal) => Promise<ApiAnswer>;
}

/** The one value of a query parameter; a parameter given twice is refused, as a JSON object cannot hold a field twice. */
export function oneParam(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new MessageError(`${name} is given ${values.length} times; it takes one value`, name);
  return values[0];
}

/** A parameter of digits as the number it writes; anything else as given, for the field's check to refuse by its own words. */
export function wholeParam(params: URLSearchParams, name: string): number | string | undefined {
  const text = oneParam(params, name);
  return text !== undefined && /^\d{1,9}$/.test(text) ? Number(text) : text;
}

/** "true" and "false" (also 1 and 0) as booleans; anything else as given, for the field's check to refuse. */
export function booleanParam(params: URLSearchParams, name: string): boolean | string | undefined {
  const text = oneParam(params, name);
  return text === 'true' || text === '1' ? true : text === 'false' || text === '0' ? false : text;
}

/** Refuses a parameter not in `known`, naming it and the ones there are. */
export function onlyParams(params: URLSearchParams, path: string, known: readonly string[]): void {
  for (const name of params.keys()) {
    if (!known.includes(name)) throw new MessageError(`${path} has no parameter "${name}"; there are ${known.join(', ')}`, name);
  }
}
