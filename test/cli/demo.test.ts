/**
 * `sherlock demo` end to end, as a person runs it: it serves the sample
 * sites, crawls and indexes them, and searches them over the WebSocket API
 * and GET /search; the answers are the sample's real pages in a sensible
 * order. SIGTERM stops it with status 0 and removes its temporary state.
 */

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import test from 'node:test';
import { runCli, startCli, until } from '../helpers/cli.js';
import { startDemo } from '../helpers/demo.js';
import { scratchDir } from '../helpers/paths.js';
import { Client, type Message } from '../searcher/net.js';

interface Hit {
  url: string;
  title: string;
  snippet: string;
}

function hits(answer: Message): Hit[] {
  assert.equal(answer.type, 'result', JSON.stringify(answer));
  return answer['hits'] as Hit[];
}

test('sherlock demo crawls the sample sites and answers phrases, site:, exclusion and accent-free queries; SIGTERM ends it with 0', async (t) => {
  const demo = await startDemo(t);
  assert.deepEqual([...demo.sites.keys()], ['Lindenau Wiki', 'The Copper Pot', 'Quill documentation', 'Lindenau Gazette']);
  assert.match(demo.running.stdout, /^crawled \d+ pages .*robots_denied 1/m);
  assert.ok(existsSync(demo.state), demo.state);
  const wiki = demo.sites.get('Lindenau Wiki')!;
  const recipes = demo.sites.get('The Copper Pot')!;
  const docs = demo.sites.get('Quill documentation')!;

  const client = await Client.open(t, `${demo.http.replace('http:', 'ws:')}/`);
  const phrase = hits(await client.search('phrase', '"museum of clocks"'));
  assert.equal(phrase[0]?.url, `${wiki}/wiki/Museum_of_Clocks`);
  assert.match(phrase[0]!.snippet, /<mark>Museum<\/mark> <mark>of<\/mark> <mark>Clocks<\/mark>/i);

  const site = hits(await client.search('site', `site:${new URL(docs).hostname} cache`));
  assert.ok(site.length >= 3, JSON.stringify(site));
  assert.ok(site.every((h) => h.url.startsWith(`${docs}/`)), site.map((h) => h.url).join(' '));
  assert.ok(site.some((h) => h.url === `${docs}/api/clearCache`));

  const dumplings = hits(await client.search('all', 'dumplings', { limit: 50 })).map((h) => h.url);
  const notPlum = hits(await client.search('not', 'dumplings -plum', { limit: 50 })).map((h) => h.url);
  assert.ok(dumplings.includes(`${recipes}/recipes/svestkove-knedliky`));
  assert.ok(notPlum.length > 0 && notPlum.length < dumplings.length, `${notPlum.length} of ${dumplings.length}`);
  assert.ok(!notPlum.includes(`${recipes}/recipes/svestkove-knedliky`));
  assert.ok(notPlum.every((url) => dumplings.includes(url)));

  // Typed without accents, found with them, the accented words marked.
  const svickova = hits(await client.search('accent', 'svickova'));
  assert.equal(svickova[0]?.url, `${recipes}/recipes/svickova-na-smetane`);
  assert.equal(svickova[0]?.title, 'Svíčková na smetaně – The Copper Pot');
  assert.match(svickova[0]!.snippet, /<mark>Svíčková<\/mark>/);

  // robots.txt keeps /private/ out: its one word is nowhere.
  assert.deepEqual((await client.search('robots', 'embezzlement'))['total'], { value: 0, relation: 'eq' });

  const page = await fetch(`${demo.http}/search?q=${encodeURIComponent('creme brulee')}`);
  assert.equal(page.status, 200);
  const html = await page.text();
  const first = /<li class="hit"><h2 class="hit-title"><a href="([^"]+)">([^<]+)<\/a>/.exec(html);
  assert.deepEqual(first?.slice(1), [`${recipes}/recipes/creme-brulee`, 'Crème brûlée – The Copper Pot']);
  assert.match(html, /<mark>Crème<\/mark> <mark>brûlée<\/mark>/);

  // The result links work: the sample sites keep serving beside the searcher.
  assert.equal((await fetch(first![1]!)).status, 200);

  demo.running.child.kill('SIGTERM');
  assert.equal(await demo.running.exited, 0, demo.running.stderr);
  assert.equal(existsSync(demo.state), false, 'the temporary state is removed');
  await assert.rejects(fetch(`${wiki}/`), 'the sample sites are closed');
});

test('sherlock demo refuses a --state directory that is not empty (2)', async (t) => {
  const state = join(scratchDir(t), 'used');
  mkdirSync(state);
  writeFileSync(join(state, 'something'), 'x');
  const run = await runCli(['demo', '--listen', '127.0.0.1:0', '--state', state]);
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /--state: .* is not empty/);
});

test('sherlock demo on a port in use fails at once (2), naming the way out', async (t) => {
  const taken = createServer().listen(0, '127.0.0.1');
  await once(taken, 'listening');
  t.after(() => taken.close());
  const port = (taken.address() as { port: number }).port;
  const run = await runCli(['demo', '--listen', `127.0.0.1:${port}`]);
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, new RegExp(`--listen: 127.0.0.1:${port} is in use; .*--listen 127.0.0.1:0`));
  assert.doesNotMatch(run.stdout, /^crawled/m, 'nothing was crawled');
});

test('SIGTERM while the demo is still crawling stops it with 0 and removes its state', async (t) => {
  const running = startCli(t, ['demo', '--listen', '127.0.0.1:0']);
  await until('the demo to name its state', () => /^state \S+/m.test(running.stdout), 60_000);
  const state = /^state (\S+)/m.exec(running.stdout)![1]!;
  running.child.kill('SIGTERM');
  assert.equal(await running.exited, 0, running.stderr);
  assert.equal(existsSync(state), false);
});
