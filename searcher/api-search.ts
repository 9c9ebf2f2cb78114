/**
 * GET and POST /api/search (http-api.ts routes them): the WebSocket search
 * over HTTP. A POST body is the search message (its type and id may be
 * left out; an id given comes back in the answer); GET
 * parameters map onto them (site, type, lang and age onto filters; site,
 * type, lang and collections repeat for lists). Both are checked by
 * checkSearchFields and run by runSearch, as the socket's are, and the
 * answer is the socket's result text, spliced as it is.
 */

import { booleanParam, onlyParams, oneParam, wholeParam, type ApiRoute } from './api-route.js';
import { checkSearchFields, resultText, unwrapMessage } from './protocol.js';
import { runSearch } from './search.js';

const PARAMS = ['q', 'offset', 'limit', 'site', 'type', 'lang', 'age', 'sort', 'explain', 'collections'] as const;
const LIST_FILTERS = ['site', 'type', 'lang'] as const;

export const searchRoute: ApiRoute = {
  fromQuery(params) {
    onlyParams(params, '/api/search', PARAMS);
    const filters: Record<string, unknown> = {};
    for (const name of LIST_FILTERS) if (params.has(name)) filters[name] = params.getAll(name);
    if (params.has('age')) filters['age'] = wholeParam(params, 'age');
    const value: Record<string, unknown> = { q: oneParam(params, 'q'), offset: wholeParam(params, 'offset'), limit: wholeParam(params, 'limit'), sort: oneParam(params, 'sort'), explain: booleanParam(params, 'explain') };
    if (Object.keys(filters).length > 0) value['filters'] = filters;
    if (params.has('collections')) value['collections'] = params.getAll('collections');
    return value;
  },
  accept(value) {
    const { id, fields: given } = unwrapMessage(value, 'search');
    const fields = checkSearchFields(given, id);
    return async (shared, signal) => {
      const outcome = await runSearch(shared, fields, signal, 'api');
      return outcome.ok ? { ok: true, json: resultText(id, outcome.took_ms, outcome.result) } : { ...outcome, id };
    };
  },
};
