/**
 * Suggestions (searcher/suggest.ts, completions.ts) over a real WebSocket to
 * `sherlock searcher run` with search threads, on an index built from a real
 * crawl of a loopback site: the last word completed from the vocabulary
 * accent-free, whole queries from titles, a takedown hiding a title, odd
 * input answered, bad messages named, suggests outside the per-IP search
 * bucket; in process: a version without the Suggestions file gives none,
 * no index is NO_INDEX, the OpenSearch array; over HTTP (/api/suggest, GET
 * and POST, the OpenSearch format by parameter and by Accept, CORS) and
 * through the typed client, the same completions as the socket gives.
 */

import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { currentVersion, indexDirectory } from '../../common/index/layout.js';
import { readManifest, writeManifest } from '../../common/index/manifest.js';
import { SUGGESTIONS_FILE } from '../../common/index/suggestions.js';
import { WebSocket } from 'undici';
import { SherlockClient } from '../../client/sherlock-client.js';
import { searcherConfig } from '../../searcher/config.js';
import { SearchServer } from '../../searcher/server.js';
import { noIndexEngine } from '../../searcher/engine.js';
import { IndexEngine } from '../../searcher/index-engine.js';
import { typedParts } from '../../searcher/completions.js';
import { openSearchSuggestions, runSuggest } from '../../searcher/suggest.js';
import { runCli, startCli } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';
import { Client, listening, type Message } from './net.js';
import { buildCli, crawlSite } from '../indexer/site.js';

const ADDRESS = '127.0.5.31';

type Completion = { text: string; kind: 'word' | 'title' };

function completions(m: Message): Completion[] {
  assert.equal(m.type, 'suggestions', JSON.stringify(m));
  return m['suggestions'] as Completion[];
}

const texts = (list: Completion[], kind: Completion['kind']): string[] => list.filter((c) => c.kind === kind).map((c) => c.text);

test('suggestions over a real socket: words accent-free, titles, odd input, a takedown hides a title, bad messages named', async (t) => {
  const state = scratchDir(t);
  const origin = await crawlSite(state, { address: ADDRESS });
  await buildCli(state);
  // A search bucket of one: suggests must not take from it.
  const running = startCli(t, ['searcher', 'run', '--state', state, '--listen', `${ADDRESS}:0`, '--set', 'searcher.search_threads=2', '--set', 'searcher.ip_search_burst=1', '--set', 'searcher.ip_search_rate=0.01']);
  const client = await Client.open(t, `ws://${await listening(running)}/`);
  await client.next();
  let n = 0;
  const ask = async (q: string, extra: Record<string, unknown> = {}): Promise<Completion[]> => completions(await client.suggest(`s${n++}`, q, extra));

  const bru = await ask('bru');
  assert.ok(texts(bru, 'word').includes('brûlée'), JSON.stringify(bru));
  const sherlock = await ask('Sherlock ho');
  assert.deepEqual(texts(sherlock, 'title'), ['sherlock holmes home']);
  // "holmes" is in one card (the title of the home page): it comes only when no word of more cards starts so.
  assert.deepEqual(texts(sherlock, 'word'), ['Sherlock home'], JSON.stringify(sherlock));
  assert.deepEqual(texts(await ask('Sherlock holm'), 'word'), ['Sherlock holmes']);
  assert.equal(sherlock[0]!.kind, 'title');
  // The words before the last are kept as typed; a title is found without its accents.
  assert.deepEqual(texts(await ask('creme bru'), 'title'), ['crème brûlée']);
  assert.ok(texts(await ask('creme bru'), 'word').includes('creme brûlée'));
  // A trailing space: the last word is done; titles only, with more words.
  const spaced = await ask('sherlock ');
  assert.deepEqual(spaced, [{ text: 'sherlock holmes home', kind: 'title' }]);
  assert.deepEqual(await ask('sherlock holmes home '), []);
  // CJK: a title found from its first pairs, shown as written; a pair completed from one character.
  assert.deepEqual(texts(await ask('東京ノ'), 'title'), ['東京ノート']);
  assert.ok(texts(await ask('東'), 'word').includes('東京'));
  // Filters are not completed; odd input is answered, not refused.
  assert.deepEqual(await ask('site:hol'), []);
  for (const q of ['"bak', '-(', '((((', ')', '"', 'gaz* OR', '=caf', 'NEAR/', '\u0000', '😀']) {
    const m = await client.suggest(`odd${n++}`, q);
    assert.equal(m.type, 'suggestions', `${JSON.stringify(q)}: ${JSON.stringify(m)}`);
  }
  assert.ok(texts(await ask('"bak'), 'word').includes('"baker'));
  assert.equal((await ask('a', { limit: 2 })).length <= 2, true);

  // A takedown of the page hides its title (the word stays: other pages have it).
  assert.deepEqual(texts(await ask('popu'), 'title'), ['popular']);
  const add = await runCli(['takedown', 'add', `${origin}/popular`, '--reason', 'complaint', '--state', state]);
  assert.equal(add.status, 0, add.stderr);
  const since = performance.now();
  while (texts(await ask('popu'), 'title').length > 0) {
    assert.ok(performance.now() - since < 5000, 'the title still suggested 5 s after the takedown');
    await new Promise((r) => setTimeout(r, 20));
  }

  // Bad messages name the field.
  for (const [message, field] of [
    [{ type: 'suggest', id: 'b1', q: '' }, 'q'],
    [{ type: 'suggest', id: 'b2', q: 'x'.repeat(257) }, 'q'],
    [{ type: 'suggest', id: 'b3', q: 7 }, 'q'],
    [{ type: 'suggest', id: 'b4', q: 'a', limit: 0 }, 'limit'],
    [{ type: 'suggest', id: 'b5', q: 'a', limit: 21 }, 'limit'],
    [{ type: 'suggest', id: 'b6', q: 'a', offset: 1 }, 'offset'],
    [{ type: 'suggest', q: 'a' }, 'id'],
  ] as const) {
    client.send(message);
    const m = await client.next((r) => r.type === 'error');
    assert.equal(m['code'], 'BAD_MESSAGE', JSON.stringify(m));
    assert.equal(m['field'], field, JSON.stringify(m));
  }
  // The per-IP search bucket (one search) was not taken by the suggests above.
  assert.equal((await client.search('q1', 'gazette')).type, 'result');
  assert.equal((await client.search('q2', 'gazette'))['code'], 'TOO_MANY_REQUESTS');
  assert.equal((await client.suggest('s-after', 'gaz')).type, 'suggestions');
});

test('a version without a Suggestions file gives no suggestions, no index is NO_INDEX, and the OpenSearch array', async (t) => {
  const state = scratchDir(t);
  await crawlSite(state, { address: '127.0.5.32' });
  await buildCli(state);
  const dir = join(indexDirectory(state), currentVersion(indexDirectory(state))!);
  const config = { query_timeout: 1000 };
  const signal = new AbortController().signal;

  const engine = await IndexEngine.start({ state, pollMs: 0 });
  const fresh = await runSuggest({ engine, config }, { q: 'gaz', limit: 8 }, signal);
  assert.ok(fresh.ok && fresh.result.suggestions.some((s) => s.text === 'gazette'), JSON.stringify(fresh));
  assert.deepEqual(openSearchSuggestions({ q: 'creme b', suggestions: [{ text: 'crème brûlée', kind: 'title' }] }), [
    'creme b',
    ['crème brûlée'],
    ['title'],
    ['/search?q=cr%C3%A8me%20br%C3%BBl%C3%A9e'],
  ]);
  engine.close();

  // The version as an older build made it: no Suggestions, a Manifest without it.
  const manifest = readManifest(join(dir, 'Manifest'));
  rmSync(join(dir, SUGGESTIONS_FILE));
  writeManifest(dir, { ...manifest, files: manifest.files.map((f) => f.name).filter((name) => name !== SUGGESTIONS_FILE) });
  assert.ok(!readdirSync(dir).includes(SUGGESTIONS_FILE));
  const old = await IndexEngine.start({ state, pollMs: 0 });
  t.after(() => old.close());
  assert.ok(old.version !== undefined, 'the older version loads');
  const older = await runSuggest({ engine: old, config }, { q: 'gaz', limit: 8 }, signal);
  assert.ok(older.ok, JSON.stringify(older));
  assert.deepEqual(older.result, { q: 'gaz', suggestions: [] });

  const none = await runSuggest({ engine: noIndexEngine(), config }, { q: 'gaz', limit: 8 }, signal);
  assert.equal(none.ok ? 'answered' : none.error.code, 'NO_INDEX');
});

test('what of the text typed is completed', () => {
  assert.deepEqual(typedParts('debian rel'), { word: { before: 'debian ', plain: 'rel' }, title: 'debian rel' });
  assert.deepEqual(typedParts('Crème BRÛ'), { word: { before: 'Crème ', plain: 'bru' }, title: 'creme bru' });
  assert.deepEqual(typedParts('debian '), { title: 'debian ' });
  assert.deepEqual(typedParts('site:debian.org rel'), { word: { before: 'site:debian.org ', plain: 'rel' } });
  assert.deepEqual(typedParts('debian site:deb'), {});
  assert.deepEqual(typedParts('-debian'), { word: { before: '-', plain: 'debian' } });
  assert.deepEqual(typedParts('"debian rel'), { word: { before: '"debian ', plain: 'rel' } });
  assert.deepEqual(typedParts('"debian"'), {});
  assert.deepEqual(typedParts('   '), {});
  assert.deepEqual(typedParts('a OR b'), { word: { before: 'a OR ', plain: 'b' } });
});

test('/api/suggest and the typed client give the socket its own completions; the OpenSearch array by parameter and by Accept', async (t) => {
  const state = scratchDir(t);
  await crawlSite(state, { address: '127.0.5.33' });
  await buildCli(state);
  const engine = await IndexEngine.start({ state, pollMs: 0 });
  t.after(() => engine.close());
  const allowed = 'http://127.0.5.35:8000';
  const config = searcherConfig.parse({ listen: '127.0.5.34:0', allowed_origins: [allowed] });
  const server = await SearchServer.listen({ config, engine, token: undefined });
  t.after(() => server.close());
  const http = `http://${server.address}`;
  const socket = await Client.open(t, `ws://${server.address}/`);
  await socket.next();
  const client = new SherlockClient(`ws://${server.address}/`, { WebSocket });
  t.after(() => client.close());

  for (const [n, q] of ['bru', 'Sherlock ho', 'creme bru', 'sherlock ', '東'].entries()) {
    const { took_ms: _, id: __, ...wanted } = await socket.suggest(`w${n}`, q, { limit: 5 });
    const get = await fetch(`${http}/api/suggest?q=${encodeURIComponent(q)}&limit=5`);
    assert.equal(get.status, 200);
    assert.equal(get.headers.get('content-type'), 'application/json');
    const { took_ms: ___, ...got } = (await get.json()) as Record<string, unknown>;
    assert.deepEqual(got, wanted, q);
    const post = await fetch(`${http}/api/suggest`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ q, limit: 5 }) });
    const { took_ms: ____, ...posted } = (await post.json()) as Record<string, unknown>;
    assert.deepEqual(posted, wanted, q);
    const typed = await client.suggest(q, { limit: 5 });
    assert.deepEqual({ q: typed.q, suggestions: typed.suggestions }, { q: wanted['q'], suggestions: wanted['suggestions'] }, q);
    // What a browser asks when it offers the engine: the OpenSearch array, its URLs this searcher's results page.
    const texts = (wanted['suggestions'] as Completion[]).map((c) => c.text);
    const open = await fetch(`${http}/api/suggest?q=${encodeURIComponent(q)}&limit=5&format=opensearch`);
    assert.equal(open.headers.get('content-type'), 'application/x-suggestions+json');
    const array = (await open.json()) as [string, string[], string[], string[]];
    assert.deepEqual(array.slice(0, 2), [q, texts]);
    assert.deepEqual(array[3], texts.map((text) => `${http}/search?q=${encodeURIComponent(text)}`));
    const accepted = await fetch(`${http}/api/suggest?q=${encodeURIComponent(q)}&limit=5`, { headers: { accept: 'application/x-suggestions+json' } });
    assert.deepEqual(await accepted.json(), array);
  }

  // Refusals name the parameter; an allowed origin gets CORS, a foreign one a 403.
  for (const [query, field] of [['q=', 'q'], ['q=a&limit=21', 'limit'], ['q=a&format=xml', 'format'], ['q=a&offset=1', 'offset'], ['q=a&q=b', 'q']] as const) {
    const refused = await fetch(`${http}/api/suggest?${query}`);
    assert.equal(refused.status, 400, query);
    assert.equal(((await refused.json()) as Record<string, unknown>)['field'], field, query);
  }
  const cors = await fetch(`${http}/api/suggest?q=gaz`, { headers: { origin: allowed } });
  assert.equal(cors.headers.get('access-control-allow-origin'), allowed);
  assert.ok(((await cors.json()) as { suggestions: Completion[] }).suggestions.some((c) => c.text === 'gazette'));
  assert.equal((await fetch(`${http}/api/suggest?q=gaz`, { headers: { origin: 'http://127.0.5.36:8000' } })).status, 403);
});
