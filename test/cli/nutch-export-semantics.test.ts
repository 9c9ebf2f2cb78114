/**
 * `sherlock export nutch` writes what Nutch 1.x itself writes for the same
 * fetches (docs/nutch.md, "What Nutch would have written"): one crawl of a
 * loopback site with a page, a permanent and a temporary redirect, a 404, a
 * 410, a page robots.txt forbids, links within the host, to another port of
 * the same host (a second server) and to another host; exported, read back through our Hadoop
 * readers, and compared with what Nutch's fetcher, parser, LinkDb and
 * scoring write (the real segments in ../shared/testdata/nutch show the same
 * records).
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ServerResponse } from 'node:http';
import Database from 'better-sqlite3';
import { mapGet } from '../../common/hadoop/writables.js';
import { rankOfStaticWeight } from '../../common/index/cardinfo.js';
import { FEEDBACK_NAME, readFeedback } from '../../common/index/feedback.js';
import { currentVersion, indexDirectory } from '../../common/index/layout.js';
import { canonicalUrl, footprint } from '../../common/url.js';
import { javaFloat } from '../../common/hadoop/io.js';
import { CRAWL_STATUS, PROTOCOL_STATUS, type Content, type CrawlDatum, type Link, type ParseData, type ParseText, type ProtocolStatus } from '../../common/hadoop/nutch-writables.js';
import { runCli } from '../helpers/cli.js';
import { startFixture, type Fixture } from '../helpers/http-fixtures.js';
import { records } from '../helpers/nutch-data.js';

const html = (body: string) => (_req: unknown, res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(body);

/** A host outside the crawl's scope, never fetched: its links are external. */
const ELSEWHERE = 'http://127.0.0.2:9/ext';

interface Crawl {
  scratch: string;
  state: string;
  site: Fixture;
  /** The same host on another port: in scope, and for Nutch's LinkDb the same host. */
  otherPort: Fixture;
  /** The export of the crawl. */
  out: string;
  segment: string;
}

let crawl: Crawl;

before(async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'sherlock-nutch-semantics-'));
  const state = join(scratch, 'state');
  const otherPort = await startFixture({ routes: { '/x': html('<title>X</title><p>on another port</p><a href="/x">itself</a>') } });
  const site = await startFixture({
    routes: {
      '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n'),
      '/': html(
        '<html><head><title>Home  Page</title></head><body><h1>Welcome</h1><p>some body text</p>' +
          '<a href="/a">First</a> <a href="/old">Moved</a> <a href="/tmp">Temp</a> <a href="/missing">Lost</a> <a href="/gone">Gone</a> <a href="/private/x">Secret</a>' +
          ` <a href="${otherPort.origin}/x">Next door</a> <a href="${ELSEWHERE}">Elsewhere</a>` +
          '</body></html>',
      ),
      '/a': html('<title>A</title><p>alpha text</p><a href="/">home</a>'),
      '/deep/b': html('<title>B</title><p>beta text</p>'),
      '/old': (_req, res) => res.writeHead(301, { Location: '/a' }).end(),
      '/tmp': (_req, res) => res.writeHead(302, { Location: '/deep/b' }).end(),
      '/missing': (_req, res) => res.writeHead(404, { 'Content-Type': 'text/html' }).end('<title>Not here</title>'),
      '/gone': (_req, res) => res.writeHead(410, { 'Content-Type': 'text/html' }).end('<title>Gone</title>'),
    },
  });
  const seeds = join(scratch, 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/\n`);
  const set = ['--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s'];
  const crawled = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...set]);
  assert.equal(crawled.status, 0, crawled.stderr);
  const out = join(scratch, 'crawl');
  const exported = await runCli(['export', 'nutch', '--state', state, '--out', out, '--json']);
  assert.equal(exported.status, 0, exported.stderr);
  crawl = { scratch, state, site, otherPort, out, segment: join(out, 'segments', (JSON.parse(exported.stdout) as { segment: string }).segment) };
});

after(async () => {
  await crawl?.site.close();
  await crawl?.otherPort.close();
  if (crawl !== undefined && process.env['SHERLOCK_KEEP_TMP'] === undefined) rmSync(crawl.scratch, { recursive: true, force: true });
});

const url = (path: string) => `${crawl.site.origin}${path}`;

/** The value of `path`'s record in a MapFile or SequenceFile part (the first when there are several). */
function valueOf<V>(part: string, path: string): V | undefined {
  return records<V>(part).find((r) => r.key === url(path))?.value;
}

function pstOf(datum: CrawlDatum): ProtocolStatus | undefined {
  return mapGet(datum.metadata, '_pst_')?.value as ProtocolStatus | undefined;
}

test('a 404 or 410 page is db_gone in the crawldb and fetch_gone in crawl_fetch, with ProtocolStatus NOTFOUND or GONE', () => {
  const crawldb = join(crawl.out, 'crawldb', 'current', 'part-r-00000');
  const fetch = join(crawl.segment, 'crawl_fetch', 'part-r-00000');
  for (const [path, code, protocol] of [['/missing', 404, PROTOCOL_STATUS.notfound], ['/gone', 410, PROTOCOL_STATUS.gone]] as const) {
    const datum = valueOf<CrawlDatum>(crawldb, path)!;
    assert.equal(datum.status, CRAWL_STATUS.db_gone, path);
    assert.deepEqual(pstOf(datum), { code: protocol, lastModified: 0n, args: null }, path);
    assert.equal(mapGet(datum.metadata, 'nutch.protocol.code')?.value, String(code));
    const fetched = valueOf<CrawlDatum>(fetch, path);
    assert.ok(fetched !== undefined, `${path} in crawl_fetch`);
    assert.equal(fetched.status, CRAWL_STATUS.fetch_gone, path);
    assert.equal(pstOf(fetched)?.code, protocol, path);
  }
  // What robots.txt forbids is fetch_gone too (Nutch's fetcher: ROBOTS_DENIED).
  const denied = valueOf<CrawlDatum>(fetch, '/private/x');
  assert.equal(denied?.status, CRAWL_STATUS.fetch_gone);
  assert.equal(pstOf(denied!)?.code, PROTOCOL_STATUS.robots_denied);
  // Nutch writes no content for them (FetcherThread outputs null content).
  assert.equal(valueOf(join(crawl.segment, 'content', 'part-r-00000'), '/missing'), undefined);
});

test('parse_text starts with the title, as Nutch\'s HTML parser takes the text of the whole document', () => {
  const parseText = join(crawl.segment, 'parse_text', 'part-r-00000');
  // DOMContentUtils.getText walks <head> too: the title's text, whitespace collapsed, then the body's.
  assert.equal(valueOf<ParseText>(parseText, '/')!.text, 'Home Page\nWelcome\nsome body text\nFirst Moved Temp Lost Gone Secret Next door Elsewhere');
  assert.match(valueOf<ParseText>(parseText, '/a')!.text, /^A\nalpha text/);
  assert.equal(valueOf<ParseData>(join(crawl.segment, 'parse_data', 'part-r-00000'), '/')!.title, 'Home Page');
});

test('_ngt_, the generate time, is never later than the fetch time', () => {
  const fetched = new Map(records<CrawlDatum>(join(crawl.segment, 'crawl_fetch', 'part-r-00000')).map((r) => [r.key, r.value]));
  const generated = records<CrawlDatum>(join(crawl.segment, 'crawl_generate', 'part-r-00000'));
  assert.equal(generated.length, fetched.size);
  for (const { key, value } of generated) {
    const fetch = fetched.get(key)!;
    for (const datum of [value, fetch]) {
      const ngt = mapGet(datum.metadata, '_ngt_')?.value as bigint;
      assert.ok(ngt <= fetch.fetchTime, `${key}: _ngt_ ${ngt} after the fetch ${fetch.fetchTime}`);
    }
  }
});

test('fetched rows carry Content-Type as Nutch\'s fetcher adds it: the MIME type in crawl_fetch and, through updatedb, the crawldb', () => {
  const crawldb = join(crawl.out, 'crawldb', 'current', 'part-r-00000');
  const fetch = join(crawl.segment, 'crawl_fetch', 'part-r-00000');
  const content = join(crawl.segment, 'content', 'part-r-00000');
  const typeOf = (part: string, path: string) => mapGet(valueOf<CrawlDatum>(part, path)!.metadata, 'Content-Type')?.value;
  for (const part of [crawldb, fetch]) {
    assert.equal(typeOf(part, '/'), 'text/html', part);
    // A redirect's empty body without a type: what Nutch's MIME detection calls it.
    assert.equal(typeOf(part, '/old'), 'application/octet-stream', part);
    assert.equal(typeOf(part, '/missing'), undefined, part);
  }
  assert.equal(valueOf<Content>(content, '/old')!.contentType, 'application/octet-stream');
  // Rows never fetched have none.
  assert.equal(typeOf(crawldb, '/private/x'), undefined);
});

test('Content and ParseData metadata carry nutch.crawl.score, the datum\'s score as Java prints a float', () => {
  const fetch = records<CrawlDatum>(join(crawl.segment, 'crawl_fetch', 'part-r-00000'));
  const content = new Map(records<Content>(join(crawl.segment, 'content', 'part-r-00000')).map((r) => [r.key, r.value]));
  const parseData = new Map(records<ParseData>(join(crawl.segment, 'parse_data', 'part-r-00000')).map((r) => [r.key, r.value]));
  assert.ok(content.size >= 4);
  for (const [key, value] of content) {
    const score = javaFloat(fetch.find((r) => r.key === key)!.value.score);
    assert.deepEqual(value.metadata.find(([name]) => name === 'nutch.crawl.score')?.[1], [score], key);
    const parsed = parseData.get(key);
    if (parsed !== undefined) assert.deepEqual(parsed.contentMeta.find(([name]) => name === 'nutch.crawl.score')?.[1], [score], key);
  }
});

test('a redirect is fetch_redir_perm or fetch_redir_temp with its target, and its target a linked datum with _repr_ as Nutch\'s fetcher writes it', () => {
  const fetch = join(crawl.segment, 'crawl_fetch', 'part-r-00000');
  const parse = records<CrawlDatum>(join(crawl.segment, 'crawl_parse', 'part-r-00000'));
  for (const [path, status, protocol, target, code, repr] of [
    // Permanent, from a page that is not a site's root: the target represents both.
    ['/old', CRAWL_STATUS.fetch_redir_perm, PROTOCOL_STATUS.moved, '/a', '301', '/a'],
    // Temporary, to a deeper page: the source does.
    ['/tmp', CRAWL_STATUS.fetch_redir_temp, PROTOCOL_STATUS.temp_moved, '/deep/b', '302', '/tmp'],
  ] as const) {
    const source = valueOf<CrawlDatum>(fetch, path)!;
    assert.equal(source.status, status, path);
    assert.deepEqual(pstOf(source), { code: protocol, lastModified: 0n, args: [url(target)] }, path);
    const linked = parse.filter((r) => r.key === url(target) && mapGet(r.value.metadata, '_repr_') !== undefined);
    assert.equal(linked.length, 1, `one linked datum for ${target}`);
    const datum = linked[0]!.value;
    assert.equal(datum.status, CRAWL_STATUS.linked);
    assert.equal(datum.score, 0);
    assert.equal(datum.fetchTime, source.fetchTime);
    assert.equal(datum.fetchInterval, source.fetchInterval);
    assert.equal(mapGet(datum.metadata, '_repr_')?.value, url(repr), path);
    // The source's metadata comes along, as createRedirDatum copies it.
    for (const key of ['_ngt_', '_pst_', 'Content-Type', 'nutch.protocol.code']) assert.deepEqual(mapGet(datum.metadata, key), mapGet(source.metadata, key), key);
    assert.equal(mapGet(datum.metadata, 'nutch.protocol.code')?.value, code);
  }
});

test('in the crawldb, a redirect\'s target carries _repr_ as Nutch\'s updatedb keeps it from the linked datum', () => {
  const crawldb = records<CrawlDatum>(join(crawl.out, 'crawldb', 'current', 'part-r-00000'));
  const reprs = crawldb.flatMap((r) => {
    const repr = mapGet(r.value.metadata, '_repr_')?.value;
    return repr === undefined ? [] : [[r.key, repr]];
  });
  assert.deepEqual(reprs, [
    [url('/a'), url('/a')],
    [url('/deep/b'), url('/tmp')],
  ]);
  // The redirects themselves keep their target in _pst_.
  assert.deepEqual(pstOf(crawldb.find((r) => r.key === url('/old'))!.value)?.args, [url('/a')]);
});

test('the linkdb leaves out links within a host, as Nutch\'s LinkDb does by default; --internal-links keeps them', async () => {
  // linkdb.ignore.internal.links (true): a link whose target has its source's host, whatever the port, is left out.
  const inlinks = (out: string) => new Map(records<Link[]>(join(out, 'linkdb', 'current', 'part-r-00000')).map((r) => [r.key, r.value.map((l) => [l.url, l.anchor])]));
  assert.deepEqual([...inlinks(crawl.out)], [[ELSEWHERE, [[url('/'), 'Elsewhere']]]]);

  const kept = join(crawl.scratch, 'internal');
  const exported = await runCli(['export', 'nutch', '--state', crawl.state, '--out', kept, '--internal-links']);
  assert.equal(exported.status, 0, exported.stderr);
  const all = inlinks(kept);
  assert.deepEqual(all.get(ELSEWHERE), [[url('/'), 'Elsewhere']]);
  assert.deepEqual(all.get(url('/a')), [[url('/'), 'First']]);
  assert.deepEqual(all.get(`${crawl.otherPort.origin}/x`)?.sort(), [[`${crawl.otherPort.origin}/x`, 'itself'], [url('/'), 'Next door']].sort());
  assert.deepEqual(all.get(url('/')), [[url('/a'), 'home']]);
});

test('scores are the index\'s static weights as the ranks they stand for; without an index version 1.0, Nutch\'s db.score.injected', async () => {
  const scores = (out: string) => new Map(records<CrawlDatum>(join(out, 'crawldb', 'current', 'part-r-00000')).map((r) => [r.key, r.value.score]));
  // The crawl has no index version: no URL has been weighed.
  assert.deepEqual(new Set(scores(crawl.out).values()), new Set([1]));

  const built = await runCli(['index', 'build', '--state', crawl.state]);
  assert.equal(built.status, 0, built.stderr);
  const indexDir = indexDirectory(crawl.state);
  const weights = new Map([...readFeedback(join(indexDir, currentVersion(indexDir)!, FEEDBACK_NAME))].map((r) => [r.footprint.toString('hex'), r.weight]));
  assert.ok(weights.size >= 3, `${weights.size} cards`);
  const out = join(crawl.scratch, 'indexed');
  const exported = await runCli(['export', 'nutch', '--state', crawl.state, '--out', out, '--json']);
  assert.equal(exported.status, 0, exported.stderr);
  const weighed = new Set<number>();
  for (const [key, score] of scores(out)) {
    const weight = weights.get(footprint(canonicalUrl(key)).toString('hex'));
    assert.equal(score, weight === undefined ? 1 : Math.fround(rankOfStaticWeight(weight)), key);
    if (weight !== undefined) weighed.add(weight);
  }
  assert.ok(weighed.size >= 2 && !weighed.has(0), `weights ${[...weighed]}`);
  // The segment's records carry the same score.
  const segment = join(out, 'segments', (JSON.parse(exported.stdout) as { segment: string }).segment);
  const home = scores(out).get(url('/'))!;
  assert.notEqual(home, 1);
  assert.equal(valueOf<CrawlDatum>(join(segment, 'crawl_fetch', 'part-r-00000'), '/')!.score, home);
  assert.deepEqual(valueOf<Content>(join(segment, 'content', 'part-r-00000'), '/')!.metadata.find(([name]) => name === 'nutch.crawl.score')?.[1], [javaFloat(home)]);

  // Imported, a score gives the weight back (the rows' own weights are still 0: the shepherd has not applied the Feedback).
  const fresh = join(crawl.scratch, 'fresh');
  const imported = await runCli(['import', 'nutch', '--state', fresh, out]);
  assert.equal(imported.status, 0, imported.stderr);
  const db = new Database(join(fresh, 'shepherd', 'urls.sqlite'), { readonly: true });
  const rows = db.prepare('SELECT url, weight FROM urls').all() as Array<{ url: string; weight: number }>;
  db.close();
  assert.equal(rows.length, scores(out).size);
  for (const row of rows) assert.equal(row.weight, weights.get(footprint(row.url).toString('hex')) ?? 0, row.url);
});
