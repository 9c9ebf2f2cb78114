/**
 * Reading client messages of sherlock.v1 (searcher/protocol.ts): valid
 * messages come out with defaults filled in and filters normalised; every
 * invalid one is refused naming its field (and keeping its id when it had a
 * readable one); no input makes the reader throw anything but MessageError.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { MAX_FILTER_VALUES, MAX_ID_LENGTH, MAX_LIMIT, MAX_OFFSET, MessageError, parseClientMessage } from '../../searcher/protocol.js';
import { MAX_QUERY_LENGTH } from '../../searcher/query.js';

const read = (message: unknown) => parseClientMessage(JSON.stringify(message));

function refused(message: unknown, field: string | undefined, id?: string): void {
  assert.throws(
    () => (typeof message === 'string' ? parseClientMessage(message) : read(message)),
    (err: unknown) => {
      assert.ok(err instanceof MessageError, String(err));
      assert.equal(err.field, field, `field of ${JSON.stringify(message)}: ${err.message}`);
      assert.equal(err.id, id);
      if (field !== undefined) assert.ok(err.message.includes(field.replace(/\[.*$/, '')), err.message);
      return true;
    },
  );
}

test('a search gets offset 0, limit 10 and no filters unless it says otherwise', () => {
  assert.deepEqual(read({ type: 'search', id: 'q1', q: 'debian' }), { type: 'search', id: 'q1', q: 'debian', offset: 0, limit: 10, filters: {} });
  assert.deepEqual(read({ type: 'search', id: 'q2', q: 'x', offset: MAX_OFFSET, limit: MAX_LIMIT }), {
    type: 'search',
    id: 'q2',
    q: 'x',
    offset: MAX_OFFSET,
    limit: MAX_LIMIT,
    filters: {},
  });
});

test('filters are read as site:, type: and lang: read them', () => {
  const langs = read({ type: 'search', id: 'l', q: 'x', filters: { lang: ['CS', 'en', 'und'] } });
  assert.deepEqual(langs.type === 'search' && langs.filters, { lang: ['cs', 'en', 'und'] });
  const m = read({ type: 'search', id: 'f', q: 'x', filters: { site: ['www.Example.org', 'example.org', 'b.example.net'], type: ['html', 'application/pdf'] } });
  assert.deepEqual(m.type === 'search' && m.filters, {
    site: ['example.org', 'b.example.net'],
    type: ['text/html', 'application/xhtml+xml', 'application/pdf'],
  });
  const empty = read({ type: 'search', id: 'f', q: 'x', filters: { site: [] } });
  assert.deepEqual(empty.type === 'search' && empty.filters, {});
});

test('the other client messages', () => {
  assert.deepEqual(read({ type: 'hello' }), { type: 'hello' });
  assert.deepEqual(read({ type: 'hello', token: 's3cret' }), { type: 'hello', token: 's3cret' });
  assert.deepEqual(read({ type: 'cancel', id: 'q1' }), { type: 'cancel', id: 'q1' });
  assert.deepEqual(read({ type: 'subscribe', id: 'st', topic: 'status' }), { type: 'subscribe', id: 'st', topic: 'status' });
  assert.deepEqual(read({ type: 'unsubscribe', id: 'st' }), { type: 'unsubscribe', id: 'st' });
  assert.deepEqual(read({ type: 'ping' }), { type: 'ping' });
  assert.deepEqual(read({ type: 'ping', id: 'p' }), { type: 'ping', id: 'p' });
});

test('messages that are not JSON objects with a known type', () => {
  refused('{"type":', undefined);
  refused('[1,2]', undefined);
  refused('null', undefined);
  refused('"search"', undefined);
  refused({ q: 'x' }, 'type');
  refused({ type: 'query', id: 'a' }, 'type', 'a');
  refused({ type: 'toString', id: 'a' }, 'type', 'a');
  refused({ type: 'search', id: 'a', q: 'x', extra: 1 }, 'extra', 'a');
  assert.throws(() => parseClientMessage('{"type":"ping","__proto__":{}}'), (err: unknown) => err instanceof MessageError && err.field === '__proto__');
});

test('each field of a search is checked and named', () => {
  const search = (fields: Record<string, unknown>) => ({ type: 'search', id: 's', q: 'x', ...fields });
  refused({ type: 'search', q: 'x' }, 'id');
  refused(search({ id: '' }), 'id');
  refused(search({ id: 'x'.repeat(MAX_ID_LENGTH + 1) }), 'id');
  refused(search({ id: 'has space' }), 'id');
  refused(search({ id: 7 }), 'id');
  refused(search({ q: 3 }), 'q', 's');
  refused(search({ q: 'x'.repeat(MAX_QUERY_LENGTH + 1) }), 'q', 's');
  refused(search({ offset: -1 }), 'offset', 's');
  refused(search({ offset: MAX_OFFSET + 1 }), 'offset', 's');
  refused(search({ offset: 1.5 }), 'offset', 's');
  refused(search({ limit: 0 }), 'limit', 's');
  refused(search({ limit: MAX_LIMIT + 1 }), 'limit', 's');
  refused(search({ limit: '10' }), 'limit', 's');
  refused(search({ filters: [] }), 'filters', 's');
  refused(search({ filters: { color: ['red'] } }), 'filters.color', 's');
  refused(search({ filters: { lang: ['english'] } }), 'filters.lang[0]', 's');
  refused(search({ filters: { lang: ['xx'] } }), 'filters.lang[0]', 's');
  refused(search({ filters: { site: 'example.org' } }), 'filters.site', 's');
  refused(search({ filters: { site: Array.from({ length: MAX_FILTER_VALUES + 1 }, (_, i) => `h${i}.org`) } }), 'filters.site', 's');
  refused(search({ filters: { site: ['ok.org', 'a/b'] } }), 'filters.site[1]', 's');
  refused(search({ filters: { site: ['two words'] } }), 'filters.site[0]', 's');
  refused(search({ filters: { site: [''] } }), 'filters.site[0]', 's');
  refused(search({ filters: { type: ['nonsense'] } }), 'filters.type[0]', 's');
  refused(search({ filters: { type: [5] } }), 'filters.type[0]', 's');
  refused(search({ collections: 'a' }), 'collections', 's');
  refused(search({ collections: Array.from({ length: MAX_FILTER_VALUES + 1 }, (_, i) => `c${i}`) }), 'collections', 's');
  refused(search({ collections: ['a', 'Big'] }), 'collections[1]', 's');
  refused(search({ collections: [3] }), 'collections[0]', 's');
});

test('collections: names each once in the order given, an empty list is all', () => {
  const read = (collections: unknown) => parseClientMessage(JSON.stringify({ type: 'search', id: 's', q: 'x', collections })) as { collections?: string[] };
  assert.deepEqual(read(['docs', 'intranet', 'docs']).collections, ['docs', 'intranet']);
  assert.equal(read([]).collections, undefined);
});

test('each field of the other messages is checked and named', () => {
  refused({ type: 'hello', token: '' }, 'token');
  refused({ type: 'hello', token: 5 }, 'token');
  refused({ type: 'hello', token: 'x'.repeat(1025) }, 'token');
  refused({ type: 'cancel' }, 'id');
  refused({ type: 'subscribe', id: 's', topic: 'logs' }, 'topic', 's');
  refused({ type: 'subscribe', id: 's' }, 'topic', 's');
  refused({ type: 'unsubscribe', id: 'a b' }, 'id');
  refused({ type: 'ping', id: '' }, 'id');
});

test('no input makes the reader throw anything but MessageError', () => {
  const messages = fc.oneof(
    fc.json(),
    fc.string(),
    fc.record(
      {
        type: fc.constantFrom('hello', 'search', 'cancel', 'subscribe', 'unsubscribe', 'ping', 'x'),
        id: fc.oneof(fc.string(), fc.integer()),
        q: fc.oneof(fc.string(), fc.integer()),
        offset: fc.oneof(fc.integer(), fc.double()),
        limit: fc.oneof(fc.integer(), fc.string()),
        filters: fc.oneof(fc.jsonValue(), fc.record({ site: fc.array(fc.string()), type: fc.array(fc.string()) }, { requiredKeys: [] })),
        token: fc.string(),
        topic: fc.string(),
      },
      { requiredKeys: ['type'] },
    ).map((m) => JSON.stringify(m)),
  );
  fc.assert(
    fc.property(messages, (text) => {
      try {
        parseClientMessage(text);
      } catch (err) {
        if (!(err instanceof MessageError)) throw err;
      }
    }),
    { numRuns: 2000 },
  );
});
