/**
 * Several collections in one searcher (searcher/collections-engine.ts),
 * over a real WebSocket to `sherlock searcher run` with two state
 * directories, each crawled from a loopback site and indexed: the same
 * origin serves both crawls with other pages, so `/notice` (and `/`) are in
 * both. Merged results name their collection, `collections` picks, an
 * unknown name is refused, the newer collection's copy hides the older
 * one's, suggestions come from both (the newer's first), a takedown in
 * either state hides the URL in both within a second;
 * the search page takes `collections=` too.
 * Then the merge on its own: normalisation, override, totals and facets.
 */

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { mergeResults, type CollectionAnswer } from '../../searcher/collections-engine.js';
import type { SearchResult } from '../../searcher/engine.js';
import { runCli, startCli } from '../helpers/cli.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';
import { Client, fixedEngine, hit, listening, startServer, type Message } from './net.js';
import { PAGES, buildCli, crawlOrigin, siteRoutes } from '../indexer/site.js';

const ADDRESS = '127.0.0.241';

/** Collection a's site: the indexer tests' pages, a notice and an almanac that says alpha once where the notice says it often. */
const OLDER = {
  ...PAGES,
  '/': PAGES['/']!.replace('</body>', '<a href="/notice">notice</a> <a href="/almanac">almanac</a></body>'),
  '/notice': page('Alpha notice', 'The lighthouse alpha edition, alpha and alpha again.'),
  '/almanac': page('Almanac', 'Tide tables and the moon, one alpha star among the many others listed here by month.'),
};

/** Collection b's site, at the same origin later: the notice rewritten and a page of its own. */
const NEWER = {
  '/': page('Harbour home', 'Read the <a href="/notice">notice</a> and the <a href="/harbour">harbour</a> page.'),
  '/notice': page('Notice', 'The lighthouse beta edition.'),
  '/harbour': page('Harbour', 'The lighthouse keeper watches the harbour and the gazette.'),
};

function page(title: string, body: string): string {
  return `<html><head><title>${title}</title></head><body><p>${body}</p></body></html>`;
}

interface Answer {
  total: number;
  hits: Array<{ url: string; collection: string; score: number; snippet: string }>;
}

function answer(m: Message): Answer {
  assert.equal(m.type, 'result', JSON.stringify(m));
  return { total: (m['total'] as { value: number }).value, hits: m['hits'] as Answer['hits'] };
}

test('two collections in one searcher: merged hits, picked by name, the newer copy hides the older, takedowns in either state hide everywhere', async (t) => {
  const dir = scratchDir(t);
  const [a, b] = [join(dir, 'a'), join(dir, 'b')];
  mkdirSync(a);
  mkdirSync(b);
  const routes = siteRoutes(0, OLDER);
  const fixture = await startFixture({ address: ADDRESS, routes });
  t.after(() => fixture.close());
  await crawlOrigin(a, fixture.origin);
  // The fixture looks routes up per request: the same origin now serves the newer site.
  for (const path of Object.keys(routes)) delete routes[path];
  Object.assign(routes, siteRoutes(0, NEWER));
  await crawlOrigin(b, fixture.origin);
  await buildCli(a);
  await buildCli(b);
  const { origin } = fixture;

  const running = startCli(t, ['searcher', 'run', '--state', dir, '--listen', `${ADDRESS}:0`, '--set', `searcher.collections=a=${a},b=${b}`]);
  const address = await listening(running);
  const client = await Client.open(t, `ws://${address}/`);
  const welcome = await client.next();
  assert.match(String(welcome['index']), /^a=\S+ b=\S+$/);
  let n = 0;
  const search = async (q: string, extra: Record<string, unknown> = {}) => answer(await client.search(`q${n++}`, q, extra));
  const placed = (a: Answer) => a.hits.map((h) => `${h.collection} ${h.url.slice(origin.length)}`).sort();

  // Merged: the gazette is on pages of both sites; the best of each collection scores 1.
  const gazette = await search('gazette');
  assert.ok(placed(gazette).includes('a /popular') && placed(gazette).includes('b /harbour'), JSON.stringify(gazette));
  assert.deepEqual(new Set(gazette.hits.filter((h) => h.score === 1).map((h) => h.collection)), new Set(['a', 'b']));
  assert.deepEqual(gazette.hits.map((h) => h.score), gazette.hits.map((h) => h.score).sort((x, y) => y - x));

  // The notice is in both: the newer (b) copy alone, the total less the hidden copy.
  const lighthouse = await search('lighthouse');
  assert.deepEqual(placed(lighthouse), ['b /harbour', 'b /notice']);
  assert.equal(lighthouse.total, 2);
  assert.match(lighthouse.hits.find((h) => h.url.endsWith('/notice'))!.snippet, /beta/);
  // The hidden copy ranked first: the page is refilled from further down.
  const alpha = await search('alpha', { limit: 1 });
  assert.deepEqual([placed(alpha), alpha.total], [['a /almanac'], 1]);

  // Picked by name: a alone shows its own copy.
  const older = await search('lighthouse', { collections: ['a'] });
  assert.deepEqual([placed(older), older.total], [['a /notice'], 1]);
  assert.match(older.hits[0]!.snippet, /alpha/);
  assert.deepEqual(placed(await search('gazette', { collections: ['b'] })), ['b /harbour']);
  assert.deepEqual(placed(await search('gazette', { collections: [] })), placed(gazette));

  // An unknown name is refused, naming the field and the name.
  client.send({ type: 'search', id: 'bad', q: 'lighthouse', collections: ['a', 'c'] });
  const refused = await client.answer('bad');
  assert.deepEqual([refused.type, refused['code'], refused['field']], ['error', 'BAD_MESSAGE', 'collections[1]']);
  assert.match(String(refused['message']), /"c"/);

  // The search page takes collections= too, and shows each hit's collection.
  const shown = await fetch(`http://${address}/search?q=lighthouse&collections=a`);
  const html = await shown.text();
  assert.equal(shown.status, 200);
  assert.match(html, /alpha/);
  assert.match(html, /<span class="collection">a<\/span>/);
  assert.match(html, /name="collections" value="a"/);
  const unknown = await fetch(`http://${address}/search?q=lighthouse&collections=c`);
  assert.equal(unknown.status, 400);
  assert.match(await unknown.text(), /no collection &#34;c&#34;/);

  // The status names each collection.
  client.send({ type: 'subscribe', id: 's', topic: 'status' });
  const status = (await client.next((m) => m.type === 'event'))['data'] as { engine: { collections: Array<{ name: string; cards: number; index: string }> } };
  assert.deepEqual(status.engine.collections.map((c) => c.name), ['a', 'b']);
  assert.ok(status.engine.collections.every((c) => c.cards > 0 && c.index !== null), JSON.stringify(status.engine));
  client.send({ type: 'unsubscribe', id: 's' });

  // Suggestions from both, the newer collection's first, a text once.
  const suggested = async (q: string) => {
    const m = await client.suggest(`s${n++}`, q);
    assert.equal(m.type, 'suggestions', JSON.stringify(m));
    return (m['suggestions'] as Array<{ text: string; kind: string }>).map((c) => `${c.kind} ${c.text}`);
  };
  const notice = await suggested('not');
  assert.equal(notice[0], 'title notice', JSON.stringify(notice));
  // Both have the word and the title "notice": given once, as b's title.
  assert.equal(notice.filter((c) => c.endsWith(' notice')).length, 1, JSON.stringify(notice));
  // b has the words, a the title: a title, in b's place.
  assert.deepEqual((await suggested('alpha no')).slice(0, 1), ['title alpha notice']);
  assert.ok((await suggested('harb')).includes('title harbour home'));

  // A takedown written to a's state hides b's page within a second; one in b's hides a's.
  const hides = async (state: string, url: string, q: string) => {
    const add = await runCli(['takedown', 'add', url, '--reason', 'test', '--state', state]);
    assert.equal(add.status, 0, add.stderr);
    const since = performance.now();
    for (;;) {
      const now = await search(q);
      if (!now.hits.some((h) => h.url === url)) return { ms: performance.now() - since, total: now.total };
      if (performance.now() - since > 5000) assert.fail(`${url} still shown: ${JSON.stringify(now)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const harbour = await hides(a, `${origin}/harbour`, 'lighthouse');
  assert.ok(harbour.ms < 1000, `hidden after ${harbour.ms} ms`);
  assert.equal(harbour.total, 1);
  const popular = await hides(b, `${origin}/popular`, 'gazette');
  assert.ok(popular.ms < 1000, `hidden after ${popular.ms} ms`);
  assert.ok(!placed(await search('gazette', { collections: ['a'] })).includes('a /popular'));
});

/** One collection's result of `hits` (url suffix, score), with facets counting each hit's site. */
function result(hits: Array<[string, number]>, total = hits.length): SearchResult {
  return {
    total: { value: total, relation: 'eq' },
    hits: hits.map(([url, score], i) => hit(i, { url: `https://example.org/${url}`, score })),
    facets: { site: [{ value: 'example.org', count: total }], type: [{ value: 'text/html', count: total }], lang: [{ value: 'en', count: total }] },
  };
}

test('the merge: scores divided by each collection best, ties to the newer, hidden copies out of hits, totals and facets', () => {
  const older: CollectionAnswer = { name: 'old', result: result([['x', 40], ['shared', 20], ['y', 10]], 5), hidden: new Set(['https://example.org/shared']) };
  const newer: CollectionAnswer = { name: 'new', result: result([['p', 4], ['shared', 2]], 2), hidden: new Set() };
  const merged = mergeResults([older, newer], { offset: 0, limit: 10 });
  assert.deepEqual(
    merged.hits.map((h) => [h.collection, h.url.slice(20), h.score]),
    [['new', 'p', 1], ['old', 'x', 1], ['new', 'shared', 0.5], ['old', 'y', 0.25]],
  );
  assert.deepEqual(merged.total, { value: 6, relation: 'eq' });
  assert.deepEqual(merged.facets.site, [{ value: 'example.org', count: 6 }]);

  const page = mergeResults([older, newer], { offset: 1, limit: 2 });
  assert.deepEqual(page.hits.map((h) => h.url.slice(20)), ['x', 'shared']);
  const gte = mergeResults([{ ...newer, result: { ...newer.result, total: { value: 2, relation: 'gte' } } }], { offset: 0, limit: 1 });
  assert.deepEqual([gte.total, gte.hits.length], [{ value: 2, relation: 'gte' }, 1]);
});

test('the merge by date: newest first whatever the collection, ties by normalised score', () => {
  const at = (day: number) => `2026-01-0${day}T00:00:00.000Z`;
  const one = result([['a', 10], ['b', 5]]);
  one.hits[0]!.date = at(1);
  one.hits[1]!.date = at(3);
  const two = result([['c', 100]]);
  two.hits[0]!.date = at(3);
  const merged = mergeResults([{ name: 'one', result: one, hidden: new Set() }, { name: 'two', result: two, hidden: new Set() }], { offset: 0, limit: 10, sort: 'date' });
  assert.deepEqual(merged.hits.map((h) => h.url.slice(20)), ['c', 'b', 'a']);
});

test('searcher run refuses a bad collection list, naming the key and the culprit', async (t) => {
  const dir = scratchDir(t);
  const refused = async (value: string) => {
    const run = await runCli(['searcher', 'run', '--state', dir, '--listen', `${ADDRESS}:0`, '--set', `searcher.collections=${value}`]);
    assert.notEqual(run.status, 0);
    return run.stderr;
  };
  assert.match(await refused(`Intranet=${dir}`), /searcher\.collections.*NAME=STATE_DIR/);
  assert.match(await refused(`a=${dir},a=${dir}`), /collection "a" is named twice/);
  assert.match(await refused(`a=${join(dir, 'missing')}`), /searcher\.collections: collection "a": no directory .*missing/);
});

test('a searcher of one unnamed collection refuses any collection name, and searches as before without one', async (t) => {
  const { ws } = await startServer(t, fixedEngine({ hits: [hit(1)] }), { listen: `${ADDRESS}:0` });
  const client = await Client.open(t, ws);
  await client.next();
  const refused = await client.search('a', 'word', { collections: ['docs'] });
  assert.deepEqual([refused['code'], refused['field']], ['BAD_MESSAGE', 'collections[0]']);
  assert.match(String(refused['message']), /no collection "docs"; this searcher has one collection, unnamed/);
  const plain = await client.search('b', 'word', { collections: [] });
  assert.equal((plain['hits'] as Array<Record<string, unknown>>)[0]!['collection'], undefined);
});
