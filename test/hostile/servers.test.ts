/**
 * Hostile web servers on loopback, all in one gatherer run beside a
 * well-behaved host: each case must end in its outcome class with the code
 * of gatherer/outcome.ts, cut by the configured timeout or cap rather than
 * hang or blow up memory, and the good host's pages are all fetched.
 *
 * The gatherer runs with max_retries 0, so a temporary failure is recorded
 * at once as given up (1302 → 2302, 1201 → 2201).
 */

import assert from 'node:assert/strict';
import { createBrotliCompress, constants, gzipSync } from 'node:zlib';
import { test } from 'node:test';
import { plainText } from '../../common/bucket/doc-text.js';
import { writePlan } from '../../common/gather/plan-file.js';
import { gathererConfig } from '../../gatherer/config.js';
import { Gatherer } from '../../gatherer/gatherer.js';
import { storedObjects, type StoredObject } from '../helpers/gather-state.js';
import { startFixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { MiB, peakRssGrowth } from '../helpers/memory.js';
import { pump, startRawServer, type RawRoute } from '../helpers/raw-http.js';
import { scratchDir } from '../helpers/paths.js';

const FETCH_TIMEOUT_MS = 3000;

/** A brotli stream of `mib` MiB of zeros, made a MiB at a time. */
async function brotliBomb(mib: number): Promise<Buffer> {
  const encoder = createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
  const parts: Buffer[] = [];
  encoder.on('data', (chunk: Buffer) => parts.push(chunk));
  const zeros = Buffer.alloc(MiB);
  for (let i = 0; i < mib; i++) if (!encoder.write(zeros)) await new Promise((resolve) => encoder.once('drain', resolve));
  await new Promise((resolve) => encoder.end(resolve));
  return Buffer.concat(parts);
}

const html = (body: string | Buffer, headers: Record<string, string> = {}): RouteHandler => (_req, res) =>
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', ...headers }).end(body);

const status200 = (headers: string): string => `HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n${headers}`;

interface Case {
  name: string;
  /** Path of the hostile page on its host. */
  path: string;
  code: number;
  /** What else the stored object must show. */
  check?: (o: StoredObject) => void;
}

const text = (o: StoredObject): string => plainText(o.bucket.body.first('X') ?? Buffer.alloc(0));

test('hostile servers end in their outcome class within the timeouts and caps, in bounded memory, and the crawl goes on for other hosts', async (t) => {
  const state = scratchDir(t);
  const gzipBomb = Buffer.concat(Array.from({ length: 512 }, () => gzipSync(Buffer.alloc(MiB)))); // 512 MiB inflated
  const brBomb = await brotliBomb(256);
  const hugeLine = Buffer.from(`<html><head><title>one line</title></head><body><p>${'word '.repeat(2_000_000)}</p></body></html>`); // 10 MB, no newline
  const deep = `<html><title>deep</title><body>${'<div>'.repeat(100_000)}deepest words${'</div>'.repeat(100_000)}</body></html>`;
  // Each close tag without an open match once searched the whole stack: this page took minutes to scan.
  const unmatched = `<html><title>unmatched</title><body>${'<div>'.repeat(300_000)}${'</x>'.repeat(300_000)}words after</body></html>`;
  const bigRobots = `User-agent: *\nDisallow: /private\n${'# filler comment line to make the file long\n'.repeat(240_000)}`; // 10.5 MB
  const junk = Buffer.alloc(64 * 1024);
  for (let i = 0; i < junk.length; i++) junk[i] = (i * 2654435761) >>> 24; // deterministic binary junk
  const badUtf8 = Buffer.concat([Buffer.from('<meta charset="utf-8"><title>broken bytes</title><p>before '), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82]), Buffer.from(' after')]);

  // HTTP-level hosts (node:http), each on an address of its own.
  const http = {
    bombs: await startFixture({
      address: '127.0.0.121',
      routes: {
        '/gzip-bomb': html(gzipBomb, { 'Content-Encoding': 'gzip' }),
        '/brotli-bomb': html(brBomb, { 'Content-Encoding': 'br' }),
      },
    }),
    big: await startFixture({ address: '127.0.0.122', routes: { '/one-line': html(hugeLine), '/deep': html(deep), '/unmatched': html(unmatched) } }),
    charsets: await startFixture({
      address: '127.0.0.123',
      routes: {
        '/unknown-charset': (_req, res) =>
          res.writeHead(200, { 'Content-Type': 'text/html; charset=x-klingon' }).end('<title>unknown label</title><p>plain words'),
        '/invalid-utf8': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(badUtf8),
      },
    }),
    bigRobots: await startFixture({
      address: '127.0.0.124',
      routes: {
        '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(bigRobots),
        '/private': html('<p>secret'),
        '/open': html('<title>open</title>'),
      },
    }),
    junkRobots: await startFixture({
      address: '127.0.0.125',
      routes: {
        '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(junk),
        '/page': html('<title>after junk</title>'),
      },
    }),
    good: await startFixture({
      address: '127.0.0.126',
      routes: Object.fromEntries([0, 1, 2, 3].map((i) => [`/good/${i}`, html(`<title>good ${i}</title><p>served while others misbehave`)])),
    }),
  };
  // Byte-level hosts (net), for what node:http would not send.
  const raw: Record<string, RawRoute> = {
    '/slowloris': (s) => {
      s.write(status200('Content-Length: 100000\r\n\r\n'));
      pump(s, () => 'x', 300); // a byte every 300 ms: never idle long enough for body_timeout
    },
    '/stalled-body': (s) => s.write(status200('Content-Length: 1000\r\n\r\n<p>then nothing')),
    '/endless-headers': (s) => {
      s.write('HTTP/1.1 200 OK\r\n');
      // 64 KB a write: past undici's header limit at once, even on a loaded event loop the gatherer shares.
      pump(s, () => `X-Junk: ${'j'.repeat(1000)}\r\n`.repeat(64));
    },
    '/slow-headers': (s) => {
      s.write('HTTP/1.1 200 OK\r\n');
      pump(s, () => 'X-Drip: 1\r\n', 200);
    },
    '/short-length': (s) => {
      s.write(status200(`Content-Length: 40\r\nConnection: close\r\n\r\n<title>short</title>${'z'.repeat(10_000)}`));
      s.end();
    },
    '/long-length': (s) => {
      s.write(status200('Content-Length: 100000\r\n\r\n<title>long</title><p>only this'));
      s.end();
    },
  };
  const rawHosts = await Promise.all(Object.entries(raw).map(([path, route], i) => startRawServer(`127.0.0.${130 + i}`, { [path]: route })));
  t.after(() => Promise.all([...Object.values(http).map((f) => f.close()), ...rawHosts.map((r) => r.close())]));

  const origins = new Map<string, string>(Object.keys(raw).map((path, i) => [path, rawHosts[i]!.origin]));
  for (const path of ['/gzip-bomb', '/brotli-bomb']) origins.set(path, http.bombs.origin);
  for (const path of ['/one-line', '/deep', '/unmatched']) origins.set(path, http.big.origin);
  for (const path of ['/unknown-charset', '/invalid-utf8']) origins.set(path, http.charsets.origin);
  for (const path of ['/private', '/open']) origins.set(path, http.bigRobots.origin);
  origins.set('/page', http.junkRobots.origin);

  const cases: Case[] = [
    { name: 'slowloris body (a byte every 300 ms)', path: '/slowloris', code: 2302, check: (o) => assert.match(o.bucket.header.string('!')!, /total deadline/) },
    { name: 'body stalled after a few bytes', path: '/stalled-body', code: 2302, check: (o) => assert.match(o.bucket.header.string('!')!, /body stalled/) },
    { name: 'endless header lines', path: '/endless-headers', code: 2201 },
    { name: 'header lines dripping forever', path: '/slow-headers', code: 2302, check: (o) => assert.match(o.bucket.header.string('!')!, /no response header/) },
    { name: 'Content-Length shorter than the body', path: '/short-length', code: 0, check: (o) => assert.equal(text(o), 'z'.repeat(20), 'the body ends where Content-Length says') },
    { name: 'Content-Length longer than the body, then close', path: '/long-length', code: 2201 },
    { name: 'gzip bomb (512 MiB from 0.5 MB)', path: '/gzip-bomb', code: 0 },
    { name: 'brotli bomb (256 MiB)', path: '/brotli-bomb', code: 0 },
    { name: '10 MB single-line HTML', path: '/one-line', code: 0, check: (o) => assert.match(text(o), /^(word )+/) },
    { name: '100,000 nested tags', path: '/deep', code: 0, check: (o) => assert.match(text(o), /deepest words/) },
    { name: '300,000 close tags matching no open one', path: '/unmatched', code: 0, check: (o) => assert.match(text(o), /words after/) },
    { name: 'unknown charset label', path: '/unknown-charset', code: 0, check: (o) => assert.match(text(o), /plain words/) },
    { name: 'invalid UTF-8 bytes', path: '/invalid-utf8', code: 0, check: (o) => assert.match(text(o), /before .*after/) },
    { name: '10 MB robots.txt: its first rules hold', path: '/private', code: 2304 },
    { name: '10 MB robots.txt: allowed page', path: '/open', code: 0 },
    { name: 'binary junk robots.txt: no rules', path: '/page', code: 0 },
  ];
  const good = [0, 1, 2, 3].map((i) => `${http.good.origin}/good/${i}`);
  writePlan(state, [...cases.map((c) => ({ url: `${origins.get(c.path)!}${c.path}`, priority: 1 })), ...good.map((url) => ({ url, priority: 1 }))]);

  const config = gathererConfig.parse({
    allow_private_addresses: true,
    min_delay: '0s',
    sync_interval: '200ms',
    max_retries: 0,
    headers_timeout: '1s',
    body_timeout: '1s',
    fetch_timeout: `${FETCH_TIMEOUT_MS}ms`,
  });
  const began = Date.now();
  const { growth } = await peakRssGrowth(async () => {
    const g = await Gatherer.open(state, config);
    await g.run({ untilIdle: true });
  });
  const seconds = (Date.now() - began) / 1000;
  t.diagnostic(`${cases.length} hostile cases and ${good.length} good pages in ${seconds.toFixed(1)} s; peak RSS growth ${(growth / MiB).toFixed(0)} MiB`);

  const stored = storedObjects(state).filter((o) => !o.robots);
  const at = (url: string): StoredObject => {
    const found = stored.filter((o) => o.url === url);
    assert.equal(found.length, 1, `${url}: one object expected, ${found.length} stored`);
    return found[0]!;
  };
  for (const c of cases) {
    const o = at(`${origins.get(c.path)!}${c.path}`);
    assert.equal(o.code, c.code, `${c.name}: code ${o.code} (${o.bucket.header.string('!') ?? 'ok'}), expected ${c.code}`);
    c.check?.(o);
  }
  for (const url of good) assert.equal(at(url).code, 0, `${url}: the good host was not served`);
  assert.equal(http.bigRobots.requests.some((r) => r.path === '/private'), false, 'a path disallowed by the big robots.txt was requested');
  // Bounds: the timeouts cut every stall (no hang), and memory stays far below what the bombs inflate to
  // (768 MiB). The growth includes starting the parse worker, whose language detector alone holds some
  // 110 MiB; it measured 368–410 MiB here, so 400 was no margin.
  assert.ok(seconds < 120, `the run took ${seconds} s: something waited past its timeout`);
  assert.ok(growth < 450 * MiB, `peak RSS grew by ${(growth / MiB).toFixed(0)} MiB`);
});
