/**
 * Takedowns in a running searcher (searcher/takedowns.ts), over a real
 * WebSocket to `sherlock searcher run` with search threads, on an index
 * built from a real crawl: `takedown add` hides a URL within a second with
 * totals and facets agreeing, `remove` brings it back, a site takedown
 * hides the site, kill -9 and a restart keep it hidden, and the next index
 * version does not hold it at all; an IndexEngine on its own follows the
 * file and a prefix hides the pages under it.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import { appendTakedown, takedownFilePath } from '../../common/takedowns.js';
import { IndexEngine } from '../../searcher/index-engine.js';
import { parseQuery } from '../../searcher/query.js';
import { runCli, startCli, until, type Running } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';
import { Client, type Message } from './net.js';
import { buildCli, crawlSite } from '../indexer/site.js';

const ADDRESS = '127.0.0.211';

interface Answer {
  total: number;
  urls: string[];
  sites: Array<{ value: string; count: number }>;
  types: Array<{ value: string; count: number }>;
}

function answer(m: Message): Answer {
  assert.equal(m.type, 'result', JSON.stringify(m));
  const facets = m['facets'] as { site: Answer['sites']; type: Answer['types'] };
  return { total: (m['total'] as { value: number }).value, urls: (m['hits'] as Array<{ url: string }>).map((h) => h.url), sites: facets.site, types: facets.type };
}

/** Starts the searcher with two search threads and connects to it. */
async function startSearcher(t: test.TestContext, state: string): Promise<{ running: Running; client: Client }> {
  const running = startCli(t, ['searcher', 'run', '--state', state, '--listen', `${ADDRESS}:0`, '--set', 'searcher.search_threads=2']);
  await until('the searcher to listen', () => /listening address=/.test(running.stderr));
  const client = await Client.open(t, `ws://${/listening address=(\S+)/.exec(running.stderr)![1]!}/`);
  await client.next();
  return { running, client };
}

/** The totals and facet counts say the same: every card counted is on the one site, of a type counted. */
function assertAgree(a: Answer): void {
  assert.equal(a.sites.reduce((n, s) => n + s.count, 0), a.total, JSON.stringify(a));
  assert.equal(a.types.reduce((n, s) => n + s.count, 0), a.total, JSON.stringify(a));
}

test('a takedown hides a URL from a running searcher within a second, survives kill -9, and the next version leaves it out', async (t) => {
  const state = scratchDir(t);
  const origin = await crawlSite(state, { address: ADDRESS });
  await buildCli(state);
  const target = `${origin}/popular`;
  const image = `${origin}/pipe.png`;
  let n = 0;
  const search = async (client: Client, q = 'gazette'): Promise<Answer> => answer(await client.search(`q${n++}`, q));
  /** Searches until `ok`, returning the milliseconds it took from `since` and the answer. */
  const waitFor = async (client: Client, since: number, ok: (a: Answer) => boolean): Promise<{ ms: number; a: Answer }> => {
    for (;;) {
      const a = await search(client);
      if (ok(a)) return { ms: performance.now() - since, a };
      if (performance.now() - since > 5000) assert.fail(`not seen in 5 s: ${JSON.stringify(a)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  const first = await startSearcher(t, state);
  const before = await search(first.client);
  assert.ok(before.urls.includes(target), JSON.stringify(before));
  assertAgree(before);
  assert.ok((await search(first.client, 'curved pipe')).urls.includes(image));

  const add = await runCli(['takedown', 'add', target, '--reason', 'complaint 1', '--state', state]);
  assert.equal(add.status, 0, add.stderr);
  const hidden = await waitFor(first.client, performance.now(), (a) => !a.urls.includes(target));
  assert.ok(hidden.ms < 1000, `hidden after ${hidden.ms} ms`);
  assert.equal(hidden.a.total, before.total - 1);
  assertAgree(hidden.a);
  // Pages past the first do not bring it back, and a word only it has finds nothing.
  assert.equal((await search(first.client, 'everybody')).total, 0);
  await until('the searcher to log the takedowns applied', () => /takedowns applied in_force=1/.test(first.running.stderr));

  const remove = await runCli(['takedown', 'remove', target, '--state', state]);
  assert.equal(remove.status, 0, remove.stderr);
  const back = await waitFor(first.client, performance.now(), (a) => a.urls.includes(target));
  assert.ok(back.ms < 1000, `back after ${back.ms} ms`);
  assert.equal(back.a.total, before.total);

  // A site: everything on it goes, totals and facets with it.
  assert.equal((await runCli(['takedown', 'add', ADDRESS, '--site', '--reason', 'whole site', '--state', state])).status, 0);
  const none = await waitFor(first.client, performance.now(), (a) => a.total === 0);
  assert.ok(none.ms < 1000, `site hidden after ${none.ms} ms`);
  assert.deepEqual([none.a.urls, none.a.sites, none.a.types], [[], [], []]);
  assert.equal((await runCli(['takedown', 'remove', ADDRESS, '--site', '--state', state])).status, 0);
  assert.equal((await runCli(['takedown', 'add', target, '--reason', 'complaint 2', '--state', state])).status, 0);
  await waitFor(first.client, performance.now(), (a) => a.total === before.total - 1);

  // kill -9 and a restart: still hidden from the first search on.
  first.running.child.kill('SIGKILL');
  await first.running.exited;
  const second = await startSearcher(t, state);
  const restarted = await search(second.client);
  assert.deepEqual([restarted.urls.includes(target), restarted.total], [false, before.total - 1]);
  assertAgree(restarted);
  second.running.child.kill('SIGKILL');
  await second.running.exited;
  // `sherlock search` from the shell hides it as the searcher does.
  const shell = await runCli(['search', '--state', state, '--json', 'gazette']);
  assert.equal(shell.status, 0, shell.stderr);
  assert.deepEqual(answer({ type: 'result', ...(JSON.parse(shell.stdout) as object) }), restarted);

  // The next version leaves it out (and an image card taken down): with the takedowns lifted, a fresh searcher still does not find them.
  assert.equal((await runCli(['takedown', 'add', image, '--reason', 'complaint 3', '--state', state])).status, 0);
  const { run } = await buildCli(state);
  assert.equal((JSON.parse(run.stdout) as { takenDown: number }).takenDown, 2);
  assert.equal((await runCli(['takedown', 'remove', target, '--state', state])).status, 0);
  assert.equal((await runCli(['takedown', 'remove', image, '--state', state])).status, 0);
  const third = await startSearcher(t, state);
  const rebuilt = await search(third.client);
  assert.deepEqual([rebuilt.urls.includes(target), rebuilt.total], [false, before.total - 1]);
  assert.equal((await search(third.client, 'everybody')).total, 0);
  assert.ok(!(await search(third.client, 'curved pipe')).urls.includes(image));
});

test('an IndexEngine on its own follows the file: a prefix hides every URL under it, onTakedowns is called, a lift brings them back', async (t) => {
  const state = scratchDir(t);
  const origin = await crawlSite(state, { address: '127.0.0.214' });
  await buildCli(state);
  let changes = 0;
  const engine = await IndexEngine.start({ state, pollMs: 0, onTakedowns: () => (changes += 1) });
  t.after(() => engine.close());
  const search = async (q: string, limit = 10) => {
    const result = await engine.search({ query: parseQuery(q), offset: 0, limit, filters: {} }, new AbortController().signal);
    return { total: result.total.value, urls: result.hits.map((h) => h.url), site: result.facets.site };
  };
  const before = await search('orchard');
  assert.deepEqual(before.urls.sort(), [`${origin}/menu-a`, `${origin}/menu-b`], JSON.stringify(before));
  const others = await search('gazette');

  const since = performance.now();
  await appendTakedown(takedownFilePath(state), { op: 'add', kind: 'prefix', target: `${origin}/menu-`, reason: 'test', time: new Date().toISOString() });
  await until('the prefix to hide its pages', () => changes === 1, 1000);
  assert.ok(performance.now() - since < 1000);
  assert.equal(engine.status()['takedowns'], 1);
  const hidden = await search('orchard', 1);
  assert.deepEqual([hidden.total, hidden.site], [0, []]);
  assert.deepEqual((await search('orchard')).urls, []);
  assert.deepEqual(await search('gazette'), others);

  await appendTakedown(takedownFilePath(state), { op: 'remove', kind: 'prefix', target: `${origin}/menu-`, time: new Date().toISOString() });
  await until('the lift', () => changes === 2, 1000);
  assert.equal((await search('orchard')).total, before.total);
});
