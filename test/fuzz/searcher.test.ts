/**
 * Fuzzing what the searcher reads from clients: the query language
 * (searcher/query.ts) and the WebSocket messages of sherlock.v1
 * (searcher/protocol.ts). Their documented errors are QueryError and
 * MessageError, which the server turns into BAD_QUERY and BAD_MESSAGE; any
 * other exception would be answered INTERNAL, so it is a crash here. A parsed
 * query keeps within its bounds, and a parsed message reads back the same
 * when sent again.
 */

import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MessageError, parseClientMessage } from '../../searcher/protocol.js';
import { MAX_DEPTH, MAX_TERMS, QueryError, parseQuery, type QueryNode } from '../../searcher/query.js';
import { check, fuzzFile, parsed } from './harness.js';

/** Pieces a query is made of, hostile ones included. */
const queryPiece = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[a-zé]{1,8}\*?$/) },
  {
    weight: 3,
    arbitrary: fc.constantFrom('"', '(', ')', '-', '*', 'OR', 'NEAR', 'NEAR/3', 'NEAR/0', 'NEAR/101', 'NEAR/x', 'site:', 'site:example.org', 'site:.', 'type:', 'type:html', 'type:text/plain', 'title:', 'url:', 'title:"a b"', 'e-mail', 'node.js', '東京都', ':', '\u0000', '\ud800', ' ', '  ', '\t', 'ｆｕｌｌ'),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);
const query = fc.oneof(
  fc.array(queryPiece, { maxLength: 40 }).map((pieces) => pieces.join(' ')),
  fc.array(queryPiece, { maxLength: 40 }).map((pieces) => pieces.join('')),
  fc.string({ maxLength: 1100 }),
);

function terms(node: QueryNode): number {
  switch (node.kind) {
    case 'word':
      return 1;
    case 'phrase':
      return node.words.length;
    case 'near':
      return terms(node.left) + terms(node.right);
    case 'and':
    case 'or':
      return node.children.reduce((n, child) => n + terms(child), 0);
    case 'not':
      return terms(node.child);
    default:
      return 0;
  }
}

function depth(node: QueryNode): number {
  if (node.kind === 'and' || node.kind === 'or') return 1 + Math.max(0, ...node.children.map(depth));
  if (node.kind === 'not') return 1 + depth(node.child);
  return 0;
}

/** JSON values a hostile client may put in any field. */
const jsonValue = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 10 }), { maxLength: 20 }),
  fc.dictionary(fc.constantFrom('site', 'type', 'lang', '__proto__'), fc.array(fc.oneof(fc.string({ maxLength: 20 }), fc.integer()), { maxLength: 20 })),
);
const message = fc
  .record(
    {
      type: fc.oneof(fc.constantFrom('hello', 'search', 'cancel', 'subscribe', 'unsubscribe', 'ping', 'constructor', '__proto__'), jsonValue),
      id: fc.oneof(fc.stringMatching(/^[!-~]{1,70}$/), jsonValue),
      q: fc.oneof(query, jsonValue),
      offset: fc.oneof(fc.integer({ min: -5, max: 1100 }), jsonValue),
      limit: fc.oneof(fc.integer({ min: -5, max: 110 }), jsonValue),
      filters: jsonValue,
      token: jsonValue,
      topic: fc.oneof(fc.constant('status'), jsonValue),
      extra: jsonValue,
    },
    { requiredKeys: [] },
  )
  .map((m) => JSON.stringify(m));

fuzzFile(import.meta.url, {
  'query parser: any text parses within MAX_TERMS and MAX_DEPTH, or is refused with a QueryError at a position inside it': {
    runs: 3000,
    property: (params) =>
      check(query, (q) => {
        try {
          const node = parseQuery(q);
          assert.ok(terms(node) <= MAX_TERMS, `${terms(node)} terms`);
          assert.ok(depth(node) <= MAX_DEPTH + 2, `depth ${depth(node)}`);
        } catch (err) {
          if (!(err instanceof QueryError)) throw err;
          assert.ok(err.position >= 0 && err.position <= q.length, `position ${err.position} outside a query of ${q.length}`);
        }
      }, params),
  },

  'WebSocket messages: any text is a client message or a MessageError, and a parsed message reads back the same': {
    runs: 3000,
    property: (params) =>
      check(fc.oneof({ weight: 4, arbitrary: message }, { weight: 1, arbitrary: fc.string({ maxLength: 200 }) }), (text) => {
        const parsedMessage = parsed(() => parseClientMessage(text), MessageError);
        if (parsedMessage !== undefined) assert.deepEqual(parseClientMessage(JSON.stringify(parsedMessage)), parsedMessage);
      }, params),
  },
});
