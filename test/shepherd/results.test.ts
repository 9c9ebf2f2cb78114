/**
 * The shepherd reading what a real gatherer stored: results, links, redirects,
 * sitemaps, and where to continue; malformed buckets are reported, not fatal.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUCKET_TYPE, BucketObject, encodeBucket } from '../../common/bucket/bucket.js';
import { BucketReader, BucketWriter, bucketFilePath } from '../../common/bucket/file.js';
import { writePlan } from '../../common/gather/plan-file.js';
import { gathererConfig } from '../../gatherer/config.js';
import { Gatherer } from '../../gatherer/gatherer.js';
import { readReports, type FetchResult } from '../../shepherd/results.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

test('results of a real gather: status, checksum, validators, followed links, redirects, sitemaps; reading resumes where it stopped', async (t) => {
  const state = scratchDir(t);
  const html = (body: string) => (_req: unknown, res: import('node:http').ServerResponse) =>
    res.writeHead(200, { 'Content-Type': 'text/html', 'Last-Modified': 'Wed, 21 Oct 2015 07:28:00 GMT', ETag: '"v1"' }).end(body);
  const fixture = await startFixture({
    address: '127.0.0.30',
    routes: {
      '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nDisallow:\nSitemap: /sitemap.xml\n'),
      '/': html('<title>home</title><a href="/a">a</a> <a href="/b#x">b</a> <a href="/a">again</a> <img src="/logo.png"> <iframe src="/frame"></iframe>'),
      '/nofollow': html('<meta name="robots" content="nofollow"><a href="/secret">s</a>'),
      '/moved': (_req, res) => res.writeHead(301, { Location: '/a' }).end(),
    },
  });
  t.after(() => fixture.close());
  writePlan(state, ['/', '/nofollow', '/moved', '/missing'].map((p) => ({ url: `${fixture.origin}${p}`, priority: 1 })));
  const g = await Gatherer.open(state, gathererConfig.parse({ allow_private_addresses: true, min_delay: '0s', max_retries: 0 }));
  await g.run({ untilIdle: true });

  const reader = BucketReader.open(bucketFilePath(state));
  t.after(() => reader.close());
  const { reports, next } = readReports(reader, { from: 1, limit: 100 });
  const robots = reports.find((r) => r.kind === 'robots');
  assert.deepEqual(robots?.result, { oid: robots!.result.oid, url: `${fixture.origin}/robots.txt`, sitemaps: [`${fixture.origin}/sitemap.xml`] });
  const fetched = new Map(reports.flatMap((r) => (r.kind === 'fetch' ? [[r.result.url.slice(fixture.origin.length), r.result] as const] : [])));
  const home = fetched.get('/')!;
  assert.equal(home.status, 200);
  assert.equal(home.code, 0);
  assert.match(home.checksum ?? '', /^[0-9a-f]{32}$/);
  assert.equal(home.lastModified, Date.parse('Wed, 21 Oct 2015 07:28:00 GMT') / 1000);
  assert.equal(home.etag, '"v1"');
  assert.deepEqual(home.links, [`${fixture.origin}/a`, `${fixture.origin}/b`, `${fixture.origin}/frame`], 'anchors and frames once each, no images');
  assert.deepEqual(fetched.get('/nofollow')!.links, [], 'nofollow: no links');
  const moved: FetchResult = fetched.get('/moved')!;
  assert.equal(moved.code, 1);
  assert.equal(moved.redirect, `${fixture.origin}/a`);
  assert.equal(fetched.get('/missing')!.code, 2404);

  // Reading in slices gives the same reports; the end is where a later read starts.
  const first = readReports(reader, { from: 1, limit: 2 });
  const rest = readReports(reader, { from: first.next, limit: 100 });
  assert.deepEqual([...first.reports, ...rest.reports], reports);
  assert.equal(rest.next, next);
  assert.deepEqual(readReports(reader, { from: next, limit: 100 }).reports, []);
});

test('a bucket with a malformed header is reported to onBad and skipped; without onBad it throws naming the oid', (t) => {
  const state = scratchDir(t);
  const writer = BucketWriter.open(bucketFilePath(state));
  const header = (attrs: Record<string, string>) => {
    const h = new BucketObject();
    for (const [k, v] of Object.entries(attrs)) h.add(k, v);
    return h;
  };
  const good = writer.append(BUCKET_TYPE.V33, encodeBucket(BUCKET_TYPE.V33, { header: header({ U: 'http://a.example/', D: '100', H: '200' }), body: new BucketObject() }));
  const bad = writer.append(BUCKET_TYPE.V33, encodeBucket(BUCKET_TYPE.V33, { header: header({ U: 'http://a.example/x', D: 'yesterday' }), body: new BucketObject() }));
  writer.close();
  const reader = BucketReader.open(bucketFilePath(state));
  t.after(() => reader.close());
  const skipped: number[] = [];
  const { reports } = readReports(reader, { from: 1, limit: 10, onBad: (oid) => skipped.push(oid) });
  assert.deepEqual(reports.map((r) => r.result.oid), [good]);
  assert.deepEqual(skipped, [bad]);
  assert.throws(() => readReports(reader, { from: 1, limit: 10 }), new RegExp(`bucket ${bad}: attribute D is not a whole number`));
});
