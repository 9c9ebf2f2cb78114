/**
 * The result cache (searcher/result-cache.ts): its key, equal for queries
 * that parse the same and different for anything that can change the
 * answer; and, on a real index (a crawled site built twice into two
 * versions) searched by a pool of search threads through a real WebSocket,
 * a repeated search answered from it (counted in /metrics and the status
 * topic, the same answer), another page or filter a miss, a live swap
 * dropping every entry, its bytes within the bound, "0" turning it off and
 * a reload to a smaller size shrinking it.
 */

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { after, before, type TestContext } from 'node:test';
import { searcherConfig } from '../../searcher/config.js';
import { PoolEngine } from '../../searcher/pool-engine.js';
import { parseQuery } from '../../searcher/query.js';
import { ENTRY_OVERHEAD, ResultCache, resultKey } from '../../searcher/result-cache.js';
import type { SearchFields } from '../../searcher/protocol.js';
import { Synonyms } from '../../searcher/synonyms.js';
import { startCli, until } from '../helpers/cli.js';
import { parseExposition, sampleValue } from '../helpers/prometheus-text.js';
import { buildCli, crawlSite } from '../indexer/site.js';
import { Client, listening, startServer, type Message } from './net.js';

const CACHES = { chains: 1 << 22, cards: 1 << 22 };

let state: string;
/** The two versions built from the one crawl, oldest first (absolute paths). */
let versions: string[];

before(async () => {
  state = mkdtempSync(join(tmpdir(), 'sherlock-result-cache-'));
  await crawlSite(state, { address: '127.0.0.201', bulk: 20 });
  await buildCli(state);
  await buildCli(state);
  const dir = join(state, 'index');
  versions = readdirSync(dir)
    .filter((name) => name !== 'current' && !name.includes('.'))
    .sort()
    .map((name) => join(dir, name));
  assert.equal(versions.length, 2, readdirSync(dir).join(' '));
});

after(() => {
  if (process.env['SHERLOCK_KEEP_TMP'] === undefined) rmSync(state, { recursive: true, force: true });
});

const fields = (q: string, more: Partial<SearchFields> = {}): SearchFields => ({ q, offset: 0, limit: 10, filters: {}, ...more });
const key = (q: string, more: Partial<SearchFields> = {}, version = 'v1', now = 0) => resultKey(parseQuery(q), fields(q, more), version, now);

test('the key: queries that parse the same share it; filters and collections as sets, the default sort and no explain are one key', () => {
  assert.equal(key('zebra  café'), key(' zebra café '));
  assert.equal(key('Zebra'), key('zebra'));
  assert.equal(key('"baker street"'), key('"baker   street"'));
  assert.equal(key('zebra', { filters: { site: ['a.org', 'b.org'], type: [] } }), key('zebra', { filters: { site: ['b.org', 'a.org', 'b.org'] } }));
  assert.equal(key('zebra', { sort: 'relevance' }), key('zebra'));
  assert.equal(key('zebra', { explain: false }), key('zebra'));
  assert.equal(key('zebra', { collections: ['b', 'a'] }), key('zebra', { collections: ['a', 'b', 'a'] }));
  assert.equal(key('zebra', { filters: { site: ['a.org'] } }, 'v1', 0), key('zebra', { filters: { site: ['a.org'] } }, 'v1', 3_600_000), 'the clock matters only with an age filter');
});

test('the key: another page, filter, sort, explain, collections, version, query or minute of an age filter is another key', () => {
  const base = key('zebra');
  const others = [
    key('zebra', { offset: 10 }),
    key('zebra', { limit: 20 }),
    key('zebra', { filters: { site: ['a.org'] } }),
    key('zebra', { filters: { type: ['text/html'] } }),
    key('zebra', { filters: { lang: ['en'] } }),
    key('zebra', { filters: { age: 7 } }),
    key('zebra', { sort: 'date' }),
    key('zebra', { explain: true }),
    key('zebra', {}, 'v2'),
    key('zebra', { collections: ['a'] }),
    key('zebra', { collections: ['a', 'b'] }),
    key('=zebra'),
    key('zebra*'),
    key('title:zebra'),
    key('zebra cafe'),
    key('cafe zebra'),
  ];
  assert.equal(new Set([base, ...others]).size, others.length + 1);
  assert.notEqual(key('zebra', { filters: { age: 7 } }, 'v1', 0), key('zebra', { filters: { age: 7 } }, 'v1', 60_000));
  assert.equal(key('zebra', { filters: { age: 7 } }, 'v1', 0), key('zebra', { filters: { age: 7 } }, 'v1', 59_999));
});

test('the cache: a result with a suggestion answers only the query as typed; another version is not kept; use() of a new version drops all; bytes counted', () => {
  const cache = new ResultCache(1 << 20);
  cache.use('v1');
  const g = cache.generation;
  const plain = '{"total":{"value":1,"relation":"eq"},"hits":[],"facets":{"site":[],"type":[],"lang":[]}}';
  cache.store('k1', g, 'v1', 'zebra', plain);
  assert.equal(cache.lookup('k1', ' zebra'), plain, 'no suggestion: any spelling of the query');
  const suggested = '{"total":{"value":0,"relation":"eq"},"hits":[],"facets":{"site":[],"type":[],"lang":[]},"suggest":{"q":"zebra","html":"<mark>zebra</mark>","applied":false}}';
  cache.store('k2', g, 'v1', 'zebar', suggested);
  assert.equal(cache.lookup('k2', 'zebar'), suggested);
  assert.equal(cache.lookup('k2', ' zebar'), undefined, 'the suggestion repeats the text typed');
  cache.store('k3', g, 'v0', 'x', plain);
  assert.equal(cache.lookup('k3', 'x'), undefined, 'a result of another version than the entries');
  assert.deepEqual(cache.figures(), { hits: 2, misses: 2, evictions: 0, entries: 2, bytes: 2 * ENTRY_OVERHEAD + 'k1'.length + plain.length + 'k2'.length + suggested.length + 'zebar'.length, bound: 1 << 20 });
  cache.store('k4', g, 'v1', '東京', '{"q":"東京"}');
  assert.equal(cache.figures().bytes - (2 * ENTRY_OVERHEAD + 'k1'.length + plain.length + 'k2'.length + suggested.length + 'zebar'.length), ENTRY_OVERHEAD + 2 + 2 * '{"q":"東京"}'.length);
  cache.use('v2');
  assert.equal(cache.lookup('k1', 'zebra'), undefined);
  assert.equal(cache.figures().entries, 0);
});

test('the cache: a search that missed before a clear() and ends after it is not kept', () => {
  const cache = new ResultCache(1 << 20);
  cache.use('v1');
  const before = cache.generation;
  assert.equal(cache.lookup('k', 'q'), undefined);
  cache.clear();
  cache.store('k', before, 'v1', 'q', '{}');
  assert.equal(cache.lookup('k', 'q'), undefined);
  cache.store('k', cache.generation, 'v1', 'q', '{}');
  assert.equal(cache.lookup('k', 'q'), '{}');
});

/** A pool of one search thread over a state whose `current` names `version` (re-pointed by `point`). */
async function pool(t: TestContext, version: string): Promise<{ engine: PoolEngine; point(version: string): Promise<void> }> {
  const other = mkdtempSync(join(tmpdir(), 'sherlock-result-cache-swap-'));
  t.after(() => rmSync(other, { recursive: true, force: true }));
  mkdirSync(join(other, 'index'));
  const current = join(other, 'index', 'current');
  symlinkSync(version, current);
  const engine = await PoolEngine.start({ state: other, threads: 1, caches: CACHES, pollMs: 0 });
  t.after(() => engine.close());
  return {
    engine,
    async point(next) {
      unlinkSync(current);
      symlinkSync(next, current);
      await engine.check();
    },
  };
}

async function metrics(http: string): Promise<Record<'hits' | 'misses' | 'entries' | 'bytes' | 'bound' | 'evictions', number>> {
  const families = parseExposition(await (await fetch(`${http}/metrics`)).text());
  const value = (name: string) => sampleValue(families, `sherlock_searcher_result_cache_${name}`)!;
  return { hits: value('hits_total'), misses: value('misses_total'), entries: value('entries'), bytes: value('bytes'), bound: value('limit_bytes'), evictions: value('evictions_total') };
}

/** A result without its time, to compare answers. */
const body = ({ took_ms: _, id: __, ...rest }: Message) => rest;

const OPEN = { listen: '127.0.0.201:0', message_rate: 0, ip_search_rate: 0 };

test('a repeated search is a hit with the same answer; another page or filter a miss; a live swap drops every entry', async (t) => {
  const { engine, point } = await pool(t, versions[0]!);
  const { ws, http, server } = await startServer(t, engine, OPEN);
  const client = await Client.open(t, ws);
  const first = await client.search('a', 'detective');
  assert.equal(first.type, 'result', JSON.stringify(first));
  assert.ok((first['hits'] as unknown[]).length > 0);
  assert.deepEqual(await metrics(http), { hits: 0, misses: 1, entries: 1, bytes: server.results.figures().bytes, bound: 64 * 2 ** 20, evictions: 0 });
  const again = await client.search('b', '  Detective ');
  assert.deepEqual(body(again), body(first));
  assert.equal((await metrics(http)).hits, 1);

  await client.search('c', 'detective', { offset: 1 });
  await client.search('d', 'detective', { filters: { type: ['html'] } });
  await client.search('e', 'detective', { limit: 3 });
  const figures = await metrics(http);
  assert.deepEqual([figures.hits, figures.misses, figures.entries], [1, 4, 4]);
  const status = server.status()['result_cache'] as Record<string, unknown>;
  assert.deepEqual(status, { hits: 1, misses: 4, hit_rate: 0.2, entries: 4, bytes: figures.bytes, bound: 64 * 2 ** 20 });

  const before = engine.version;
  await point(versions[1]!);
  assert.notEqual(engine.version, before);
  const swapped = await client.search('f', 'detective');
  assert.equal(swapped.type, 'result');
  const after = await metrics(http);
  assert.deepEqual([after.hits, after.misses, after.entries], [1, 5, 1], 'the old entries are gone, the search after the swap a miss');
  assert.deepEqual(body(await client.search('g', 'detective')), body(swapped));
  assert.equal((await metrics(http)).hits, 2);
});

test('many distinct searches keep the bytes within the bound, the oldest pushed out; a reload to a smaller size shrinks it at once', async (t) => {
  const { engine } = await pool(t, versions[0]!);
  const bound = 24 * 1024;
  const { ws, http, server } = await startServer(t, engine, { ...OPEN, result_cache: String(bound) });
  const client = await Client.open(t, ws);
  const queries = ['detective', 'gazette', 'twin', 'orchard', 'baker', 'street', 'w1x0', 'w2x1', 'w3x2', 'w4x0', 'w5x1', 'w6x2'];
  let n = 0;
  for (const q of queries) {
    for (const limit of [1, 5, 10]) {
      const answer = await client.search(`s${n++}`, q, { limit });
      assert.equal(answer.type, 'result', JSON.stringify(answer));
      const { bytes } = server.results.figures();
      assert.ok(bytes <= bound, `${bytes} bytes over the bound of ${bound}`);
    }
  }
  const full = await metrics(http);
  assert.equal(full.misses, queries.length * 3);
  assert.ok(full.evictions > 0 && full.entries < queries.length * 3, JSON.stringify(full));
  assert.ok(full.bytes > bound / 2, JSON.stringify(full));

  server.reload(searcherConfig.parse({ ...OPEN, result_cache: String(bound / 4) }), undefined, Synonyms.NONE);
  const shrunk = await metrics(http);
  assert.equal(shrunk.bound, bound / 4);
  assert.ok(shrunk.bytes <= bound / 4 && shrunk.entries < full.entries, JSON.stringify(shrunk));
  assert.ok(shrunk.evictions > full.evictions);
});

test('result_cache = "0" turns the cache off: nothing kept, nothing looked up', async (t) => {
  const { engine } = await pool(t, versions[0]!);
  const { ws, http } = await startServer(t, engine, { ...OPEN, result_cache: '0' });
  const client = await Client.open(t, ws);
  const first = await client.search('a', 'detective');
  assert.deepEqual(body(await client.search('b', 'detective')), body(first));
  assert.deepEqual(await metrics(http), { hits: 0, misses: 0, entries: 0, bytes: 0, bound: 0, evictions: 0 });
});

test('clear() forgets every answer: the next search is a miss', async (t) => {
  const { engine } = await pool(t, versions[0]!);
  const { ws, http, server } = await startServer(t, engine, OPEN);
  const client = await Client.open(t, ws);
  await client.search('a', 'gazette');
  await client.search('b', 'gazette');
  server.results.clear();
  assert.equal((await metrics(http)).entries, 0);
  await client.search('c', 'gazette');
  const figures = await metrics(http);
  assert.deepEqual([figures.hits, figures.misses, figures.entries], [1, 2, 1]);
});

test('searcher run: SIGHUP applies a smaller result_cache at once, and "0" turns it off', async (t) => {
  const config = join(state, 'sherlock.toml');
  writeFileSync(config, '[searcher]\nresult_cache = "1MiB"\nmessage_rate = 0\nip_search_rate = 0\n');
  const running = startCli(t, ['--config', config, 'searcher', 'run', '--state', state, '--listen', '127.0.0.202:0']);
  const address = await listening(running);
  const http = `http://${address}`;
  const client = await Client.open(t, `ws://${address}/`);
  for (const [id, q] of [['a', 'detective'], ['b', 'gazette'], ['c', 'detective']]) assert.equal((await client.search(id!, q!)).type, 'result');
  const full = await metrics(http);
  assert.deepEqual([full.hits, full.misses, full.entries, full.bound], [1, 2, 2, 2 ** 20]);

  writeFileSync(config, '[searcher]\nresult_cache = "1KiB"\nmessage_rate = 0\nip_search_rate = 0\n');
  running.child.kill('SIGHUP');
  await until('the reload', () => /config reloaded/.test(running.stderr));
  const shrunk = await metrics(http);
  assert.deepEqual([shrunk.bound, shrunk.entries, shrunk.bytes], [1024, 0, 0], 'each answer costs more than 1 KiB');
  await client.search('d', 'detective');
  assert.deepEqual([(await metrics(http)).misses, (await metrics(http)).entries], [3, 0]);

  writeFileSync(config, '[searcher]\nresult_cache = "0"\nmessage_rate = 0\nip_search_rate = 0\n');
  running.child.kill('SIGHUP');
  await until('the second reload', () => running.stderr.match(/config reloaded/g)!.length === 2);
  await client.search('e', 'detective');
  await client.search('f', 'detective');
  const off = await metrics(http);
  assert.deepEqual([off.bound, off.hits, off.misses, off.entries], [0, 1, 3, 0], 'no lookups while off');
});
