/**
 * `sherlock export nutch` and `sherlock import nutch` end to end: a crawl of a
 * loopback site (pages with anchors, ETag and Last-Modified, a redirect, a
 * 404, a page robots.txt forbids) exported as a Nutch crawl directory, read
 * back through our Hadoop readers, laid out and typed as the real Nutch files
 * of the test data, and imported into a fresh state giving the same URL
 * database.
 */

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { exportNutch } from '../../exporter/nutch/export.js';
import { verifyChecksums } from '../../common/hadoop/crc.js';
import { hashPartition } from '../../common/hadoop/io.js';
import { mapGet } from '../../common/hadoop/writables.js';
import { CRAWL_STATUS, type Content, type CrawlDatum, type Link, type ParseData, type ParseText } from '../../common/hadoop/nutch-writables.js';
import { SequenceFileReader } from '../../common/hadoop/sequence-file.js';
import type { UrlRowColumns } from '../../shepherd/status.js';
import { UrlDb } from '../../shepherd/urldb.js';
import { canonicalUrl, footprint } from '../../common/url.js';
import { runCli } from '../helpers/cli.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { nutchData, records } from '../helpers/nutch-data.js';
import { scratchDir } from '../helpers/paths.js';

const LAST_MODIFIED = 'Tue, 01 Oct 2024 10:00:00 GMT';

function routes() {
  const html = (body: string) => (_req: unknown, res: import('node:http').ServerResponse) =>
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', ETag: '"v1"', 'Last-Modified': LAST_MODIFIED }).end(body);
  return {
    '/robots.txt': (_req: unknown, res: import('node:http').ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n'),
    '/': html('<title>Home</title><meta name="description" content="the start"><a href="/a">First  page</a> <a href="/b">Second</a> <a href="/old">Moved</a> <a href="/missing">Lost</a> <a href="/private/x">Secret</a>'),
    '/a': html('<title>A</title><p>alpha text</p><a href="/b">to b</a> <a href="/">home</a>'),
    '/b': html('<title>B</title><p>beta text</p><a href="/a">back to a</a>'),
    '/old': (_req: unknown, res: import('node:http').ServerResponse) => res.writeHead(301, { Location: '/a' }).end(),
  };
}

/** A URL row as the export reads it, but the bucket reference, which an import never restores. */
type Row = Omit<UrlRowColumns, 'oid'>;

/** Every row's columns but ids and oid, by URL; and the sites with their counts. */
function dbContents(state: string): { urls: Row[]; sites: Array<{ site: string; urls: number }> } {
  const db = new Database(join(state, 'shepherd', 'urls.sqlite'), { readonly: true });
  try {
    const urls = db
      .prepare(
        `SELECT url, state, depth, first_seen, last_fetch, next_fetch, interval, retries, status, error, checksum, last_modified, etag, weight, redirect FROM urls ORDER BY url`,
      )
      .all() as Row[];
    const sites = db.prepare(`SELECT site, urls FROM sites ORDER BY site`).all() as Array<{ site: string; urls: number }>;
    return { urls, sites };
  } finally {
    db.close();
  }
}

/** Paths of the files under `dir`, relative, sorted. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

/** A SequenceFile's bytes with its sync marker zeroed wherever it occurs. */
function blankSyncMarkers(path: string): Buffer {
  const bytes = readFileSync(path);
  const marker = header(path).syncMarker!;
  for (let at = bytes.indexOf(marker); at !== -1; at = bytes.indexOf(marker, at + marker.length)) bytes.fill(0, at, at + marker.length);
  return bytes;
}

function header(path: string): SequenceFileReader['header'] {
  const reader = SequenceFileReader.open(path);
  try {
    return reader.header;
  } finally {
    reader.close();
  }
}

test('a crawl exported to Nutch reads back as Nutch data and imports into a fresh state unchanged', async (t) => {
  const scratch = scratchDir(t);
  const state = join(scratch, 'state');
  const site = await startFixture({ routes: routes() });
  t.after(() => site.close());
  const seeds = join(scratch, 'seeds.txt');
  (await import('node:fs')).writeFileSync(seeds, `${site.origin}/\n`);
  const set = ['--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s'];
  const crawl = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...set]);
  assert.equal(crawl.status, 0, crawl.stderr);
  // As if an index had found /b a copy: a duplicate, scheduled max_refetch after its fetch.
  const urls = UrlDb.open(state);
  assert.equal(urls.feedback([{ footprint: footprint(canonicalUrl(`${site.origin}/b`)), duplicate: true }]), 1);
  urls.close();

  const out = join(scratch, 'crawl');
  const exported = await runCli(['export', 'nutch', '--state', state, '--out', out, '--json']);
  assert.equal(exported.status, 0, exported.stderr);
  const report = JSON.parse(exported.stdout) as { urls: number; documents: number; linkedUrls: number; segment: string; bytes: number };
  const before = dbContents(state);
  assert.equal(report.urls, before.urls.length);
  assert.ok(report.documents >= 4, `documents ${report.documents}`);
  assert.match(report.segment, /^\d{14}$/);

  // The crawldb: every URL in Text order, with the statuses Nutch gives such pages.
  const crawldbPart = join(out, 'crawldb', 'current', 'part-r-00000');
  const crawldb = records<CrawlDatum>(crawldbPart);
  assert.deepEqual(
    crawldb.map((r) => r.key),
    before.urls.map((r) => r.url).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
  );
  const datum = (path: string) => crawldb.find((r) => r.key === `${site.origin}${path}`)!.value;
  assert.equal(datum('/').status, CRAWL_STATUS.db_fetched);
  assert.equal(datum('/old').status, CRAWL_STATUS.db_redir_perm);
  assert.equal(datum('/private/x').status, CRAWL_STATUS.db_gone);
  assert.equal(datum('/b').status, CRAWL_STATUS.db_duplicate);
  assert.equal(datum('/b').fetchTime, BigInt(before.urls.find((r) => r.url === `${site.origin}/b`)!.next_fetch!) * 1000n);
  assert.equal(datum('/a').signature?.length, 16);
  assert.equal(datum('/a').modifiedTime, BigInt(Date.parse(LAST_MODIFIED)));
  assert.equal(mapGet(datum('/a').metadata, 'ETag')?.value, '"v1"');
  assert.equal(mapGet(datum('/a').metadata, 'nutch.protocol.code')?.value, '200');
  // The same classes, versions and compression as the real Nutch 1.21 crawldb.
  const real = header(nutchData('nutch-1.21-crawl', 'crawldb', 'current', 'part-r-00000', 'data'));
  const ours = header(join(crawldbPart, 'data'));
  assert.deepEqual([ours.version, ours.keyClass, ours.valueClass, ours.compression], [real.version, real.keyClass, real.valueClass, real.compression]);
  assert.ok(verifyChecksums(join(crawldbPart, 'data')), 'the .crc side file matches');

  // One segment: fetch, content and parses of the copies held, as Nutch lays them out.
  const segment = join(out, 'segments', report.segment);
  assert.deepEqual(readdirSync(segment).sort(), ['content', 'crawl_fetch', 'crawl_generate', 'crawl_parse', 'parse_data', 'parse_text']);
  const realSegment = nutchData('nutch-1.21-crawl', 'segments', '20260130202548');
  for (const [dir, file] of [['content', 'part-r-00000/data'], ['crawl_fetch', 'part-r-00000/data'], ['parse_data', 'part-r-00000/data'], ['parse_text', 'part-r-00000/data'], ['crawl_parse', 'part-r-00000'], ['crawl_generate', 'part-r-00000']]) {
    const a = header(join(segment, dir!, file!));
    const b = header(join(realSegment, dir!, file!));
    assert.deepEqual([a.keyClass, a.valueClass, a.compression, a.codecClass], [b.keyClass, b.valueClass, b.compression, b.codecClass], dir);
  }
  const content = records<Content>(join(segment, 'content', 'part-r-00000'));
  const home = content.find((r) => r.key === `${site.origin}/`)!.value;
  assert.match(home.content.toString('utf8'), /<title>Home<\/title>/);
  assert.equal(home.contentType, 'text/html');
  assert.ok(home.metadata.some(([name, values]) => name.toLowerCase() === 'etag' && values[0] === '"v1"'));
  const parseText = records<ParseText>(join(segment, 'parse_text', 'part-r-00000'));
  assert.match(parseText.find((r) => r.key === `${site.origin}/a`)!.value.text, /alpha text/);
  const parseData = records<ParseData>(join(segment, 'parse_data', 'part-r-00000'));
  const homeParse = parseData.find((r) => r.key === `${site.origin}/`)!.value;
  assert.equal(homeParse.title, 'Home');
  assert.deepEqual(
    homeParse.outlinks.find((l) => l.url === `${site.origin}/a`),
    { url: `${site.origin}/a`, anchor: 'First page', metadata: null },
  );
  const fetch = records<CrawlDatum>(join(segment, 'crawl_fetch', 'part-r-00000'));
  assert.equal(fetch.find((r) => r.key === `${site.origin}/`)!.value.status, CRAWL_STATUS.fetch_success);

  // The linkdb: none of these links leaves the host, so Nutch's LinkDb would keep none (linkdb.ignore.internal.links).
  assert.deepEqual(records(join(out, 'linkdb', 'current', 'part-r-00000')), []);
  assert.equal(report.linkedUrls, 0);

  // Exporting again into the same directory is refused: nothing is overwritten.
  const again = await runCli(['export', 'nutch', '--state', state, '--out', out]);
  assert.equal(again.status, 2, again.stderr);

  // Import into a fresh state: the same URL database.
  const fresh = join(scratch, 'fresh');
  const imported = await runCli(['import', 'nutch', '--state', fresh, out, '--json']);
  assert.equal(imported.status, 0, imported.stderr);
  const counts = JSON.parse(imported.stdout) as { records: number; added: number; known: number; refused: number };
  assert.deepEqual(counts, { parts: 1, records: before.urls.length, added: before.urls.length, known: 0, refused: 0 });
  assert.deepEqual(dbContents(fresh), before);
  const dumpBefore = await runCli(['shepherd', 'dump', '--state', state, '--json']);
  const dumpAfter = await runCli(['shepherd', 'dump', '--state', fresh, '--json']);
  assert.equal(dumpAfter.stdout, dumpBefore.stdout);

  // --parts 2: every directory in two parts, each key where Hadoop's HashPartitioner puts it; imports the same.
  // --internal-links: the linkdb keeps the links within the host, inlinks with anchors.
  const split = join(scratch, 'split');
  const exportedSplit = await runCli(['export', 'nutch', '--state', state, '--out', split, '--parts', '2', '--internal-links']);
  assert.equal(exportedSplit.status, 0, exportedSplit.stderr);
  const keys: string[] = [];
  for (const part of [0, 1]) {
    for (const dir of [join(split, 'crawldb', 'current'), join(split, 'linkdb', 'current'), join(split, 'segments', readdirSync(join(split, 'segments'))[0]!, 'content')]) {
      for (const r of records<unknown>(join(dir, `part-r-0000${part}`))) {
        assert.equal(hashPartition(Buffer.from(r.key), 2), part, r.key);
        if (dir.endsWith('crawldb/current')) keys.push(r.key);
      }
    }
  }
  assert.deepEqual(keys.sort(), crawldb.map((r) => r.key).sort());
  const toB = [0, 1].flatMap((part) => records<Link[]>(join(split, 'linkdb', 'current', `part-r-0000${part}`))).find((r) => r.key === `${site.origin}/b`)!.value;
  assert.deepEqual(toB.map((l) => [l.url, l.anchor]).sort(), [[`${site.origin}/`, 'Second'], [`${site.origin}/a`, 'to b']]);
  const fromSplit = join(scratch, 'from-split');
  const importedSplit = await runCli(['import', 'nutch', '--state', fromSplit, split]);
  assert.equal(importedSplit.status, 0, importedSplit.stderr);
  assert.deepEqual(dbContents(fromSplit), before);

  // Importing again changes nothing: every URL is known.
  const twice = await runCli(['import', 'nutch', '--state', fresh, '--crawldb', join(out, 'crawldb'), '--json']);
  assert.equal(twice.status, 0, twice.stderr);
  assert.equal((JSON.parse(twice.stdout) as { known: number }).known, before.urls.length);

  // The segment's records are made in worker threads: the files are the same bytes whatever their number
  // (but for each file's random sync marker, blanked here; .crc files checked against their file).
  const now = Date.UTC(2025, 0, 2, 3, 4, 5);
  const byThreads = [1, 3].map((threads) => join(scratch, `threads-${threads}`));
  for (const [i, dir] of byThreads.entries()) await exportNutch(state, { out: dir, sortMemory: 1024, checksum: true, parts: 1, now, threads: i === 0 ? 1 : 3 });
  const files = filesUnder(byThreads[0]!);
  assert.deepEqual(filesUnder(byThreads[1]!), files);
  assert.ok(files.some((f) => f.endsWith('content/part-r-00000/data')), files.join(' '));
  for (const file of files) {
    if (file.endsWith('.crc')) {
      assert.ok(verifyChecksums(join(byThreads[1]!, file.replace(/\.([^/]+)\.crc$/, '$1'))), file);
      continue;
    }
    const [one, three] = byThreads.map((dir) => blankSyncMarkers(join(dir, file)));
    assert.ok(one!.equals(three!), file);
  }
});
