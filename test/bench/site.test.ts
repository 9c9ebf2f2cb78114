import assert from 'node:assert/strict';
import test from 'node:test';
import { analyse } from '../../bench/access-log.js';
import { extractPage } from '../../bench/extract.js';
import { listedCommands } from '../../bench/sherlock.js';
import { parseOptions, UsageError } from '../../bench/options.js';
import type { LogLine } from '../../bench/site-server.js';
import { hubPage, isDisallowed, isSitePage, ownerOf, pathFate, rewriteLinks, robotsTxt } from '../../bench/site.js';
import type { HostSpec, SiteLayout } from '../../bench/site.js';

const ROOT = '/docs/pg';
const main: HostSpec = { name: 'pg', address: '127.0.0.2', pkg: 'p', root: ROOT, owns: [], entry: '/index.html', disallow: ['/release-'], behaviour: 'normal' };
const sql: HostSpec = { name: 'pg-sql', address: '127.0.0.3', pkg: 'p', root: ROOT, owns: ['/sql-'], entry: '/sql.html', disallow: [], crawlDelay: 0.5, behaviour: 'normal' };
const sqlSelect: HostSpec = { ...sql, name: 'pg-select', address: '127.0.0.4', owns: ['/sql-select'], disallow: undefined, behaviour: 'flaky' };
const layout: SiteLayout = { port: 8480, hosts: [main, sql, sqlSelect] };

test('each path belongs to the host with the longest matching prefix, else the default host', () => {
  assert.equal(ownerOf(layout, ROOT, '/index.html'), main);
  assert.equal(ownerOf(layout, ROOT, '/sql-insert.html'), sql);
  assert.equal(ownerOf(layout, ROOT, '/sql-select.html'), sqlSelect);
  assert.equal(ownerOf(layout, '/elsewhere', '/index.html'), undefined);
});

test('robots.txt shuts out one agent, disallows prefixes for everyone else, and may set a Crawl-delay', () => {
  const text = robotsTxt(sql)!;
  assert.match(text, /User-agent: ExampleBadBot\nDisallow: \/\n\nUser-agent: \*\n/);
  assert.match(text, /Crawl-delay: 0.5\n$/);
  assert.match(robotsTxt(main)!, /Disallow: \/release-\n/);
  assert.equal(robotsTxt(sqlSelect), undefined);
  assert.equal(isDisallowed(main, '/release-15.html'), true);
  assert.equal(isDisallowed(main, '/index.html'), false);
  assert.equal(isDisallowed(sqlSelect, '/anything'), false);
});

test('links into another host become absolute, links leaving the site go to the hub sink', () => {
  const html = '<a href="sql-insert.html">i</a> <a href=\'index.html#top\'>t</a> <a href="https://www.postgresql.org/x">o</a> <a href="mailto:a@b">m</a> <a href="#frag">f</a>';
  const out = rewriteLinks(layout, main, '/index.html', html);
  assert.ok(out.includes('href="http://127.0.0.3:8480/sql-insert.html"'));
  assert.ok(out.includes("href='index.html#top'") || out.includes("href='/_r/index.html#top'"));
  assert.ok(out.includes('href="http://127.0.0.1:8480/external/www.postgresql.org/x"'));
  assert.ok(out.includes('href="mailto:a@b"'));
  assert.ok(out.includes('href="#frag"'));
  assert.ok(hubPage(layout).includes('http://127.0.0.4:8480/sql.html'));
});

test('per-path behaviour is deterministic and only a flaky host errors', () => {
  const paths = Array.from({ length: 2000 }, (_, i) => `/page-${i}.html`);
  const kinds = (h: HostSpec): string[] => paths.map((p) => pathFate(h, p).kind);
  assert.deepEqual(kinds(main), kinds(main));
  assert.ok(!kinds(main).includes('error') && !kinds(main).includes('reset'));
  const flaky = kinds(sqlSelect);
  const share = (k: string): number => flaky.filter((x) => x === k).length / paths.length;
  assert.ok(share('error') > 0.05 && share('error') < 0.15, `error share ${share('error')}`);
  assert.ok(share('reset') > 0.01 && share('reset') < 0.06);
  assert.ok(share('gone') > 0 && share('gone') < 0.03);
  assert.equal(pathFate(sqlSelect, '/style.css').kind, 'serve');
  assert.equal(pathFate(sqlSelect, sqlSelect.entry).kind, 'serve');
  assert.equal(isSitePage(layout, main, '/release-1.html'), false);
  assert.equal(isSitePage(layout, main, '/sql-insert.html'), false);
});

function line(a: string, p: string, t: number, extra: Partial<LogLine> = {}): LogLine {
  return { t, a, m: 'GET', p, s: 200, b: 100, d: 1, f: 1, ua: 'x', ...extra };
}

test('the access log shows robots violations, Crawl-delay breaches and parallel requests per IP', () => {
  const stats = analyse(layout, [
    line('127.0.0.2', '/robots.txt', 0),
    line('127.0.0.2', '/index.html', 10),
    line('127.0.0.2', '/release-15.html', 20),
    line('127.0.0.2', '/index.html', 30, { f: 3 }),
    line('127.0.0.3', '/sql-a.html', 0),
    line('127.0.0.3', '/robots.txt', 600),
    line('127.0.0.3', '/sql-b.html', 1000),
    line('127.0.0.3', '/sql-c.html', 1100, { s: 404 }),
    line('127.0.0.1', '/external/x', 5, { s: 404 }),
  ]);
  assert.equal(stats.requests, 9);
  assert.equal(stats.robotsViolations, 1);
  assert.equal(stats.crawlDelayBreaches, 2); // 400 ms and 100 ms apart, under 0.5 s
  assert.equal(stats.maxInflightPerIp, 3);
  assert.equal(stats.pages, 4); // distinct 200 pages: index, release-15 (counted, though a violation), sql-a, sql-b
  assert.equal(stats.robotsLate, 1);
  assert.equal(stats.bytes, 900);
});

test('tag stripping keeps visible text and title, drops scripts and styles, resolves links', () => {
  const page = extractPage(
    '<html><head><title>T &amp; U</title><style>x{}</style><script>var a</script></head><body><h1>Head</h1><p>One<b>Two</b></p><p>Three</p><a href="b.html#x">B</a></body></html>',
    'http://127.0.0.2:8480/a/index.html',
  );
  assert.equal(page.title, 'T & U');
  assert.equal(page.text, 'Head OneTwo Three B');
  assert.deepEqual(page.links, ['http://127.0.0.2:8480/a/b.html']);
});

test('the CLI help lists the commands that exist', () => {
  const help = 'Usage: sherlock [options] [command]\n\nOptions:\n  -h, --help  help\n\nCommands:\n  config             check\n  crawl [options]    crawl\n  help [command]     display help\n';
  assert.deepEqual([...listedCommands(help)], ['config', 'crawl', 'help']);
  assert.equal(listedCommands('no commands here').size, 0);
});

test('bench flags pick the set, runs and parts', () => {
  const quick = parseOptions(['--quick']);
  assert.notEqual(quick, 'help');
  if (quick === 'help') return;
  assert.equal(quick.set, 'small');
  assert.equal(quick.runs, 3);
  const large = parseOptions(['--large', '--only', 'index,search', '--sherlock-set', 'gatherer.min_delay=0s']);
  if (large === 'help') throw new Error('help');
  assert.equal(large.set, 'large');
  assert.equal(large.runs, 1);
  assert.deepEqual(large.only, ['index', 'search']);
  assert.deepEqual(large.sherlockSet, ['gatherer.min_delay=0s']);
  assert.equal(parseOptions([]) !== 'help' && (parseOptions([]) as { set: string }).set, 'medium');
  assert.equal(parseOptions(['--help']), 'help');
  assert.throws(() => parseOptions(['--only', 'bogus']), UsageError);
  assert.throws(() => parseOptions(['--runs', '0']), UsageError);
  assert.throws(() => parseOptions(['--whatever']), UsageError);
  // --scale alone runs the scale part only, at the sizes given; --only scale alone at 10k.
  const scale = parseOptions(['--scale', '10k,100k,1M,2500']);
  if (scale === 'help') throw new Error('help');
  assert.deepEqual([scale.only, scale.scale], [['scale'], [10_000, 100_000, 1_000_000, 2500]]);
  assert.deepEqual((parseOptions(['--only', 'scale']) as { scale: readonly number[] }).scale, [10_000]);
  assert.deepEqual((parseOptions([]) as { scale: readonly number[] }).scale, []);
  for (const bad of ['', '10x', '50', '1G']) assert.throws(() => parseOptions(['--scale', bad]), UsageError, bad);
});
