/**
 * Pruned ranking (index-engine.ts rankVersion) against unpruned, on a real
 * index of a generated site whose pages share a small vocabulary in titles,
 * headings, emphasis and text: for every query, the page (cards, scores,
 * order) is the same, and a total is the same unless pruning says it is a
 * lower bound, which it then is. Pruning must also have left some phrase
 * cards unscored, or this test proves nothing. Underneath, every card's
 * bound is at least its closer bound (a phrase's, from the words' shapes),
 * and that at least its score. Ranking words and ANDs of words from their
 * skip tables (windows.ts), which the test's words all have after their
 * first whole walk, gives the same pages, totals and facets.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import test, { after, before } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { startFixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { Evaluation } from '../../searcher/evaluate.js';
import { rankVersion } from '../../searcher/index-engine.js';
import { IndexVersion } from '../../searcher/index-version.js';
import { withStatic } from '../../searcher/rank.js';
import { rankByWindows } from '../../searcher/windows.js';
import { parseQuery } from '../../searcher/query.js';
import { mulberry32 as generator } from '../../bench/queries.js';
import { buildCli } from '../indexer/site.js';

// Some in two forms, which a query word stands for together (a stem class).
const WORDS = ['the', 'linux', 'kernel', 'driver', 'memory', 'page', 'table', 'lock', 'of', 'and', 'drivers', 'locks', 'pages'];
const PAGES = 200;

function page(random: () => number): string {
  // Query words among fillers, dense on some pages and sparse on others, so that phrases are frequent and the words' distances (the proximity bonus) vary.
  const dense = [0.9, 0.4, 0.1][Math.floor(random() * 3)]!;
  const word = (): string => (random() < dense ? WORDS[Math.floor(random() * WORDS.length)]! : `filler${Math.floor(random() * 300)}`);
  const words = (n: number): string => Array.from({ length: n }, word).join(' ');
  const paragraphs = Array.from({ length: 1 + Math.floor(random() * 4) }, () => `<p>${words(10 + Math.floor(random() * 60))} <em>${words(2)}</em></p>`);
  return `<html><head><title>${words(1 + Math.floor(random() * 4))}</title></head><body><h1>${words(3)}</h1>${paragraphs.join('')}</body></html>`;
}

let state: string;
let version: IndexVersion;
/** The same version with no room for chains: the windows rank every query they can (a cached word is ranked whole). */
let uncached: IndexVersion;

before(async () => {
  state = mkdtempSync(join(tmpdir(), 'sherlock-prune-'));
  const random = generator(7);
  const html = (body: string): RouteHandler => (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(body);
  const routes: Record<string, RouteHandler> = {
    '/': html(`<html><body>${Array.from({ length: PAGES }, (_, i) => `<a href="/p${i}">p</a>`).join(' ')}</body></html>`),
  };
  for (let i = 0; i < PAGES; i++) routes[`/p${i}`] = html(page(random));
  const site = await startFixture({ address: '127.0.0.83', routes });
  try {
    writeFileSync(join(state, 'seeds.txt'), `${site.origin}/\n`);
    const sets = ['gatherer.allow_private_addresses=true', 'gatherer.min_delay=0s'].flatMap((s) => ['--set', s]);
    const crawl = await runCli(['crawl', '--state', state, '--seeds', join(state, 'seeds.txt'), '--until-idle', ...sets]);
    assert.equal(crawl.status, 0, crawl.stderr);
  } finally {
    await site.close();
  }
  await buildCli(state);
  const dir = join(state, 'index');
  const target = readlinkSync(join(dir, 'current'));
  version = IndexVersion.open(resolve(dir, target), basename(target), { chains: 1 << 24, cards: 1 << 24 });
  uncached = IndexVersion.open(resolve(dir, target), basename(target), { chains: 1, cards: 1 << 24 });
});

after(() => {
  version?.retire();
  uncached?.retire();
  if (process.env['SHERLOCK_KEEP_TMP'] === undefined) rmSync(state, { recursive: true, force: true });
});

/** Phrases of two and three words, ANDs of two and three, an AND with a phrase and an exclusion, prefixes and fields. */
function queries(): string[] {
  const out: string[] = [];
  for (const a of WORDS) {
    for (const b of WORDS) {
      if (a === b) continue;
      out.push(`"${a} ${b}"`, `${a} ${b}`);
      out.push(`"${a} ${b} ${WORDS[(a.length + b.length) % WORDS.length]}"`, `${a} ${b} ${WORDS[(a.length * b.length) % WORDS.length]}`);
    }
    out.push(`"${a} the" kernel -lock`);
    // Several words in one term (a prefix's expansions) and a field: scored while merging, not from the chains' scores.
    out.push(`filler29* ${a}`, `title:${a} kernel`, `"${a} filler29*"`);
  }
  return out;
}

test('pruned ranking returns the same pages as scoring every card; its totals are exact or lower bounds', async () => {
  const signal = new AbortController().signal;
  let lowerBounds = 0;
  let compared = 0;
  for (const q of queries()) {
    for (const [offset, limit] of [[0, 10], [10, 10], [0, 3], [0, 1]] as const) {
      const request = { query: parseQuery(q), offset, limit, filters: {} };
      const pruned = await rankVersion(version, request, signal, true);
      const full = await rankVersion(version, request, signal, false);
      assert.deepEqual(pruned.page, full.page, `${q} offset ${offset} limit ${limit}`);
      assert.equal(full.total.relation, 'eq', q);
      if (pruned.total.relation === 'eq') {
        assert.deepEqual(pruned.total, full.total, q);
        assert.deepEqual(pruned.facets, full.facets, q);
      } else {
        lowerBounds += 1;
        assert.ok(pruned.total.value <= full.total.value && pruned.total.value >= pruned.page.length, q);
      }
      compared += full.page.length;
    }
  }
  assert.ok(compared > 1000, `only ${compared} hits compared: the site matches too little`);
  assert.ok(lowerBounds > 0, 'no phrase was pruned');
});

test('a card\'s bound is never below its closer bound, nor that below its score', async () => {
  let checked = 0;
  let closer = 0;
  for (const q of queries()) {
    const match = await new Evaluation(version, new AbortController().signal).matcher(parseQuery(q));
    for (let i = 0; i < match.count; i++) {
      const score = match.score(i);
      const near = match.closer(i);
      assert.ok(match.bounds[i]! >= near, `${q}: card ${match.cards[i]} bound ${match.bounds[i]} below its closer bound ${near}`);
      assert.ok(near >= score, `${q}: card ${match.cards[i]} closer bound ${near} below its score ${score}`);
      if (score >= 0) checked += 1;
      if (near < match.bounds[i]!) closer += 1;
    }
  }
  assert.ok(checked > 10_000, `only ${checked} cards scored`);
  assert.ok(closer > 1000, `the closer bound was closer for only ${closer} cards`);
});

test('ranking by windows of cards returns the pages and totals of the whole evaluation, evaluating fewer windows', async () => {
  const signal = new AbortController().signal;
  let compared = 0;
  for (const q of queries()) {
    for (const [offset, limit, type] of [[0, 10, []], [10, 10, []], [0, 1, []], [0, 3, ['html']]] as const) {
      const request = { query: parseQuery(q), offset, limit, filters: type.length === 0 ? {} : { type: [...type] } };
      // Walked whole first: a word's skip table comes from its first walk.
      const full = await rankVersion(uncached, request, signal, false);
      const windowed = await rankVersion(uncached, request, signal, true, 3, 0);
      assert.deepEqual(windowed.page, full.page, `${q} offset ${offset} limit ${limit}`);
      if (windowed.total.relation === 'eq') {
        assert.deepEqual(windowed.total, full.total, q);
        assert.deepEqual(windowed.facets, full.facets, q);
      } else {
        // A phrase's, ranked whole and pruned.
        assert.ok(q.includes('"'), `${q}: only a phrase's total may be a lower bound`);
        assert.ok(windowed.total.value <= full.total.value && windowed.total.value >= windowed.page.length, q);
      }
      compared += full.page.length;
    }
  }
  assert.ok(compared > 1000, `only ${compared} hits compared`);
  // The best card of a common word is found without evaluating every window that has it.
  let scored = 0;
  let top = -Infinity;
  const ranker = {
    filtered: () => false,
    count: () => {},
    score: (matches: { count: number; cards: Uint32Array; bounds: ArrayLike<number> }) => {
      scored += 1;
      // A word's bounds are its scores; ranked with the static weight, as rankVersion's top holds them.
      for (let i = 0; i < matches.count; i++) top = Math.max(top, withStatic(matches.bounds[i]!, uncached.columns.weight[matches.cards[i]!]!));
      return 0;
    },
    floor: () => top,
  };
  const query = parseQuery('kernel');
  const evaluation = new Evaluation(uncached, signal);
  assert.ok(await rankByWindows(uncached, query, evaluation, ranker, signal, undefined, 3, 0), 'the windows did not rank a word walked whole');
  assert.ok(scored > 0 && scored < Math.ceil(uncached.cardCount / 8), `${scored} windows of ${Math.ceil(uncached.cardCount / 8)} evaluated`);
});
