/**
 * GET and POST /api/suggest (http-api.ts routes them): the WebSocket
 * suggest without its id, checked by checkSuggestFields and run by
 * runSuggest as the socket's are. The answer is the socket's `suggestions`
 * message without the id; with `format=opensearch`, or an Accept header
 * asking for `application/x-suggestions+json`, it is the OpenSearch
 * suggestions array instead, whose URLs point at this searcher's results
 * page as the request reached it, which is what a browser offering the
 * engine (opensearch.xml) asks for.
 *
 * Over HTTP there is no connection whose message bucket could count
 * suggests, so each takes a token from its IP's search bucket.
 */

import { onlyParams, oneParam, wholeParam, type ApiRoute } from './api-route.js';
import { requestBase } from './opensearch.js';
import { MessageError, SUGGEST_FIELDS, checkSuggestFields, unwrapMessage } from './protocol.js';
import { openSearchSuggestions, runSuggest } from './suggest.js';

export const OPENSEARCH_SUGGESTIONS_TYPE = 'application/x-suggestions+json';
const PARAMS = [...SUGGEST_FIELDS, 'format'] as const;
const FORMATS = ['sherlock', 'opensearch'];

export const suggestRoute: ApiRoute = {
  fromQuery(params) {
    onlyParams(params, '/api/suggest', PARAMS);
    return { q: oneParam(params, 'q'), limit: wholeParam(params, 'limit'), format: oneParam(params, 'format') };
  },
  accept(value, req) {
    const { id, fields: { format, ...given } } = unwrapMessage(value, 'suggest', ['format']);
    if (format !== undefined && !FORMATS.includes(format as string)) throw new MessageError(`format must be ${FORMATS.map((f) => `"${f}"`).join(' or ')}`, 'format', id);
    const openSearch = format === 'opensearch' || (format === undefined && (req.headers.accept ?? '').includes(OPENSEARCH_SUGGESTIONS_TYPE));
    const request = checkSuggestFields(given, id);
    return async (shared, signal) => {
      const outcome = await runSuggest(shared, request, signal);
      if (!outcome.ok) return { ...outcome, id };
      if (openSearch) return { ok: true, json: JSON.stringify(openSearchSuggestions(outcome.result, `${requestBase(req)}/search`)), type: OPENSEARCH_SUGGESTIONS_TYPE };
      return { ok: true, json: JSON.stringify({ type: 'suggestions', ...(id === undefined ? {} : { id }), took_ms: outcome.took_ms, ...outcome.result }) };
    };
  },
};
