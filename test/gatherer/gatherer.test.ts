/**
 * The gatherer against real HTTP servers on 127.0.0.x: politeness as the
 * servers see it, robots.txt, the content cases, and what lands in the
 * buckets and ARC files.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { readArc } from '../../common/archive/arc-read.js';
import { httpPayloadOffset } from '../../common/archive/digest.js';
import { plainText } from '../../common/bucket/doc-text.js';
import { writePlan } from '../../common/gather/plan-file.js';
import { gathererConfig, type GathererConfig } from '../../gatherer/config.js';
import { Gatherer } from '../../gatherer/gatherer.js';
import { arcRecords, storedObjects, type StoredObject } from '../helpers/gather-state.js';
import { startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

function config(overrides: Record<string, unknown> = {}): GathererConfig {
  return gathererConfig.parse({ allow_private_addresses: true, min_delay: '0s', sync_interval: '200ms', ...overrides });
}

/** A page answered after `ms`, recording when the answer was finished. */
function page(body: string, ms = 0, finished?: number[]): RouteHandler {
  return (_req: IncomingMessage, res: ServerResponse) => {
    setTimeout(() => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(body, () => finished?.push(Date.now()));
    }, ms);
  };
}

async function gather(state: string, cfg: GathererConfig): Promise<Gatherer> {
  const g = await Gatherer.open(state, cfg);
  await g.run({ untilIdle: true });
  return g;
}

function byUrl(objects: StoredObject[]): Map<string, StoredObject[]> {
  const out = new Map<string, StoredObject[]>();
  for (const o of objects) out.set(o.url, [...(out.get(o.url) ?? []), o]);
  return out;
}

test('hosts on different IPs are fetched in parallel, one request at a time per IP, never closer than min_delay', async (t) => {
  const state = scratchDir(t);
  const delay = 150;
  const hosts: Array<{ fixture: Fixture; finished: number[] }> = [];
  for (const address of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) {
    const finished: number[] = [];
    const routes: Record<string, RouteHandler> = {};
    for (let i = 0; i < 6; i++) routes[`/p/${i}`] = page(`<title>page ${i} on ${address}</title><p>hello ${i}`, 20, finished);
    const fixture = await startFixture({ address, routes });
    t.after(() => fixture.close());
    hosts.push({ fixture, finished });
  }
  writePlan(state, hosts.flatMap(({ fixture }) => [...Array(6).keys()].map((i) => ({ url: `${fixture.origin}/p/${i}`, priority: i }))));
  const began = Date.now();
  await gather(state, config({ min_delay: `${delay}ms` }));
  const elapsed = Date.now() - began;

  let spans = 0;
  for (const { fixture, finished } of hosts) {
    const arrivals = fixture.requests.map((r) => r.at);
    assert.deepEqual(fixture.requests.map((r) => r.path).sort(), ['/p/0', '/p/1', '/p/2', '/p/3', '/p/4', '/p/5', '/robots.txt']);
    assert.equal(fixture.requests[0]!.path, '/robots.txt', 'robots.txt comes first');
    // robots.txt answers 404 at once (no finish time recorded); pages are recorded as they finish.
    for (let i = 1; i < arrivals.length; i++) {
      assert.ok(arrivals[i]! - arrivals[i - 1]! >= delay, `${fixture.address}: requests ${i - 1} and ${i} only ${arrivals[i]! - arrivals[i - 1]!} ms apart`);
      if (i >= 2) assert.ok(arrivals[i]! >= finished[i - 2]!, `${fixture.address}: request ${i} overlapped the one before`);
    }
    spans += arrivals.at(-1)! - arrivals[0]!;
  }
  assert.ok(elapsed < spans * 0.7, `hosts were not fetched in parallel: ${elapsed} ms in all, ${spans} ms of per-host spans`);

  const objects = storedObjects(state);
  const pages = objects.filter((o) => !o.robots);
  assert.equal(pages.length, 18);
  assert.ok(pages.every((o) => o.status === 200 && o.code === 0));
  assert.equal(objects.filter((o) => o.robots).length, 3);
});

test('names pinned by gatherer.hosts_file are fetched at their address with their own Host; two names on one address share its politeness', async (t) => {
  const state = scratchDir(t);
  const delay = 120;
  const routes: Record<string, RouteHandler> = {};
  for (let i = 0; i < 3; i++) routes[`/p/${i}`] = page(`<title>page ${i}</title><p>pinned ${i}`);
  const shared = await startFixture({ address: '127.0.0.31', routes });
  const alone = await startFixture({ address: '127.0.0.32', routes });
  t.after(() => Promise.all([shared.close(), alone.close()]));
  const hostsFile = join(scratchDir(t), 'hosts');
  writeFileSync(hostsFile, `127.0.0.31 a.sim.test b.sim.test\n127.0.0.32 c.sim.test\n`);
  const names = { 'a.sim.test': shared, 'b.sim.test': shared, 'c.sim.test': alone };
  writePlan(state, Object.entries(names).flatMap(([name, fixture]) => [0, 1, 2].map((i) => ({ url: `http://${name}:${fixture.port}/p/${i}`, priority: i }))));
  const g = await gather(state, config({ min_delay: `${delay}ms`, hosts_file: hostsFile }));
  assert.equal(g.status().dnsLookups, 0, 'every name was answered from the hosts file');

  const hostsSeen = (fixture: Fixture): string[] => fixture.requests.filter((r) => r.path !== '/robots.txt').map((r) => fixture.header(r, 'host')!.split(':')[0]!);
  assert.deepEqual(hostsSeen(shared).sort(), ['a.sim.test', 'a.sim.test', 'a.sim.test', 'b.sim.test', 'b.sim.test', 'b.sim.test']);
  assert.deepEqual(hostsSeen(alone), ['c.sim.test', 'c.sim.test', 'c.sim.test']);
  const arrivals = shared.requests.map((r) => r.at);
  for (let i = 1; i < arrivals.length; i++) assert.ok(arrivals[i]! - arrivals[i - 1]! >= delay, `127.0.0.31: requests ${i - 1} and ${i} only ${arrivals[i]! - arrivals[i - 1]!} ms apart`);
  const stored = byUrl(storedObjects(state).filter((o) => !o.robots));
  for (const [name, fixture] of Object.entries(names)) for (const i of [0, 1, 2]) assert.ok(stored.has(`http://${name}:${fixture.port}/p/${i}`), `${name} page ${i} stored under its name`);
});

test('robots.txt: a disallowed path is never requested, Crawl-delay is honoured, a 503 robots.txt shuts its host', async (t) => {
  const state = scratchDir(t);
  const polite = await startFixture({
    address: '127.0.0.5',
    routes: {
      '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nDisallow: /private\nCrawl-delay: 2\n'),
      '/a': page('<p>a'),
      '/b': page('<p>b'),
      '/private/x': page('<p>secret'),
    },
  });
  const shut = await startFixture({
    address: '127.0.0.6',
    routes: {
      '/robots.txt': (_req, res) => res.writeHead(503, { 'Content-Type': 'text/plain' }).end('busy'),
      '/c': page('<p>c'),
    },
  });
  t.after(() => Promise.all([polite.close(), shut.close()]));
  writePlan(state, [
    { url: `${polite.origin}/a`, priority: 1 },
    { url: `${polite.origin}/private/x`, priority: 1 },
    { url: `${polite.origin}/b`, priority: 1 },
    { url: `${shut.origin}/c`, priority: 1 },
  ]);
  await gather(state, config({ min_delay: '100ms' }));

  assert.deepEqual(polite.requests.map((r) => r.path), ['/robots.txt', '/a', '/b']);
  for (let i = 1; i < polite.requests.length; i++) {
    const gap = polite.requests[i]!.at - polite.requests[i - 1]!.at;
    assert.ok(gap >= 2000, `Crawl-delay 2 not honoured: ${gap} ms between requests`);
  }
  assert.deepEqual(shut.requests.map((r) => r.path), ['/robots.txt']);

  const stored = byUrl(storedObjects(state));
  assert.equal(stored.get(`${polite.origin}/private/x`)?.[0]?.code, 2304);
  assert.equal(stored.get(`${polite.origin}/private/x`)?.[0]?.arc, undefined, 'nothing fetched, nothing archived');
  assert.equal(stored.get(`${shut.origin}/c`), undefined, 'a URL of a shut host is neither fetched nor given up');
  const robots = stored.get(`${shut.origin}/robots.txt`)?.[0];
  assert.equal(robots?.bucket.header.string('Q'), 'disallow-all');
});

test('content: charsets come out as text, a large body is cut at the cap, a gzip bomb is contained, a stall times out, a redirect is recorded', async (t) => {
  const state = scratchDir(t);
  const czech = Buffer.from('50F8ED6C699A209E6C75 9D6F75E86BFD206BF9F2'.replace(/ /g, ''), 'hex');
  const japanese = Buffer.from('93FA967B8CEA', 'hex');
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
  const fixture = await startFixture({
    address: '127.0.0.7',
    routes: {
      '/cz': (_req, res) =>
        res.writeHead(200, { 'Content-Type': 'text/html; charset=windows-1250' }).end(Buffer.concat([Buffer.from('<title>cz</title><p>'), czech])),
      '/jp': (_req, res) =>
        res.writeHead(200, { 'Content-Type': 'text/html' }).end(Buffer.concat([Buffer.from('<meta charset="Shift_JIS"><title>jp</title><p>'), japanese])),
      '/bom': (_req, res) =>
        res
          .writeHead(200, { 'Content-Type': 'text/html' })
          .end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<meta charset="windows-1252"><p>Žluťoučký kůň', 'utf8')])),
      '/big': (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        let sent = 0;
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        const more = (): void => {
          while (sent < 50 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) {
              res.once('drain', more);
              return;
            }
          }
          res.end();
        };
        more();
      },
      '/bomb': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Encoding': 'gzip' }).end(bomb),
      '/stall': (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.write('<p>and then nothing');
      },
      '/moved': (_req, res) => res.writeHead(301, { Location: '/cz' }).end(),
    },
  });
  t.after(() => fixture.close());
  const paths = ['/cz', '/jp', '/bom', '/big', '/bomb', '/stall', '/moved'];
  writePlan(state, paths.map((p) => ({ url: `${fixture.origin}${p}`, priority: 1 })));
  const before = process.memoryUsage().rss;
  await gather(state, config({ max_body_size: '1MiB', max_decoded_size: '2MiB', body_timeout: '500ms', max_retries: 0 }));
  assert.ok(process.memoryUsage().rss - before < 400 * 1024 * 1024, 'the gzip bomb or the big body blew up memory');

  const stored = byUrl(storedObjects(state));
  const get = (p: string): StoredObject => {
    const found = stored.get(`${fixture.origin}${p}`);
    assert.equal(found?.length, 1, `${p}: one object expected`);
    return found![0]!;
  };
  const text = (o: StoredObject): string => plainText(o.bucket.body.first('X') ?? Buffer.alloc(0));
  assert.match(text(get('/cz')), /Příliš žluťoučký kůň/);
  assert.equal(get('/cz').bucket.header.string('E'), 'windows-1250');
  assert.match(text(get('/jp')), /日本語/);
  assert.equal(get('/jp').bucket.header.string('E'), 'shift_jis');
  assert.match(text(get('/bom')), /Žluťoučký kůň/);
  assert.equal(get('/big').code, 2305);
  assert.equal(get('/big').arc !== undefined, true, 'the part received is archived');
  assert.equal(get('/bomb').status, 200);
  assert.equal(get('/stall').code, 2302, 'the stall is a timeout, given up with max_retries 0');
  const moved = get('/moved');
  assert.equal(moved.code, 1, 'redirect: code 1, as the original');
  assert.equal(moved.status, 301);
  assert.equal(moved.bucket.body.string('Y'), `${fixture.origin}/cz`);
  assert.equal(fixture.requests.filter((r) => r.path === '/cz').length, 1, 'the redirect is recorded, not followed');

  // Every archived object points at a record of its own URL, and every record has its object.
  const records = arcRecords(state);
  const pointed = storedObjects(state).filter((o) => o.arc !== undefined);
  assert.equal(records.length, pointed.length);
  for (const o of pointed) {
    const record = records.find((r) => r.file === o.arc!.file && r.offset === o.arc!.offset);
    assert.equal(record?.url, o.url);
    assert.equal(record?.length, o.arc!.length);
    // C is the MD5 of the archived body: the parse worker makes both from the same bytes.
    if (o.url.endsWith('/robots.txt')) continue; // robots.txt buckets carry the rules, no C
    const content = [...readArc(join(state, 'gather', 'arc', o.arc!.file))].find((r) => r.offset === o.arc!.offset)!.content;
    assert.equal(o.bucket.header.string('C'), createHash('md5').update(content.subarray(httpPayloadOffset(content))).digest('hex'), `${o.url}: C`);
  }
});
