/**
 * GET /opensearch.xml: the OpenSearch 1.1 description that lets a browser
 * add the searcher to its search engines (the page's <link rel="search">
 * points at it), with the results page and the suggestions route
 * (OpenSearch Suggestions 1.1). Its URLs are absolute, made from the Host
 * the request named (server.ts has refused a Host that is not ours), and
 * https when a TLS proxy in front says so (X-Forwarded-Proto: it can only
 * fool the client that sends it).
 */

import type { IncomingMessage } from 'node:http';
import { escapeHtml } from './render.js';

export const OPENSEARCH_TYPE = 'application/opensearchdescription+xml';

/** The description for the searcher at `base` (scheme, host and port, no trailing slash), named `name`. */
export function openSearchDescription(base: string, name: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<OpenSearchDescription xmlns="http://a9.com/-/spec/opensearch/1.1/">
<ShortName>${escapeHtml(name)}</ShortName>
<Description>${escapeHtml(`Search with ${name}`)}</Description>
<InputEncoding>UTF-8</InputEncoding>
<Url type="text/html" method="get" template="${escapeHtml(`${base}/search?q={searchTerms}`)}"/>
<Url type="application/x-suggestions+json" method="get" template="${escapeHtml(`${base}/api/suggest?q={searchTerms}&format=opensearch`)}"/>
<Url type="${OPENSEARCH_TYPE}" rel="self" template="${escapeHtml(`${base}/opensearch.xml`)}"/>
</OpenSearchDescription>
`;
}

/** The searcher's base URL as this request reached it: the Host it named (or the address it came in on, for a client that named none). */
export function requestBase(req: IncomingMessage): string {
  const forwarded = req.headers['x-forwarded-proto'];
  const scheme = forwarded === 'https' ? 'https' : 'http';
  const host = req.headers.host ?? `${req.socket.localFamily === 'IPv6' ? `[${req.socket.localAddress}]` : req.socket.localAddress}:${req.socket.localPort}`;
  return `${scheme}://${host}`;
}
