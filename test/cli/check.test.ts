/**
 * `sherlock check robots|fetch URL` against real servers on 127.0.0.x, through
 * the built CLI. The CLI is spawned asynchronously: the fixture servers live
 * in this process and must keep answering while it runs.
 */

import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import test from 'node:test';
import type { TestContext } from 'node:test';
import { startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { runCli } from '../helpers/cli.js';

const PRIVATE_OK = ['--set', 'gatherer.allow_private_addresses=true'];

async function json(args: string[]): Promise<Record<string, unknown>> {
  const run = await runCli([...PRIVATE_OK, ...args, '--json']);
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

async function fixture(t: TestContext, address: string, routes: Record<string, RouteHandler>): Promise<Fixture> {
  const server = await startFixture({ address, routes });
  t.after(() => server.close());
  return server;
}

function text(body: string, status = 200, type = 'text/plain'): RouteHandler {
  return (_req: IncomingMessage, res: ServerResponse) => res.writeHead(status, { 'Content-Type': type }).end(body);
}

const ROBOTS = 'User-agent: *\nDisallow: /private\nCrawl-delay: 7\nSitemap: /sitemap.xml\n';

test('check robots: allowed and disallowed verdicts, Crawl-delay, effective delay and sitemaps', async (t) => {
  const site = await fixture(t, '127.0.0.40', { '/robots.txt': text(ROBOTS) });
  const allowed = await json(['--set', 'gatherer.min_delay=2s', 'check', 'robots', `${site.origin}/public/page`]);
  assert.equal(allowed['verdict'], 'allowed');
  assert.equal(allowed['url'], `${site.origin}/public/page`);
  assert.equal(allowed['address'], '127.0.0.40');
  assert.equal(allowed['robotsUrl'], `${site.origin}/robots.txt`);
  assert.equal(allowed['status'], 200);
  assert.equal(allowed['outcome'], 'ok');
  assert.equal(allowed['policy'], 'rules');
  assert.equal(allowed['crawlDelayMs'], 7000);
  assert.equal(allowed['delayMs'], 7000, 'max(min_delay 2s, min(7s, max_crawl_delay 60s))');
  assert.deepEqual(allowed['sitemaps'], [`${site.origin}/sitemap.xml`]);
  assert.equal(Date.parse(allowed['expiresAt'] as string) - Date.parse(allowed['fetchedAt'] as string), 24 * 3600 * 1000);

  const capped = await json(['--set', 'gatherer.max_crawl_delay=3s', '--set', 'gatherer.min_delay=1s', 'check', 'robots', `${site.origin}/private/x`]);
  assert.equal(capped['verdict'], 'disallowed');
  assert.equal(capped['delayMs'], 3000, 'Crawl-delay capped at max_crawl_delay');

  const people = await runCli([...PRIVATE_OK, 'check', 'robots', `${site.origin}/private/x`]);
  assert.equal(people.status, 0, people.stderr);
  assert.match(people.stdout, /^verdict +disallowed$/m);
  assert.match(people.stdout, /^crawl-delay +7s$/m);
  assert.match(people.stdout, new RegExp(`^robots\\.txt +${site.origin}/robots\\.txt \\(127\\.0\\.0\\.40\\): ok 0, HTTP 200`, 'm'));
});

test('check robots: robots.txt redirects are followed, across hosts', async (t) => {
  const other = await fixture(t, '127.0.0.42', { '/rules.txt': text('User-agent: sherlock\nDisallow: /\n') });
  const site = await fixture(t, '127.0.0.41', {
    '/robots.txt': (_req, res) => res.writeHead(301, { Location: `${other.origin}/rules.txt` }).end(),
  });
  const report = await json(['check', 'robots', `${site.origin}/anything`]);
  assert.equal(report['verdict'], 'disallowed');
  const fetches = report['fetches'] as { url: string; status: number; location: string | null; address: string }[];
  assert.deepEqual(
    fetches.map((f) => [f.url, f.status, f.location, f.address]),
    [
      [`${site.origin}/robots.txt`, 301, `${other.origin}/rules.txt`, '127.0.0.41'],
      [`${other.origin}/rules.txt`, 200, null, '127.0.0.42'],
    ],
  );
});

test('check robots: a 503 robots.txt means disallow-all, until error_backoff', async (t) => {
  const site = await fixture(t, '127.0.0.43', { '/robots.txt': text('busy', 503) });
  const report = await json(['--set', 'gatherer.error_backoff=10m', 'check', 'robots', `${site.origin}/page`]);
  assert.equal(report['status'], 503);
  assert.equal(report['outcome'], 'http_5xx');
  assert.equal(report['policy'], 'disallow-all');
  assert.equal(report['verdict'], 'disallowed');
  assert.equal(Date.parse(report['expiresAt'] as string) - Date.parse(report['fetchedAt'] as string), 10 * 60 * 1000);
});

test('check robots with the default config refuses 127.0.0.x: exit 1, no request made', async (t) => {
  const site = await fixture(t, '127.0.0.44', { '/robots.txt': text(ROBOTS) });
  for (const command of ['robots', 'fetch']) {
    const run = await runCli(['check', command, `${site.origin}/page`]);
    assert.equal(run.status, 1, command);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /refused: address 127\.0\.0\.44 is private or reserved \(gatherer\.allow_private_addresses is false\)/);
  }
  assert.equal(site.requests.length, 0);
});

test('check fetch of an HTML page: status, charset, title, links and text', async (t) => {
  const page =
    '<!doctype html><html lang="en"><head><meta charset="iso-8859-2"><title>The  Title</title>' +
    '<link rel="canonical" href="/canon"><meta name="robots" content="nofollow"></head>' +
    '<body><h1>Hello</h1><p>See <a href="/a">a</a>, <a href="/b">b</a> and <a href="https://example.com/c">c</a>.</p>' +
    '<img src="/i.png" alt="pic"></body></html>';
  const site = await fixture(t, '127.0.0.45', { '/robots.txt': text(''), '/page.html': text(page, 200, 'text/html') });
  const url = `${site.origin}/page.html`;
  const report = await json(['check', 'fetch', url, '--show-text']);
  const fetch = report['fetch'] as Record<string, unknown>;
  assert.equal(fetch['outcome'], 'ok');
  assert.equal(fetch['status'], 200);
  assert.equal(fetch['bodyBytes'], Buffer.byteLength(page));
  assert.equal(fetch['truncated'], false);
  assert.equal(fetch['contentType'], 'text/html');
  const doc = report['document'] as Record<string, unknown>;
  assert.equal(doc['kind'], 'html');
  assert.equal(doc['charset'], 'iso-8859-2');
  assert.equal(doc['title'], 'The Title');
  assert.deepEqual([doc['language'], doc['detectedLanguage']], ['en', 'en']);
  assert.deepEqual(doc['links'], { R: 3, F: 0, I: 1, Y: 0 });
  assert.deepEqual(doc['firstLinks'], [`${site.origin}/a`, `${site.origin}/b`, 'https://example.com/c']);
  assert.deepEqual(doc['robots'], { noindex: false, nofollow: true, noarchive: false });
  assert.equal(doc['canonical'], `${site.origin}/canon`);
  assert.match(doc['text'] as string, /Hello\nSee a, b and c\./);

  const people = await runCli([...PRIVATE_OK, 'check', 'fetch', url]);
  assert.equal(people.status, 0, people.stderr);
  assert.match(people.stdout, /^fetch +ok 0, HTTP 200 OK$/m);
  assert.match(people.stdout, /^title +The Title$/m);
  assert.match(people.stdout, /^charset +iso-8859-2$/m);
  assert.match(people.stdout, /^detected +en \(told from the text\)$/m);
  assert.match(people.stdout, /^links +R 3, F 0, I 1, Y 0$/m);
  assert.match(people.stdout, new RegExp(`^link +${site.origin}/a$`, 'm'));
  assert.match(people.stdout, /^robots meta +nofollow$/m);
  assert.doesNotMatch(people.stdout, /Hello/, 'text only with --show-text');
});

test('check fetch of a disallowed URL reports it and does not request it', async (t) => {
  const site = await fixture(t, '127.0.0.46', { '/robots.txt': text(ROBOTS), '/private/x': text('secret') });
  const report = await json(['check', 'fetch', `${site.origin}/private/x`]);
  assert.equal((report['robots'] as Record<string, unknown>)['verdict'], 'disallowed');
  assert.equal(report['fetch'], null);
  assert.equal(report['document'], null);
  const people = await runCli([...PRIVATE_OK, 'check', 'fetch', `${site.origin}/private/x`]);
  assert.equal(people.status, 0, people.stderr);
  assert.match(people.stdout, /^fetch +not made: disallowed by robots\.txt/m);
  assert.deepEqual(
    site.requests.map((r) => r.path),
    ['/robots.txt', '/robots.txt'],
  );
});

test('check fetch of a redirect prints its location and does not follow it', async (t) => {
  const site = await fixture(t, '127.0.0.47', {
    '/old': (_req, res) => res.writeHead(301, { Location: '/new' }).end(),
    '/new': text('new'),
  });
  const report = await json(['check', 'fetch', `${site.origin}/old`]);
  const fetch = report['fetch'] as Record<string, unknown>;
  assert.equal(fetch['outcome'], 'redirect');
  assert.equal(fetch['status'], 301);
  assert.equal(fetch['location'], `${site.origin}/new`);
  assert.equal(report['document'], null);
  const robots = report['robots'] as Record<string, unknown>;
  assert.equal(robots['policy'], 'allow-all', 'a 404 robots.txt allows everything');
  const people = await runCli([...PRIVATE_OK, 'check', 'fetch', `${site.origin}/old`]);
  assert.match(people.stdout, new RegExp(`^location +${site.origin}/new \\(not followed\\)$`, 'm'));
  assert.ok(!site.requests.some((r) => r.path === '/new'), 'the redirect was followed');
});

test('check with a bad URL exits 2 naming the problem', async () => {
  for (const url of ['not a url', 'ftp://example.com/']) {
    const run = await runCli(['check', 'robots', url]);
    assert.equal(run.status, 2, url);
    assert.equal(run.stdout, '');
  }
  const run = await runCli(['check', 'fetch', 'ftp://example.com/']);
  assert.equal(run.status, 2);
  assert.equal(run.stderr, 'sherlock: ftp://example.com/: not an http or https URL (scheme ftp:)\n');
});
