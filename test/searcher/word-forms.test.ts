/**
 * Word forms end to end: a site crawled and indexed through the CLI, then
 * searched in-process. A query word finds the other forms of its stem class
 * (English "bridges" → "bridge", Czech "kolacu" → "koláče", "koláčů"),
 * the form as typed ranks above a stem variant with the same occurrences,
 * and `=word` takes the exact form only.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { after, before } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { currentVersion, indexDirectory } from '../../common/index/layout.js';
import type { SearchRequest } from '../../searcher/engine.js';
import { searchVersion } from '../../searcher/index-engine.js';
import { IndexVersion } from '../../searcher/index-version.js';
import { parseQuery } from '../../searcher/query.js';
import { editDistance } from '../../searcher/spelling.js';
import { Synonyms } from '../../searcher/synonyms.js';
import { buildCli } from '../indexer/site.js';

const PAGES: Record<string, { lang: string; body: string; modified?: string }> = {
  '/bridge': { lang: 'en', body: '<title>Stone bridge</title><p>The old stone bridge crosses the river near the mill.</p>', modified: 'Mon, 05 Mar 2001 10:00:00 GMT' },
  '/bridges': { lang: 'en', body: '<title>River crossings</title><p>Three bridges cross the river, and all the bridges are old.</p>', modified: 'Tue, 15 Nov 2011 10:00:00 GMT' },
  '/bridging': { lang: 'en', body: '<title>Towns</title><p>Bridging the gap between the two towns took years.</p>' },
  '/ferry': { lang: 'en', body: '<title>Ferry</title><p>A ferry crosses where no span was ever built.</p>' },
  '/xylophones': { lang: 'en', body: '<title>Concert</title><p>Wooden xylophones sound warm in the old hall tonight.</p>' },
  '/xylophone': { lang: 'en', body: '<title>Lesson</title><p>Metal xylophone notes ring bright for the school choir.</p>' },
  '/cake-1': { lang: 'cs', body: '<title>Koláče</title><p>Kulaté kynuté koláče plněné povidly, mákem nebo tvarohem.</p>' },
  '/french': { lang: 'en', body: '<title>Le pont</title><p>Le vieux pont de pierre traverse la rivière près du moulin, et les enfants y jouent tous les soirs.</p>' },
  '/czech': { lang: '', body: '<p>Starý kamenný most přes řeku u mlýna stojí už několik set let a lidé po něm chodí každý den.</p>' },
  '/cake-2': { lang: 'cs', body: '<title>Pouť</title><p>Na pouť se peče sto koláčů pro celou vesnici.</p>' },
  // "program" is English first (the root page, card 0), so its Lexicon class is English; Czech "programu" still finds it here.
  '/fair': { lang: 'cs', body: '<title>Pouť</title><p>Program pouti začíná v poledne průvodem vesnicí.</p>' },
  '/marimba': { lang: 'en', body: '<title>Lesson</title><p>Metal marimba notes ring bright for the school choir.</p>' },
  '/couch': { lang: 'en', body: '<title>Room</title><p>A red couch stands by the window.</p>' },
  // Too short to tell its language, declared nowhere: stemmed in the language of most pages.
  '/short': { lang: '', body: '<p>Rowboats</p>' },
};
const SYNONYMS = Synonyms.parse('# the test\'s list\nxylophone, marimba\nsettee => couch\nchaise longue, couch\n', 'synonyms.txt');

let state: string;
let site: Fixture;
let version: IndexVersion;

before(async () => {
  state = mkdtempSync(join(tmpdir(), 'sherlock-forms-'));
  const routes: Record<string, RouteHandler> = {
    '/': (_req, res) =>
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(`<html lang="en"><body><p>The program.</p>${Object.keys(PAGES).map((p, i) => `<a href="${p}">${i}</a>`).join(' ')}</body></html>`),
  };
  for (const [path, { lang, body, modified }] of Object.entries(PAGES)) {
    const html = lang === '' ? '<html>' : `<html lang="${lang}">`;
    const headers = { 'Content-Type': 'text/html; charset=utf-8', ...(modified === undefined ? {} : { 'Last-Modified': modified }) };
    routes[path] = (_req, res) => res.writeHead(200, headers).end(`${html}<head></head><body>${body}</body></html>`);
  }
  site = await startFixture({ address: '127.0.0.83', routes });
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/\n`);
  const crawl = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s']);
  assert.equal(crawl.status, 0, crawl.stderr);
  await buildCli(state);
  const name = currentVersion(indexDirectory(state))!;
  version = IndexVersion.open(join(indexDirectory(state), name), name);
});

after(async () => {
  version?.retire();
  await site?.close();
  if (process.env['SHERLOCK_KEEP_TMP'] === undefined) rmSync(state, { recursive: true, force: true });
});

async function paths(q: string, synonyms = Synonyms.NONE, more: Partial<SearchRequest> = {}): Promise<string[]> {
  const result = await searchVersion(version, { query: synonyms.apply(parseQuery(q)), offset: 0, limit: 20, filters: {}, ...more }, new AbortController().signal);
  return result.hits.map((hit) => hit.url.slice(site.origin.length));
}

test('an English word finds the other forms of its stem, the form as typed first', async () => {
  const bridges = await paths('bridges');
  assert.deepEqual(new Set(bridges), new Set(['/bridge', '/bridges', '/bridging']));
  // A title weighs more than any penalty: "Stone bridge" may lead, but the body's own form beats another's.
  assert.ok(bridges.indexOf('/bridges') < bridges.indexOf('/bridging'), bridges.join(' '));
  assert.deepEqual(new Set(await paths('bridge')), new Set(['/bridge', '/bridges', '/bridging']));
});

test('a Czech word typed without accents finds its inflected forms', async () => {
  assert.deepEqual(new Set(await paths('kolacu')), new Set(['/cake-1', '/cake-2']));
  assert.deepEqual(new Set(await paths('koláč')), new Set(['/cake-1', '/cake-2']));
});

test('a Czech word finds its stem where the stem is a word of another language\'s class too', async () => {
  // Found as a form of the word, not through a spelling correction ("programu" is one edit from "program").
  const result = await searchVersion(version, { query: parseQuery('programu'), offset: 0, limit: 10, filters: {} }, new AbortController().signal);
  assert.equal(result.suggest, undefined);
  assert.deepEqual(new Set(result.hits.map((hit) => hit.url.slice(site.origin.length))), new Set(['/fair', '/']));
});

test('a page whose language is not told has its words stemmed in the language of most pages', async () => {
  const result = await answer('rowboat');
  assert.equal(result.suggest, undefined);
  assert.deepEqual(result.hits.map((hit) => [hit.url.slice(site.origin.length), hit.lang]), [['/short', 'und']]);
});

test('the form as typed ranks above a stem variant with the same occurrences', async () => {
  assert.deepEqual(await paths('xylophones'), ['/xylophones', '/xylophone']);
  assert.deepEqual(await paths('xylophone'), ['/xylophone', '/xylophones']);
});

test('a synonym finds its pages behind the word\'s own and its stem variants\'; => goes one way; a run of words may be a term', async () => {
  assert.deepEqual(await paths('xylophone', SYNONYMS), ['/xylophone', '/xylophones', '/marimba']);
  assert.deepEqual(await paths('marimba', SYNONYMS), ['/marimba', '/xylophone', '/xylophones']);
  assert.deepEqual(await paths('settee', SYNONYMS), ['/couch']);
  assert.deepEqual(await paths('couch', SYNONYMS), ['/couch']);
  assert.deepEqual(await paths('chaise longue', SYNONYMS), ['/couch']);
  assert.deepEqual(await paths('"chaise longue"', SYNONYMS), ['/couch']);
  assert.deepEqual(await paths('=xylophone', SYNONYMS), ['/xylophone']);
  assert.deepEqual(await paths('xylophone'), ['/xylophone', '/xylophones']);
});

test('=word takes the exact form only, in words and phrases', async () => {
  assert.deepEqual(await paths('=bridges'), ['/bridges']);
  assert.deepEqual(await paths('=bridge'), ['/bridge']);
  assert.deepEqual(await paths('="stone bridge"'), ['/bridge']);
  assert.deepEqual(await paths('=koláčů'), ['/cake-2']);
  assert.deepEqual(await paths('=kolacu'), []);
});

test('a page\'s language is told from its text: French under a site-wide lang="en", Czech declared nowhere', async () => {
  assert.deepEqual(await paths('lang:fr'), ['/french']);
  assert.ok((await paths('lang:cs')).includes('/czech'));
});

test('lang: keeps the cards of a language, alone or with words; an unknown code is refused', async () => {
  assert.deepEqual(new Set(await paths('lang:cs')), new Set(['/cake-1', '/cake-2', '/czech', '/fair']));
  assert.deepEqual(new Set(await paths('kolacu lang:cs')), new Set(['/cake-1', '/cake-2']));
  assert.deepEqual(await paths('bridges lang:cs'), []);
  assert.deepEqual(new Set(await paths('bridges -lang:en')), new Set());
  assert.throws(() => parseQuery('bridge lang:english'), /lang: takes an ISO 639-1 language code/);
  const result = await searchVersion(version, { query: parseQuery('bridge'), offset: 0, limit: 10, filters: { lang: ['en'] } }, new AbortController().signal);
  assert.deepEqual(result.facets.lang, [{ value: 'en', count: 3 }]);
});

async function answer(q: string) {
  return searchVersion(version, { query: parseQuery(q), text: q, offset: 0, limit: 20, filters: {} }, new AbortController().signal);
}

test('a misspelt word with no hits is answered for the correction, and says so', async () => {
  const result = await answer('brige');
  assert.deepEqual(result.suggest, { q: 'bridge', html: '<mark>bridge</mark>', applied: true });
  assert.ok(result.hits.some((hit) => hit.url.endsWith('/bridge')));
  assert.deepEqual((await answer('stone brige')).suggest, { q: 'stone bridge', html: 'stone <mark>bridge</mark>', applied: true });
  assert.deepEqual((await answer('title:brige')).suggest?.q, 'title:bridge');
  // Without accents, as typed: the correction is the word the index has.
  assert.deepEqual((await answer('kolcae')).suggest?.q, 'koláče');
  assert.equal((await answer('bridge')).suggest, undefined);
  assert.equal((await answer('zzqqxx')).suggest, undefined);
  assert.equal((await answer('=brige')).suggest, undefined);
});

test('after:, before: and filters.age keep cards by Last-Modified (else the fetch); sort "date" puts the newest first', async () => {
  assert.deepEqual(await paths('bridges before:2005'), ['/bridge']);
  assert.deepEqual(await paths('bridges after:2005 before:2011-11-16'), ['/bridges']);
  assert.deepEqual(await paths('bridges after:2011-11-16'), ['/bridging']);
  assert.deepEqual(await paths('before:2011-12'), ['/bridge', '/bridges']);
  assert.deepEqual(await paths('bridges', Synonyms.NONE, { filters: { age: 30 } }), ['/bridging']);
  assert.deepEqual(await paths('bridges', Synonyms.NONE, { sort: 'date' }), ['/bridging', '/bridges', '/bridge']);
  assert.throws(() => parseQuery('bridge after:yesterday'), /after: takes a date as YYYY, YYYY-MM or YYYY-MM-DD/);
  assert.throws(() => parseQuery('bridge before:2023-02-30'), /before: takes a date/);
});

test('explain gives each hit the parts of its score: each word\'s form, factor, IDF and fields, adding up to the hit\'s score', async () => {
  const explained = async (q: string, synonyms = Synonyms.NONE) => {
    const result = await searchVersion(version, { query: synonyms.apply(parseQuery(q)), offset: 0, limit: 20, filters: {}, explain: true }, new AbortController().signal);
    for (const hit of result.hits) {
      assert.ok(hit.explain !== undefined);
      assert.ok(Math.abs(hit.explain.score - hit.score) <= 0.05 + 1e-9, `${q}: ${hit.explain.score} against ${hit.score}`);
    }
    return new Map(result.hits.map((hit) => [hit.url.slice(site.origin.length), hit.explain!]));
  };
  const bridges = await explained('bridges');
  assert.deepEqual([bridges.get('/bridges')!.query.match, bridges.get('/bridging')!.query.match], ['exact', 'stem']);
  assert.equal(bridges.get('/bridging')!.query.factor, 0.8);
  assert.deepEqual(bridges.get('/bridge')!.query.fields, { title: 1, body: 1, url: 1 });
  assert.deepEqual(bridges.get('/bridge')!.query.forms, [{ word: 'bridge', match: 'stem' }]);
  const synonym = (await explained('xylophone', Synonyms.parse('xylophone, marimba\n', 's.txt'))).get('/marimba')!.query;
  assert.deepEqual([synonym.match, synonym.factor], ['synonym', 0.6]);
  const and = (await explained('old river')).get('/bridges')!.query;
  assert.equal(and.node, 'AND');
  assert.ok(Math.abs(and.score - and.parts!.reduce((n, p) => n + p.score, 0) - and.bonus!) < 1e-9);
  for (const q of ['"stone bridge"', 'stone NEAR/3 river', 'bridge OR ferry -lang:cs', 'koláč']) await explained(q);
});

test('edit distance counts insertions, deletions, substitutions and swaps, and stops past the bound', () => {
  assert.equal(editDistance('brige', 'bridge', 2), 1);
  assert.equal(editDistance('teh', 'the', 2), 1);
  assert.equal(editDistance('bridge', 'bridge', 2), 0);
  assert.equal(editDistance('brdg', 'bridge', 2), 2);
  assert.equal(editDistance('abcdef', 'uvwxyz', 2), 3);
  assert.equal(editDistance('a', 'abcd', 2), 3);
});
