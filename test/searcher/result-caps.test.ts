/**
 * A site rule's result_cap in a running searcher (searcher/result-caps.ts),
 * over a real WebSocket to `sherlock searcher run` with two search threads,
 * on an index built from real crawls of two loopback sites with the same
 * pages: the capped site shows at most its cap over every page of the
 * results (the total agreeing), a site: query for it is not capped, SIGHUP
 * with the rule changed applies the new cap to every thread and the result
 * cache does not give the old answer, and a bad rule file on SIGHUP keeps
 * the running cap; `sherlock search` applies the rules too.
 */

import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { runCli, startCli, until } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';
import { buildCli, crawlSite } from '../indexer/site.js';
import { Client, listening, resultPage } from './net.js';

const CAPPED = '127.0.0.251';
const OTHER = '127.0.0.252';
/** Pages of each site with the word "lighthouse", each with words of its own (no two alike: the merge would keep one). */
const NOTES = 12;

function notes(site: string): Record<string, string> {
  const pages: Record<string, string> = {};
  for (let i = 0; i < NOTES; i++) {
    const own = Array.from({ length: 60 }, (_, k) => `${site}n${i}w${k}`).join(' ');
    pages[`/note${i}`] = `<html><head><title>Note ${i}</title></head><body><p>The lighthouse log.</p><p>${own}</p></body></html>`;
  }
  return pages;
}
const PAGE = 4;

test('searcher run: result_cap limits a site over every page of the results; SIGHUP applies a new cap at once and a bad rule file keeps the running one', async (t) => {
  const dir = scratchDir(t);
  const state = join(dir, 'state');
  mkdirSync(state);
  const capped = await crawlSite(state, { address: CAPPED, extra: notes('a') });
  const other = await crawlSite(state, { address: OTHER, extra: notes('b') });
  await buildCli(state);
  const config = join(dir, 'sherlock.toml');
  writeFileSync(config, '[log]\nlevel = "info"\n');
  const sites = join(dir, 'sites.d');
  mkdirSync(sites);
  const rule = (cap: number): void => writeFileSync(join(sites, 'caps.toml'), `# the capped site\n[[site]]\nhost = "${CAPPED}"\nresult_cap = ${cap}\n`);
  rule(2);
  const running = startCli(t, ['--config', config, 'searcher', 'run', '--state', state, '--listen', `${CAPPED}:0`, '--set', 'searcher.search_threads=2']);
  const client = await Client.open(t, `ws://${await listening(running)}/`);
  await client.next();

  let n = 0;
  /** Every page of `q`, PAGE results a page, until one comes back short; each page's total must be the first's. */
  const allPages = async (q: string, extra: Record<string, unknown> = {}): Promise<{ total: number; urls: string[] }> => {
    const urls: string[] = [];
    let total = -1;
    for (let offset = 0; ; offset += PAGE) {
      const p = resultPage(await client.search(`q${n++}`, q, { offset, limit: PAGE, ...extra }));
      if (total >= 0) assert.equal(p.total, total, `page at ${offset}`);
      total = p.total;
      urls.push(...p.urls);
      if (p.urls.length < PAGE) break;
    }
    return { total, urls };
  };
  const of = (urls: string[], origin: string): number => urls.filter((url) => url.startsWith(`${origin}/`)).length;
  // The operator asked for the site: no cap.
  const named = await allPages(`lighthouse site:${CAPPED}`);
  const perSite = named.total;
  assert.equal(perSite, NOTES, JSON.stringify(named));
  assert.equal(of(named.urls, capped), perSite);
  assert.equal(of((await allPages('lighthouse', { filters: { site: [CAPPED] } })).urls, capped), perSite);
  const others = (await allPages(`lighthouse site:${OTHER}`)).total;
  assert.equal(others, NOTES);

  const two = await allPages('lighthouse');
  assert.equal(of(two.urls, capped), 2, JSON.stringify(two.urls));
  assert.equal(of(two.urls, other), others, JSON.stringify(two.urls));
  assert.equal(new Set(two.urls).size, two.urls.length, 'no result twice');
  assert.equal(two.total, others + 2, 'the total counts what the pages show');
  // Asked again, the pages are in the result cache (searcher.result_cache is on by default): the same answers.
  assert.deepEqual(await allPages('lighthouse'), two);

  rule(5);
  running.child.kill('SIGHUP');
  await until('the new rules', () => running.stderr.includes('site rules applied'));
  // The same searches as before: an answer of the old rules from the cache would show 2.
  const five = await allPages('lighthouse');
  assert.equal(of(five.urls, capped), 5, JSON.stringify(five.urls));
  assert.equal(of(five.urls, other), others);
  assert.equal(five.total, others + 5);

  writeFileSync(join(sites, 'zz-bad.toml'), '[[site]]\nhost = "127.0.0.252"\nresult_cap = -1\n');
  running.child.kill('SIGHUP');
  await until('the refused reload', () => running.stderr.includes('config not reloaded'));
  assert.match(running.stderr, /zz-bad\.toml:3: result_cap: /);
  const kept = await allPages('lighthouse');
  assert.equal(of(kept.urls, capped), 5, 'the running cap is kept');
  assert.equal(of(kept.urls, other), others);

  rmSync(join(sites, 'caps.toml'));
  rmSync(join(sites, 'zz-bad.toml'));
  running.child.kill('SIGHUP');
  await until('the rules removed', () => running.stderr.split('site rules applied').length === 3);
  const none = await allPages('lighthouse');
  assert.equal(of(none.urls, capped), perSite, 'without the rule the site shows every result');
  assert.equal(none.total, perSite + others);

  running.child.kill('SIGTERM');
  assert.equal(await running.exited, 0, running.stderr);

  // sherlock search reads the rules as the searcher does.
  rule(3);
  const cli = await runCli(['--config', config, 'search', '--state', state, '--json', '--limit', '100', 'lighthouse']);
  assert.equal(cli.status, 0, cli.stderr);
  const printed = JSON.parse(cli.stdout) as { total: { value: number }; hits: Array<{ url: string }> };
  assert.equal(of(printed.hits.map((h) => h.url), capped), 3);
  assert.equal(printed.total.value, others + 3);
});
