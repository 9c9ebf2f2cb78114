/**
 * The engine end to end: two loopback sites whose pages are made for the
 * query language's cases are crawled and indexed with the real CLI, then
 * searched through a real WebSocket against `sherlock searcher run`, and
 * with `sherlock search`. Checked: words, AND, OR, exclusion, phrases,
 * NEAR/n, site:, type:, title:, prefixes, accents, CJK, the order of
 * designed cases, snippets, a malformed query, and a live swap to a newer
 * version while searches keep running.
 */

import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { after, before } from 'node:test';
import { runCli, startCli, until, type Running } from '../helpers/cli.js';
import { startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { NoIndexError } from '../../searcher/engine.js';
import { IndexEngine, searchVersion } from '../../searcher/index-engine.js';
import { IndexVersion } from '../../searcher/index-version.js';
import { TITLE_BONUS, idf } from '../../searcher/rank.js';
import { parseQuery } from '../../searcher/query.js';
import { buildCli } from '../indexer/site.js';
import { Client, listening, type Message } from './net.js';

const SITE_A: Record<string, string> = {
  '/': `<title>Engine home</title><p>Welcome to the fixture.</p>
    <a href="/title">a</a> <a href="/body">b</a> <a href="/adjacent">c</a> <a href="/scattered">d</a> <a href="/near">e</a>
    <a href="/far">f</a> <a href="/accent">g</a> <a href="/plain">h</a> <a href="/cjk">i</a> <a href="/escape">j</a>
    <a href="/prefix">k</a> <a href="/notes.txt">l</a> <a href="/keeper">m</a> <a href="/keeper-short">n</a>`,
  '/title': '<title>Zebra facts</title><p>Stripes are common on this animal.</p>',
  '/body': '<title>Animal notes</title><p>The zebra lives in Africa with many friends.</p>',
  '/adjacent': '<title>One</title><p>The baker street museum is open daily.</p>',
  '/scattered': '<title>Two</title><p>A baker sells bread and cakes in the morning to everyone who passes by the old long street.</p>',
  '/near': '<title>Near</title><p>alpha one two beta</p>',
  '/far': '<title>Far</title><p>alpha one two three four five six seven eight beta</p>',
  '/accent': '<title>Paris</title><p>Le café est ouvert le matin.</p>',
  '/plain': '<title>Diner</title><p>The cafe is open in the morning.</p>',
  '/cjk': '<title>東京</title><p>東京都に住んでいます。</p>',
  '/escape': '<title>Markup</title><p>Use &lt;b&gt;tags&lt;/b&gt; &amp; quotes: escapeword here.</p>',
  '/prefix': '<title>Code</title><p>programming programmer programs</p>',
  '/keeper': '<title>Quokka keeper handbook</title><p>Every quokka keeper reads this. A quokka keeper feeds the quokka; the keeper counts them.</p>',
  '/keeper-short': '<title>Quokka keeper</title><p>The quokka keeper.</p>',
};
const SITE_B: Record<string, string> = {
  '/': '<title>Other host</title><p>A zebra crossing on another host.</p>',
};

function routes(pages: Record<string, string>): Record<string, RouteHandler> {
  const out: Record<string, RouteHandler> = {
    '/notes.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('plaintext zebra notes\n'),
  };
  for (const [path, body] of Object.entries(pages)) {
    out[path] = (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(`<html><head></head><body>${body}</body></html>`);
  }
  return out;
}

const CRAWL_SETS = ['gatherer.allow_private_addresses=true', 'gatherer.min_delay=0s'].flatMap((s) => ['--set', s]);
const SEARCHER_SETS = ['searcher.ip_search_rate=0', 'searcher.message_rate=0'].flatMap((s) => ['--set', s]);

async function crawl(state: string, seeds: string[]): Promise<void> {
  const file = join(state, `seeds-${Date.now()}.txt`);
  writeFileSync(file, seeds.join('\n') + '\n');
  const run = await runCli(['crawl', '--state', state, '--seeds', file, '--until-idle', ...CRAWL_SETS]);
  assert.equal(run.status, 0, run.stderr);
}

let state: string;
let a: Fixture;
let b: Fixture;
let aRoutes: Record<string, RouteHandler>;
let searcher: Running;
let ws: string;

before(async () => {
  state = mkdtempSync(join(tmpdir(), 'sherlock-engine-'));
  aRoutes = routes(SITE_A);
  a = await startFixture({ address: '127.0.0.81', routes: aRoutes });
  b = await startFixture({ address: '127.0.0.82', routes: routes(SITE_B) });
  await crawl(state, [`${a.origin}/`, `${b.origin}/`]);
  await buildCli(state);
  searcher = startCli(undefined, [...SEARCHER_SETS, 'searcher', 'run', '--state', state, '--listen', '127.0.0.1:0']);
  ws = `ws://${await listening(searcher)}/`;
});

after(async () => {
  searcher?.child.kill('SIGKILL');
  await a?.close();
  await b?.close();
  if (process.env['SHERLOCK_KEEP_TMP'] === undefined) rmSync(state, { recursive: true, force: true });
});

/** The paths of a result's hits on site A (other hosts by origin). */
function paths(result: Message): string[] {
  assert.equal(result.type, 'result', JSON.stringify(result));
  return (result['hits'] as Array<{ url: string }>).map((h) => (h.url.startsWith(a.origin) ? h.url.slice(a.origin.length) : h.url));
}

async function search(t: Parameters<typeof Client.open>[0], q: string, extra: Record<string, unknown> = {}): Promise<Message> {
  const client = await Client.open(t, ws);
  return client.search('q', q, extra);
}

test('words, AND, OR and -exclusion find the cards they say', async (t) => {
  const zebra = paths(await search(t, 'zebra'));
  assert.deepEqual(new Set(zebra), new Set(['/title', '/body', '/notes.txt', `${b.origin}/`]));
  assert.deepEqual(paths(await search(t, 'zebra africa')), ['/body']);
  assert.deepEqual(new Set(paths(await search(t, 'stripes OR africa'))), new Set(['/title', '/body']));
  assert.deepEqual(new Set(paths(await search(t, 'zebra -africa'))), new Set(['/title', '/notes.txt', `${b.origin}/`]));
  const none = await search(t, 'nosuchwordanywhere');
  assert.deepEqual([none['total'], paths(none)], [{ value: 0, relation: 'eq' }, []]);
});

test('a title match ranks above a body match', async (t) => {
  const order = paths(await search(t, 'zebra'));
  assert.ok(order.indexOf('/title') < order.indexOf('/body'), order.join(' '));
});

test('the page titled by the query, no longer than it, ranks first with the title bonus', async (t) => {
  const result = await search(t, 'quokka keeper', { explain: true });
  assert.deepEqual(paths(result), ['/keeper-short', '/keeper']);
  const bonus = (result['hits'] as Array<{ explain: { query: { bonus: number } } }>).map((h) => h.explain.query.bonus);
  assert.ok(Math.abs(bonus[0]! - bonus[1]! - TITLE_BONUS) < 1e-9, bonus.join(' '));
});

test('phrases need adjacent words; loose words rank adjacent ones first', async (t) => {
  assert.deepEqual(paths(await search(t, '"baker street"')), ['/adjacent']);
  assert.deepEqual(paths(await search(t, 'baker street')), ['/adjacent', '/scattered']);
});

test('NEAR/n takes the words at most n apart', async (t) => {
  assert.deepEqual(paths(await search(t, 'alpha NEAR/3 beta')), ['/near']);
  assert.deepEqual(new Set(paths(await search(t, 'alpha NEAR/10 beta'))), new Set(['/near', '/far']));
});

test('site:, type: and title: restrict; filters do too', async (t) => {
  assert.deepEqual(paths(await search(t, 'zebra site:127.0.0.82')), [`${b.origin}/`]);
  assert.deepEqual(new Set(paths(await search(t, 'zebra -site:127.0.0.82'))), new Set(['/title', '/body', '/notes.txt']));
  assert.deepEqual(paths(await search(t, 'zebra type:text')), ['/notes.txt']);
  assert.deepEqual(paths(await search(t, 'title:zebra')), ['/title']);
  assert.deepEqual(paths(await search(t, 'title:"zebra facts"')), ['/title']);
  assert.deepEqual(paths(await search(t, 'url:scattered')), ['/scattered']);
  assert.deepEqual(paths(await search(t, 'zebra', { filters: { type: ['text'] } })), ['/notes.txt']);
  assert.deepEqual(paths(await search(t, 'zebra', { filters: { site: ['127.0.0.82'] } })), [`${b.origin}/`]);
});

test('prefix* expands through the lexicon', async (t) => {
  assert.deepEqual(paths(await search(t, 'programm*')), ['/prefix']);
  const result = await search(t, 'progr*');
  assert.deepEqual(paths(result), ['/prefix']);
  assert.match((result['hits'] as Array<{ snippet: string }>)[0]!.snippet, /<mark>programming<\/mark> <mark>programmer<\/mark>/);
});

test('accents: cafe finds café and cafe; café prefers café', async (t) => {
  assert.deepEqual(new Set(paths(await search(t, 'cafe'))), new Set(['/accent', '/plain']));
  assert.deepEqual(paths(await search(t, 'café')), ['/accent', '/plain']);
});

test('CJK words are found as pairs and phrases of pairs', async (t) => {
  assert.deepEqual(paths(await search(t, '東京都')), ['/cjk']);
  assert.deepEqual(paths(await search(t, '住んで')), ['/cjk']);
});

test('hits carry the card, a marked and escaped snippet, and facets', async (t) => {
  const result = await search(t, 'escapeword');
  const [hit] = result['hits'] as Array<Record<string, unknown>>;
  assert.equal(hit!['url'], `${a.origin}/escape`);
  assert.equal(hit!['title'], 'Markup');
  assert.equal(hit!['type'], 'text/html');
  assert.equal(hit!['site'], '127.0.0.81');
  assert.match(String(hit!['date']), /^\d{4}-\d\d-\d\dT/);
  assert.equal(hit!['snippet'], 'Use &#60;b&#62;tags&#60;/b&#62; &#38; quotes: <mark>escapeword</mark> here.');
  const zebra = await search(t, 'zebra');
  assert.deepEqual(zebra['facets'], {
    site: [
      { value: '127.0.0.81', count: 3 },
      { value: '127.0.0.82', count: 1 },
    ],
    type: [
      { value: 'text/html', count: 3 },
      { value: 'text/plain', count: 1 },
    ],
    lang: (zebra['facets'] as { lang: unknown }).lang,
  });
  // The pages declare no language; a few words are too few to be sure which (each card counted once).
  assert.equal(((zebra['facets'] as { lang: unknown }).lang as Array<{ count: number }>).reduce((n, f) => n + f.count, 0), 4);
});

test('a malformed query is BAD_QUERY with its position', async (t) => {
  const answer = await search(t, 'zebra "open');
  assert.deepEqual([answer.type, answer['code'], answer['reason'], answer['position']], ['error', 'BAD_QUERY', 'syntax', 6]);
});

test('sherlock search prints hits, and --json the result', async () => {
  const text = await runCli(['search', '--state', state, 'zebra', 'africa']);
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /^1 found in \d+/);
  assert.match(text.stdout, /1\. Animal notes\n {3}http:\/\/127\.0\.0\.81:\d+\/body\n {3}The zebra lives in Africa/);
  const json = await runCli(['search', '--state', state, '--json', '--limit', '1', 'zebra']);
  assert.equal(json.status, 0, json.stderr);
  const result = JSON.parse(json.stdout) as { total: { value: number }; hits: unknown[] };
  assert.deepEqual([result.total.value, result.hits.length], [4, 1]);
  const bad = await runCli(['search', '--state', state, '"open']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /bad query: a quotation mark is not closed \(at character 1\)/);
});

test('answers are the same from the caches as without them, query after query', async (t) => {
  const dir = join(state, 'index', readlinkSync(join(state, 'index', 'current')));
  const cached = IndexVersion.open(dir, 'cached', { chains: 64 * 1024 * 1024, cards: 64 * 1024 * 1024 });
  // One byte: nothing fits, every query decodes its chains and reads its cards anew.
  const bare = IndexVersion.open(dir, 'bare', { chains: 1, cards: 1 });
  t.after(() => {
    cached.retire();
    bare.retire();
  });
  const queries = ['zebra', 'zebra africa', 'stripes OR africa', 'zebra -africa', '"baker street"', 'baker street', 'alpha NEAR/3 beta', 'title:zebra', 'url:scattered', 'café', 'cafe', 'program*', 'zebra type:text', 'zebra site:127.0.0.82', '東京'];
  const answer = (version: IndexVersion, q: string) => searchVersion(version, { query: parseQuery(q), offset: 0, limit: 10, filters: {} }, new AbortController().signal);
  for (let round = 0; round < 3; round++) {
    for (const q of queries) assert.deepEqual(await answer(cached, q), await answer(bare, q), `${q}, round ${round + 1}`);
  }
  assert.ok((await answer(cached, 'café')).hits.length >= 2);
});

test('a word cut by the work bound keeps about its IDF: its chain count is estimated, not the chains read', (t) => {
  const dir = join(state, 'index', readlinkSync(join(state, 'index', 'current')));
  const version = IndexVersion.open(dir, 'cut', { chains: 1, cards: 1 });
  t.after(() => version.retire());
  // The word in most cards.
  const entry = version.lexicon.all().map((e) => ({ e, n: version.postings(e).count })).reduce((a, b) => (b.n > a.n ? b : a)).e;
  const whole = version.postings(entry);
  assert.ok(whole.count >= 8, `${whole.count} chains`);
  const cut = version.postings(entry, 2);
  assert.equal(cut.count, 2);
  assert.equal(whole.total, whole.count);
  assert.ok(Math.abs(cut.total - whole.count) <= whole.count / 2, `${cut.total} estimated of ${whole.count}`);
  assert.ok(Math.abs(cut.idf - whole.idf) < Math.abs(idf(2, version.cardCount) - whole.idf), `idf ${cut.idf} cut, ${whole.idf} whole`);
});

test('sherlock search --bench-queries times a query file in process, ranked and whole', async () => {
  const file = join(state, 'bench-queries.tsv');
  writeFileSync(file, '# kind TAB query, or a query alone\nzebra\nand2\tzebra africa\nnosuchwordanywhere\n');
  const run = await runCli(['search', '--state', state, '--bench-queries', file, '--passes', '2', '--warmup', '1']);
  assert.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout) as { rankMs: number[]; searchMs: number[]; zeroHits: number; peakRss: number };
  assert.deepEqual([out.rankMs.length, out.searchMs.length, out.zeroHits], [6, 6, 1]);
  assert.ok([...out.rankMs, ...out.searchMs].every((ms) => ms >= 0) && out.peakRss > 0);
  writeFileSync(file, 'zebra\n"open\n');
  const bad = await runCli(['search', '--state', state, '--bench-queries', file]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /bad query: a quotation mark is not closed/);
});

test('live swap: a newer version is taken while searches run, none fails', async (t) => {
  const client = await Client.open(t, ws);
  const before = (await client.next((m) => m.type === 'welcome'))['index'];
  assert.equal(paths(await client.search('f0', 'freshword')).length, 0);
  aRoutes['/fresh'] = routes({ '/fresh': '<title>Fresh</title><p>freshword arrives later</p>' })['/fresh']!;
  let n = 0;
  let found = false;
  const running = (async () => {
    while (!found) {
      const answer = await client.search(`s${n++}`, 'freshword OR zebra');
      assert.equal(answer.type, 'result', JSON.stringify(answer));
      found = paths(answer).includes('/fresh');
    }
  })();
  await crawl(state, [`${a.origin}/fresh`]);
  await buildCli(state);
  await Promise.race([running, until('the searcher to swap', () => found, 30_000)]);
  await running;
  assert.match(searcher.stderr, /index version loaded/);
  const welcome = await (await Client.open(t, ws)).next((m) => m.type === 'welcome');
  assert.notEqual(welcome['index'], before);
  assert.ok(n > 1);
});

test('in process: no index answers NoIndexError until a version appears; an aborted search stops; a damaged version is refused and the old one kept', async (t) => {
  const other = mkdtempSync(join(tmpdir(), 'sherlock-engine-swap-'));
  t.after(() => rmSync(other, { recursive: true, force: true }));
  mkdirSync(join(other, 'index'));
  const engine = await IndexEngine.start({ state: other, pollMs: 0 });
  t.after(() => engine.close());
  const request = { query: parseQuery('zebra'), offset: 0, limit: 10, filters: {} };
  await assert.rejects(engine.search(request, new AbortController().signal), NoIndexError);
  assert.equal(engine.version, undefined);

  const good = join(state, 'index', readlinkSync(join(state, 'index', 'current')));
  symlinkSync(good, join(other, 'index', 'current'));
  await engine.check();
  const name = engine.version;
  assert.ok(name !== undefined);
  assert.ok((await engine.search(request, new AbortController().signal)).total.value >= 4);
  await assert.rejects(engine.search(request, AbortSignal.abort(new Error('gone'))), /gone/);

  const bad = join(other, 'index', 'damaged');
  cpSync(good, bad, { recursive: true });
  const cards = readFileSync(join(bad, 'Cards'));
  cards[100] = cards[100]! ^ 0xff;
  writeFileSync(join(bad, 'Cards'), cards);
  rmSync(join(other, 'index', 'current'));
  symlinkSync(bad, join(other, 'index', 'current'));
  await engine.check();
  assert.equal(engine.version, name);
  assert.equal(engine.status()['failed_loads'], 1);
  assert.ok((await engine.search(request, new AbortController().signal)).total.value >= 4);
});
