/**
 * Refetching, end to end: a site is crawled, five of its twenty pages change,
 * `sherlock shepherd refetch --all` makes every fetched page due now, and a
 * second `sherlock crawl` asks conditionally (If-None-Match, and
 * If-Modified-Since where the page gave no ETag): the server answers 304 for
 * the fifteen unchanged pages and the new content for the changed ones; the
 * database records not_modified and the new checksums, and the refetch
 * intervals move apart (longer for unchanged pages, shorter for changed).
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { readUrls } from '../../shepherd/status.js';
import { runCli } from '../helpers/cli.js';
import { startFixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

const PAGES = 20;
const CHANGED = new Set([3, 7, 11, 15, 19]);

test('a second crawl after a change: 304 for unchanged pages, new content for changed ones', async (t) => {
  const state = scratchDir(t);
  let version = 1;
  const modified = new Map<number, number>();
  const routes: Record<string, RouteHandler> = {};
  for (let i = 0; i < PAGES; i++) {
    modified.set(i, Date.UTC(2026, 0, 1) / 1000);
    routes[`/p${i}`] = (req: IncomingMessage, res: ServerResponse) => {
      const edition = CHANGED.has(i) ? version : 1;
      const links = i === 0 ? [...Array(PAGES).keys()].map((j) => `<a href="/p${j}">${j}</a>`).join(' ') : '';
      const body = `<title>page ${i}</title><p>edition ${edition}</p>${links}`;
      // Odd pages validate by ETag, even ones by Last-Modified only.
      const etag = i % 2 === 1 ? `"${createHash('md5').update(body).digest('hex')}"` : undefined;
      const lastModified = new Date(modified.get(i)! * 1000).toUTCString();
      const headers: Record<string, string> = { 'Content-Type': 'text/html', 'Last-Modified': lastModified, ...(etag === undefined ? {} : { ETag: etag }) };
      const fresh = etag !== undefined ? req.headers['if-none-match'] === etag : req.headers['if-modified-since'] === lastModified;
      if (fresh) res.writeHead(304, headers).end();
      else res.writeHead(200, headers).end(body);
    };
  }
  const site = await startFixture({ address: '127.0.0.95', routes });
  t.after(() => site.close());
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/p0\n`);
  const crawl = async () => {
    const run = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--json', '--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s']);
    assert.equal(run.status, 0, run.stderr);
    return JSON.parse(run.stdout) as { fetched: number; outcomes: Record<string, number> };
  };
  const first = await crawl();
  assert.equal(first.outcomes['ok'], PAGES);
  const before = new Map([...readUrls(state)].map((r) => [r.url, r]));

  // Fetch times are whole seconds, and the database ignores a result no newer
  // than the one it has (so a merge applied twice changes nothing).
  await new Promise((r) => setTimeout(r, 1100));
  version = 2;
  for (const i of CHANGED) modified.set(i, Date.UTC(2026, 5, 1) / 1000);
  const refetch = await runCli(['shepherd', 'refetch', '--state', state, '--all']);
  assert.equal(refetch.status, 0, refetch.stderr);
  assert.match(refetch.stdout, new RegExp(`^${PAGES} URLs due now`));
  const requestsBefore = site.requests.length;

  const second = await crawl();
  assert.equal(second.fetched, PAGES);
  assert.equal(second.outcomes['not_modified'], PAGES - CHANGED.size);
  assert.equal(second.outcomes['ok'], CHANGED.size);
  const asked = site.requests.slice(requestsBefore).filter((r) => r.path.startsWith('/p'));
  for (const r of asked) {
    const i = Number(r.path.slice(2));
    const validator = i % 2 === 1 ? site.header(r, 'if-none-match') : site.header(r, 'if-modified-since');
    assert.ok(validator !== undefined, `${r.path} was not asked conditionally`);
  }
  for (const row of readUrls(state)) {
    const i = Number(new URL(row.url).pathname.slice(2));
    const old = before.get(row.url)!;
    const interval = (r: { lastFetch: number | null; nextFetch: number | null }) => r.nextFetch! - r.lastFetch!;
    if (CHANGED.has(i)) {
      assert.equal(row.state, 'ok', row.url);
      assert.notEqual(row.checksum, old.checksum, `${row.url}: new content recorded`);
      assert.ok(interval(row) < interval(old), `${row.url}: changed, the interval shrinks`);
    } else {
      assert.equal(row.state, 'not_modified', row.url);
      assert.equal(row.checksum, old.checksum);
      assert.ok(interval(row) > interval(old), `${row.url}: unchanged, the interval grows`);
    }
  }
});
