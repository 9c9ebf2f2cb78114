/**
 * `sherlock import archive` end to end on real archives: the testdata ARCs
 * and WARCs (Heritrix, IA's liveweb proxy, pywb, wget, cdx-writer's cases)
 * and a `wget --warc-file` crawl of a site served on loopback are imported,
 * merged by the shepherd, indexed, and found by queries on their text in
 * process; each hit names the original file and the offset of its record,
 * where the record reader finds it. A re-import adds nothing; a damaged copy
 * imports its good records and names the bad one's file and offset; a held
 * bucket file (a running gatherer) refuses the import.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { after } from 'node:test';
import { openArchive } from '../../common/archive/archive-read.js';
import { captureRecord, warcRecordId } from '../../common/archive/warc.js';
import { parseArcAttribute } from '../../common/archive/arc-place.js';
import { BucketReader, BucketWriter, bucketFilePath } from '../../common/bucket/file.js';
import { currentVersion, indexDirectory } from '../../common/index/layout.js';
import { canonicalUrl } from '../../common/url.js';
import type { ImportReport } from '../../gatherer/archive-import.js';
import type { SearchHit } from '../../searcher/engine.js';
import { searchVersion } from '../../searcher/index-engine.js';
import { IndexVersion } from '../../searcher/index-version.js';
import { parseQuery } from '../../searcher/query.js';
import { runCli } from '../helpers/cli.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { buildCli } from '../indexer/site.js';

const TESTDATA = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'testdata', 'arc');
const FILES = ['pywb/example.warc.gz', 'pywb/example.arc', 'wget-warc/wget-sample.warc.gz', 'ukwa/IAH-20080430204825-00000-blackbook-truncated.arc.gz', 'cdx-writer/uncompressed.arc', 'cdx-writer/alexa_charset_in_header.arc.gz'].map((f) => join(TESTDATA, f));

const temps: string[] = [];
function temp(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `sherlock-import-${name}-`));
  temps.push(dir);
  return dir;
}

after(() => {
  if (process.env['SHERLOCK_KEEP_TMP'] === undefined) for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

async function importFiles(state: string, files: readonly string[]): Promise<ImportReport> {
  const run = await runCli(['import', 'archive', '--state', state, '--json', ...files]);
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as ImportReport;
}

/** The shepherd's cycle and an index build, as the daemons would run them after an import. */
async function mergeAndIndex(state: string): Promise<IndexVersion> {
  const cycle = await runCli(['shepherd', 'run', '--once', '--state', state]);
  assert.equal(cycle.status, 0, cycle.stderr);
  await buildCli(state);
  const name = currentVersion(indexDirectory(state))!;
  return IndexVersion.open(join(indexDirectory(state), name), name);
}

async function search(version: IndexVersion, q: string): Promise<SearchHit[]> {
  return (await searchVersion(version, { query: parseQuery(q), offset: 0, limit: 20, filters: {}, sort: 'relevance' }, new AbortController().signal)).hits;
}

/** The record a hit's archive field names, read where it lies: its URL. */
function recordUrl(hit: SearchHit): string | undefined {
  const reader = openArchive(hit.archive!.file);
  try {
    const record = reader.recordAt(hit.archive!.offset);
    assert.equal(record.length, hit.archive!.length);
    return 'content' in record ? record.header.url : record.fields.find((f) => f.name === 'WARC-Target-URI')?.value.replace(/^<|>$/g, '');
  } finally {
    reader.close();
  }
}

/** The URL database's rows (`shepherd dump --json`) by URL. */
async function urlRows(state: string): Promise<Map<string, { lastFetch: number; status: number; nextFetch: number | null }>> {
  const dump = await runCli(['shepherd', 'dump', '--json', '--state', state]);
  assert.equal(dump.status, 0, dump.stderr);
  const rows = dump.stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { url: string; lastFetch: number; status: number; nextFetch: number | null });
  return new Map(rows.map((r) => [r.url, r]));
}

test('import archive: testdata ARCs and WARCs are searchable, hits name the original record, the URL database has them as fetched at capture time, a re-import adds nothing', async () => {
  const state = temp('testdata');
  const first = await importFiles(state, FILES);
  assert.equal(first.files, FILES.length);
  assert.ok(first.imported >= 15, JSON.stringify(first));
  assert.equal(first.revisits, 1, 'example.warc.gz revisits its first response');
  assert.deepEqual(first.problems, []);

  const version = await mergeAndIndex(state);
  try {
    for (const [query, url, file] of [
      ['illustrative examples', 'http://example.com/', 'pywb/example'],
      ['manu chao', 'http://www.sueddeutsche.de/muenchen/manu-chao-in-muenchen-che-guitarra-1.1114509-2', 'cdx-writer/uncompressed.arc'],
      ['"internet archive"', 'http://www.archive.org/index.php', 'ukwa/IAH-20080430204825-00000-blackbook-truncated.arc.gz'],
      ['cineaction', 'http://free.allocine.fr/tv/cineaction.asp', 'cdx-writer/alexa_charset_in_header.arc.gz'],
    ] as const) {
      const hits = await search(version, query);
      const hit = hits.find((h) => h.url === url);
      assert.ok(hit !== undefined, `${query}: ${JSON.stringify(hits.map((h) => h.url))}`);
      // The import names a file by its real path (../shared may be a symbolic link, as in CI).
      assert.ok(hit.archive!.file.startsWith(join(realpathSync(TESTDATA), file)), JSON.stringify(hit.archive));
      assert.equal(canonicalUrl(recordUrl(hit)!), url);
      // `sherlock arc cat` at that offset prints the record: the page's own text is in it.
      const cat = await runCli(['arc', 'cat', hit.archive!.file, '--offset', String(hit.archive!.offset)]);
      assert.equal(cat.status, 0, cat.stderr);
      assert.match(cat.stdout, new RegExp(query.replace(/"/g, '').split(' ')[0]!, 'i'));
    }
  } finally {
    version.retire();
  }

  // In the URL database as fetched at their capture dates (the ARC's 14 digits, wget's WARC-Date).
  const rows = await urlRows(state);
  assert.equal(rows.get('http://www.archive.org/index.php')?.lastFetch, Date.UTC(2008, 3, 30, 20, 48, 26) / 1000);
  assert.equal(rows.get('http://www.archive.org/index.php')?.status, 200);
  assert.equal(rows.get('http://127.0.0.1:18931/sub/page.html')?.lastFetch, 1795338498);
  // Searchable, not crawled: no imported URL is planned for a fetch of the live site.
  assert.deepEqual([...rows].filter(([, row]) => row.nextFetch !== null).map(([url]) => url), []);

  // The Nutch segment reads each document's response where `a` says, WARC records of imported files too.
  const nutch = await runCli(['export', 'nutch', '--state', state, '--out', join(state, 'nutch')]);
  assert.equal(nutch.status, 0, nutch.stderr);
  assert.match(nutch.stdout, /segment \d+ of (\d{2,}) documents/);

  // The revisit's bucket names the response it revisits.
  const reader = BucketReader.open(bucketFilePath(state));
  try {
    const places = [...reader.buckets()].map((s) => reader.decode(s).header).filter((h) => h.string('U') === 'http://example.com/?example=1').map((h) => parseArcAttribute(h.string('a')));
    assert.equal(places.length, 2);
    assert.deepEqual(places[0], places[1]);
  } finally {
    reader.close();
  }

  const again = await importFiles(state, [...FILES].reverse());
  assert.equal(again.imported, 0);
  assert.equal(again.known, first.imported);
});

test('import archive: a revisit whose original was imported by an earlier run takes that record; one whose original was never imported is named and skipped', async () => {
  const state = temp('revisit-later');
  const dir = temp('revisit-files');
  // pywb's example.warc.gz cut at its record boundaries (gzip members): the response at 333, its revisit at 1864.
  const whole = readFileSync(join(TESTDATA, 'pywb/example.warc.gz'));
  const originals = join(dir, 'originals.warc.gz');
  const revisits = join(dir, 'revisits.warc.gz');
  writeFileSync(originals, whole.subarray(0, 1864));
  writeFileSync(revisits, whole.subarray(1864, 2907));

  // Alone, the revisit has no original.
  const alone = await importFiles(temp('revisit-alone'), [revisits]);
  assert.equal(alone.revisits, 0);
  assert.deepEqual(alone.problems.map((p) => [p.file, p.offset]), [[realpathSync(revisits), 0]]);
  assert.match(alone.problems[0]!.message, /no response with that payload digest among the files imported, now or before/);

  assert.equal((await importFiles(state, [originals])).imported, 1);
  const later = await importFiles(state, [revisits]);
  assert.deepEqual(later.problems, []);
  assert.equal(later.revisits, 1);
  const reader = BucketReader.open(bucketFilePath(state));
  try {
    const headers = [...reader.buckets()].map((s) => reader.decode(s).header);
    assert.deepEqual(headers.map((h) => h.string('D')), [String(Date.UTC(2014, 0, 3, 3, 3, 21) / 1000), String(Date.UTC(2014, 0, 3, 3, 3, 41) / 1000)]);
    assert.deepEqual(headers.map((h) => parseArcAttribute(h.string('a'))), Array(2).fill({ file: realpathSync(originals), offset: 333, length: 1043 }));
  } finally {
    reader.close();
  }
  assert.equal((await importFiles(state, [revisits])).known, 1, 'imported once');
});

test('import archive: of two captures of a URL the index shows the newer, whichever file was imported last', async () => {
  const state = temp('newest');
  const dir = temp('newest-files');
  const capture = (date: string, word: string): string => {
    const file = join(dir, `${date}.warc.gz`);
    const html = `<html><head><title>The ${word} page</title></head><body><p>This capture says ${word}.</p></body></html>`;
    const content = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: ${Buffer.byteLength(html)}\r\n\r\n${html}`);
    writeFileSync(file, captureRecord({ name: date, url: 'http://archived.example/page', ip: '192.0.2.1', date, mime: 'text/html', content, warcinfoId: warcRecordId('info') }));
    return file;
  };
  const newer = capture('20200101000000', 'pomegranate');
  const older = capture('20100101000000', 'quince');
  await importFiles(state, [newer]);
  await importFiles(state, [older]);
  const version = await mergeAndIndex(state);
  try {
    assert.deepEqual((await search(version, 'pomegranate')).map((h) => h.url), ['http://archived.example/page']);
    assert.deepEqual(await search(version, 'quince'), []);
  } finally {
    version.retire();
  }
  assert.equal((await urlRows(state)).get('http://archived.example/page')?.lastFetch, Date.UTC(2020, 0, 1) / 1000);
});

test('import archive: a damaged or truncated copy imports its good records and names the bad one by file and offset', async () => {
  const state = temp('damage');
  const original = join(TESTDATA, 'ukwa/IAH-20080430204825-00000-blackbook-truncated.arc.gz');
  const flipped = join(state, 'flipped.arc.gz');
  const cut = join(state, 'cut.arc.gz');
  copyFileSync(original, flipped);
  copyFileSync(original, cut);
  // index.php's member is 1776+5949: flip bytes in its deflate data; cut the file inside the last member (11441+6965).
  const bytes = readFileSync(flipped);
  for (let i = 0; i < 16; i++) bytes[1776 + 2000 + i]! ^= 0x5a;
  writeFileSync(flipped, bytes);
  truncateSync(cut, 11441 + 3000);

  const report = await importFiles(state, [flipped, cut]);
  assert.ok(report.problems.some((p) => p.file === flipped && p.offset === 1776), JSON.stringify(report.problems));
  assert.ok(report.problems.some((p) => p.file === cut && p.offset === 11441), JSON.stringify(report.problems));
  const reader = BucketReader.open(bucketFilePath(state));
  const imported = new Map<string, string[]>();
  try {
    for (const stored of reader.buckets()) {
      const header = reader.decode(stored).header;
      const place = parseArcAttribute(header.string('a'))!;
      imported.set(place.file, [...(imported.get(place.file) ?? []), header.string('U')!]);
    }
  } finally {
    reader.close();
  }
  const flippedUrls = imported.get(flipped)!;
  assert.ok(flippedUrls.includes('http://www.archive.org/robots.txt') && flippedUrls.includes('http://www.archive.org/services/collection-rss.php'), flippedUrls.join(' '));
  assert.ok(!flippedUrls.includes('http://www.archive.org/index.php'));
  const cutUrls = imported.get(cut)!;
  assert.ok(cutUrls.includes('http://www.archive.org/index.php') && !cutUrls.includes('http://www.archive.org/services/collection-rss.php'), cutUrls.join(' '));
});

test('import archive: refused while the gatherer holds the bucket file', async () => {
  const state = temp('locked');
  const writer = BucketWriter.open(bucketFilePath(state));
  try {
    const run = await runCli(['import', 'archive', '--state', state, FILES[0]!]);
    assert.notEqual(run.status, 0);
    assert.match(run.stderr, /gatherer holds the bucket file/);
  } finally {
    writer.close();
  }
});

test('import archive: a wget --warc-file crawl of a loopback site is searchable', async () => {
  const state = temp('wget');
  const site = await startFixture({
    address: '127.0.0.171',
    routes: {
      '/': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<html lang="en"><title>Lighthouse keepers</title><body><p>The lighthouse keepers of the northern cape.</p><a href="/log">log</a> <a href="/moved">moved</a></body></html>'),
      '/log': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<html lang="en"><title>Keeper log</title><body><p>Foghorn sounded at midnight; the lamp was trimmed at dawn.</p></body></html>'),
      '/moved': (_req, res) => res.writeHead(301, { Location: '/log' }).end(),
    },
  });
  try {
    // Asynchronously: the site is served by this process.
    const wget = spawn('wget', ['--recursive', '--level=2', '--no-verbose', '--delete-after', '--no-directories', '--tries=1', '--timeout=10', `--warc-file=${join(state, 'site')}`, `${site.origin}/`], { cwd: state, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    wget.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [status] = (await once(wget, 'close')) as [number | null];
    assert.equal(status, 0, stderr);
  } finally {
    await site.close();
  }
  const warc = readdirSync(state).filter((n) => n.endsWith('.warc.gz')).map((n) => join(state, n));
  assert.equal(warc.length, 1);
  const report = await importFiles(state, warc);
  assert.deepEqual(report.problems, []);
  assert.ok(report.imported >= 3, JSON.stringify(report));
  const version = await mergeAndIndex(state);
  try {
    const hits = await search(version, 'foghorn');
    assert.deepEqual(
      hits.map((h) => h.url),
      [`${site.origin}/log`],
    );
    assert.equal(hits[0]!.archive!.file, warc[0]);
    assert.equal(recordUrl(hits[0]!), `${site.origin}/log`);
    assert.deepEqual(
      (await search(version, 'lighthouse keepers')).map((h) => h.url),
      [`${site.origin}/`],
    );
  } finally {
    version.retire();
  }
});

test('import archive: killed while appending a bucket, a re-run imports what is missing and nothing twice', async () => {
  const state = temp('killed');
  const file = FILES[3]!;
  const whole = await importFiles(state, [file]);
  assert.ok(whole.imported >= 5, JSON.stringify(whole));
  // What kill -9 in the middle of an append leaves: the last bucket cut short (the in-progress magic never flipped).
  const buckets = bucketFilePath(state);
  const reader = BucketReader.open(buckets);
  const last = [...reader.buckets()].at(-1)!;
  reader.close();
  truncateSync(buckets, last.offset + 40);
  const again = await importFiles(state, [file]);
  assert.equal(again.imported, 1);
  assert.equal(again.known, whole.imported - 1);
  const after = BucketReader.open(buckets);
  try {
    const keys = [...after.buckets()].map((s) => after.decode(s).header).map((h) => `${h.string('a')} ${h.string('D')} ${h.string('U')}`);
    assert.equal(keys.length, whole.imported);
    assert.equal(new Set(keys).size, keys.length);
  } finally {
    after.close();
  }
});
