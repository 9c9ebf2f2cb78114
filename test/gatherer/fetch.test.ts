import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createTcpServer } from 'node:net';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';
import { gzipSync } from 'node:zlib';
import { isSherlockError } from '../../common/errors.js';
import { Fetcher, MAX_RETRY_AFTER_S, retryAfterSeconds, type FetcherOptions, type FetchResponse } from '../../gatherer/fetch.js';
import { typeLimit } from '../../gatherer/content-type.js';
import { closedPort, startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

const MiB = 1024 * 1024;
const USER_AGENT = 'sherlock-test/1 (+https://sherlock.invalid/bot)';

function fetcher(t: TestContext, options: Partial<FetcherOptions> = {}): Fetcher {
  const f = new Fetcher({
    userAgent: USER_AGENT,
    connectTimeoutMs: 300,
    headersTimeoutMs: 300,
    bodyTimeoutMs: 300,
    totalTimeoutMs: 3000,
    maxBodySize: MiB,
    typeLimits: [],
    maxConnections: 8,
    ...options,
  });
  t.after(() => f.close());
  return f;
}

async function fixture(t: TestContext, address: string, routes: Record<string, RouteHandler>): Promise<Fixture> {
  const server = await startFixture({ address, routes });
  t.after(() => server.close());
  return server;
}

/** The header part and body of an ARC content block. */
function splitArc(response: FetchResponse): { head: string[]; body: Buffer } {
  assert.ok(response.arcContent !== undefined, 'arcContent expected');
  const end = response.arcContent.indexOf('\r\n\r\n');
  return { head: response.arcContent.subarray(0, end).toString('latin1').split('\r\n'), body: response.arcContent.subarray(end + 4) };
}

test('a 200 page keeps its header fields in received order and case, and the request names us', async (t) => {
  const server = await fixture(t, '127.0.0.21', {
    '/page': (_req, res) => {
      res.sendDate = false;
      res.writeHead(200, 'OK', ['X-First', 'a', 'content-TYPE', 'text/html', 'X-Dup', '1', 'X-Dup', '2', 'Content-Length', '5']);
      res.end('hello');
    },
  });
  const response = await fetcher(t).fetch({ url: `${server.origin}/page`, address: server.address });
  assert.equal(response.outcome, 'ok');
  assert.equal(response.code, 0);
  assert.equal(response.message, 'HTTP 200 OK');
  assert.equal(response.status, 200);
  assert.equal(response.httpVersion, '1.1');
  assert.equal(response.truncated, false);
  assert.equal(response.body.toString(), 'hello');
  assert.deepEqual(response.headers.slice(0, 5), [
    ['X-First', 'a'],
    ['content-TYPE', 'text/html'],
    ['X-Dup', '1'],
    ['X-Dup', '2'],
    ['Content-Length', '5'],
  ]);
  const expected = `HTTP/1.1 200 OK\r\n${response.headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\nhello`;
  assert.equal(response.arcContent?.toString('latin1'), expected);

  const [request] = server.requests;
  assert.equal(request?.method, 'GET');
  assert.equal(server.header(request, 'user-agent'), USER_AGENT);
  assert.equal(server.header(request, 'accept'), 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8');
  assert.equal(server.header(request, 'accept-encoding'), undefined);
  assert.equal(server.header(request, 'host'), `127.0.0.21:${server.port}`);
});

test('a chunked body is stored without Transfer-Encoding and with the Content-Length of the stored body', async (t) => {
  const server = await fixture(t, '127.0.0.22', {
    '/chunked': (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('abc');
      setTimeout(() => res.end('defg'), 20);
    },
  });
  const response = await fetcher(t).fetch({ url: `${server.origin}/chunked`, address: server.address });
  assert.equal(response.outcome, 'ok');
  assert.ok(response.headers.some(([n, v]) => n === 'Transfer-Encoding' && v === 'chunked'), 'received chunked');
  const { head, body } = splitArc(response);
  assert.equal(head[0], 'HTTP/1.1 200 OK');
  assert.ok(!head.some((line) => /^transfer-encoding:/i.test(line)));
  assert.deepEqual(head.filter((line) => /^content-length:/i.test(line)), ['Content-Length: 7']);
  assert.equal(body.toString(), 'abcdefg');
  assert.equal(response.body.toString(), 'abcdefg');
});

test('a 404 is http_4xx 2404 and is still stored', async (t) => {
  const server = await fixture(t, '127.0.0.23', {});
  const response = await fetcher(t).fetch({ url: `${server.origin}/missing`, address: server.address });
  assert.equal(response.outcome, 'http_4xx');
  assert.equal(response.code, 2404);
  assert.equal(response.message, 'HTTP 404 Not Found');
  assert.equal(splitArc(response).head[0], 'HTTP/1.1 404 Not Found');
  assert.equal(response.body.toString(), 'no route\n');
});

test('a 503 with Retry-After: 120 is http_5xx 1503 with retryAfter 120', async (t) => {
  const server = await fixture(t, '127.0.0.24', {
    '/busy': (_req, res) => res.writeHead(503, { 'Retry-After': '120' }).end('later'),
  });
  const response = await fetcher(t).fetch({ url: `${server.origin}/busy`, address: server.address });
  assert.equal(response.outcome, 'http_5xx');
  assert.equal(response.code, 1503);
  assert.equal(response.retryAfter, 120);
  assert.ok(response.arcContent !== undefined);
});

test('a 429 with an HTTP-date Retry-After is http_4xx 1429 with the seconds until then', async (t) => {
  const server = await fixture(t, '127.0.0.25', {
    '/slow-down': (_req, res) => res.writeHead(429, { 'Retry-After': new Date(Date.now() + 90_000).toUTCString() }).end(),
  });
  const response = await fetcher(t).fetch({ url: `${server.origin}/slow-down`, address: server.address });
  assert.equal(response.outcome, 'http_4xx');
  assert.equal(response.code, 1429);
  assert.ok(response.retryAfter !== undefined && response.retryAfter >= 88 && response.retryAfter <= 91, `retryAfter ${response.retryAfter}`);
});

test('Retry-After reads delta-seconds and HTTP-dates and ignores anything else', () => {
  const now = Date.parse('Sun, 06 Nov 1994 08:49:37 GMT');
  assert.equal(retryAfterSeconds('0', now), 0);
  assert.equal(retryAfterSeconds(' 30 ', now), 30);
  assert.equal(retryAfterSeconds('Sun, 06 Nov 1994 08:50:37 GMT', now), 60);
  assert.equal(retryAfterSeconds('Sunday, 06-Nov-94 08:50:37 GMT', now), 60);
  assert.equal(retryAfterSeconds('Sun Nov  6 08:50:37 1994', now), 60);
  assert.equal(retryAfterSeconds('Sun, 06 Nov 1994 08:00:00 GMT', now), 0);
  assert.equal(retryAfterSeconds('soon', now), undefined);
  assert.equal(retryAfterSeconds('-5', now), undefined);
  assert.equal(retryAfterSeconds(undefined, now), undefined);
});

test('Retry-After past 2^32 - 1 seconds, in digits or as a date, is read as 2^32 - 1 (never Infinity or a float)', () => {
  const now = Date.parse('Sun, 06 Nov 1994 08:49:37 GMT');
  assert.equal(retryAfterSeconds('999999999999', now), MAX_RETRY_AFTER_S);
  assert.equal(retryAfterSeconds('9'.repeat(400), now), MAX_RETRY_AFTER_S);
  assert.equal(retryAfterSeconds(String(MAX_RETRY_AFTER_S - 1), now), MAX_RETRY_AFTER_S - 1);
  assert.equal(retryAfterSeconds('Fri, 31 Dec 9999 23:59:59 GMT', now), MAX_RETRY_AFTER_S);
});

test('a 301 with a relative Location is a redirect to the absolute canonical URL; no Location is said so', async (t) => {
  const server = await fixture(t, '127.0.0.26', {
    '/a/d/page': (_req, res) => res.writeHead(301, { Location: '../b/%7ec?x=1#frag' }).end(),
    '/nowhere': (_req, res) => res.writeHead(302).end(),
  });
  const f = fetcher(t);
  const site = `http://sherlock-test.invalid:${server.port}`;
  const moved = await f.fetch({ url: `${site}/a/d/page`, address: server.address });
  assert.equal(moved.outcome, 'redirect');
  assert.equal(moved.code, 1);
  assert.equal(moved.location, `${site}/a/b/~c?x=1`);
  assert.equal(server.requests.length, 1, 'the redirect is not followed');
  assert.ok(moved.arcContent !== undefined);

  const bare = await f.fetch({ url: `${site}/nowhere`, address: server.address });
  assert.equal(bare.outcome, 'redirect');
  assert.equal(bare.location, undefined);
  assert.equal(bare.message, 'HTTP 302 Found without Location');
});

test('conditional headers are sent when given, and a 304 is not_modified 3', async (t) => {
  const lastModified = 'Wed, 21 Oct 2015 07:28:00 GMT';
  const server = await fixture(t, '127.0.0.27', {
    '/doc': (req, res) => {
      const fresh = req.headers['if-none-match'] === '"v1"' && req.headers['if-modified-since'] === lastModified;
      if (fresh) res.writeHead(304, { ETag: '"v1"' }).end();
      else res.writeHead(200, { ETag: '"v1"', 'Last-Modified': lastModified }).end('body');
    },
  });
  const f = fetcher(t);
  const url = `${server.origin}/doc`;
  const again = await f.fetch({ url, address: server.address, ifNoneMatch: '"v1"', ifModifiedSince: lastModified });
  assert.equal(again.outcome, 'not_modified');
  assert.equal(again.code, 3);
  assert.equal(again.body.length, 0);
  assert.ok(splitArc(again).head.includes('Content-Length: 0'));
  const first = await f.fetch({ url, address: server.address });
  assert.equal(first.outcome, 'ok');
  assert.equal(server.header(server.requests[1]!, 'if-none-match'), undefined);
});

test('a 50 MB body is cut at exactly the cap, quickly, without reading the rest, and the host stays fetchable', async (t) => {
  const chunk = 100_000; // does not divide 1 MiB, so the cap falls inside a chunk
  let written = 0;
  const server = await fixture(t, '127.0.0.28', {
    '/huge': (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(50_000_000) });
      let closed = false;
      res.on('close', () => (closed = true));
      const pump = (): void => {
        while (!closed && written < 50_000_000) {
          const block = Buffer.alloc(chunk, written / chunk);
          written += chunk;
          if (!res.write(block)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!closed) res.end();
      };
      pump();
    },
    '/small': (_req, res) => res.end('ok'),
  });
  const f = fetcher(t);
  const response = await f.fetch({ url: `${server.origin}/huge`, address: server.address });
  assert.equal(response.outcome, 'too_large');
  assert.equal(response.code, 2305);
  assert.equal(response.truncated, true);
  assert.equal(response.message, 'HTTP 200 OK, body cut at 1048576 bytes');
  assert.equal(response.body.length, MiB);
  assert.equal(response.body[MiB - 1], Math.floor((MiB - 1) / chunk));
  assert.ok(response.elapsedMs < 2000, `took ${response.elapsedMs} ms`);
  const { head, body } = splitArc(response);
  assert.ok(head.includes(`Content-Length: ${MiB}`));
  assert.equal(body.length, MiB);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.ok(written < 20_000_000, `server wrote ${written} bytes`);

  const next = await f.fetch({ url: `${server.origin}/small`, address: server.address });
  assert.equal(next.outcome, 'ok');
  assert.equal(next.body.toString(), 'ok');
});

test('type_limits: a type gets its own body cap, a type capped at 0 is not fetched, an error page keeps max_body_size', async (t) => {
  const big = Buffer.alloc(3 * MiB, 0x25);
  const server = await fixture(t, '127.0.0.61', {
    '/doc.pdf': (_req, res) => res.writeHead(200, { 'Content-Type': 'application/pdf' }).end(big),
    '/photo.png': (_req, res) => res.writeHead(200, { 'Content-Type': 'image/png' }).end(big),
    '/page': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(big),
    '/missing.pdf': (_req, res) => res.writeHead(404, { 'Content-Type': 'application/pdf' }).end(big),
  });
  const limits = [typeLimit.parse('application/pdf 4MiB'), typeLimit.parse('image/* 0')];
  const f = fetcher(t, { typeLimits: limits });
  const fetch = (path: string) => f.fetch({ url: `${server.origin}${path}`, address: server.address });
  const pdf = await fetch('/doc.pdf');
  assert.equal(pdf.outcome, 'ok', pdf.message);
  assert.equal(pdf.body.length, 3 * MiB);
  const png = await fetch('/photo.png');
  assert.equal(png.outcome, 'unsupported_type');
  assert.equal(png.code, 2306);
  assert.equal(png.message, 'image/png: not fetched (gatherer.type_limits)');
  assert.equal(png.body.length, 0);
  assert.ok(splitArc(png).head.includes('Content-Length: 0'), 'the header archived, saying no body');
  const page = await fetch('/page');
  assert.equal(page.outcome, 'too_large');
  assert.equal(page.message, 'HTTP 200 OK, body cut at 1048576 bytes');
  const missing = await fetch('/missing.pdf');
  assert.equal(missing.body.length, MiB, 'an error page is cut at max_body_size whatever its type');
  assert.throws(() => typeLimit.parse('application/pdf lots'), /MIME-TYPE SIZE/);
  assert.throws(() => typeLimit.parse('pdf 1MiB'), /MIME-TYPE SIZE/);
  assert.deepEqual(typeLimit.parse(' Application/Vnd.Oasis.Opendocument.*  64MiB '), { pattern: 'application/vnd.oasis.opendocument.*', bytes: 64 * MiB });
});

test('a body that stalls after the header times out by the body timeout', async (t) => {
  const server = await fixture(t, '127.0.0.29', {
    '/stall': (_req, res) => {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('partial');
    },
  });
  const response = await fetcher(t, { bodyTimeoutMs: 300 }).fetch({ url: `${server.origin}/stall`, address: server.address });
  assert.equal(response.outcome, 'timeout');
  assert.equal(response.code, 1302);
  assert.equal(response.message, 'body stalled for 300 ms');
  assert.equal(response.status, 200);
  assert.equal(response.arcContent, undefined);
  assert.equal(response.body.length, 0);
  assert.ok(response.elapsedMs >= 290 && response.elapsedMs < 800, `took ${response.elapsedMs} ms`);
});

test('a server that accepts and never answers times out by the headers timeout', async (t) => {
  const server = await fixture(t, '127.0.0.30', { '/silent': () => {} });
  const response = await fetcher(t, { headersTimeoutMs: 300 }).fetch({ url: `${server.origin}/silent`, address: server.address });
  assert.equal(response.outcome, 'timeout');
  assert.equal(response.code, 1302);
  assert.equal(response.message, 'no response header within 300 ms');
  assert.equal(response.status, undefined);
  assert.equal(response.arcContent, undefined);
  assert.ok(response.elapsedMs >= 290 && response.elapsedMs < 800, `took ${response.elapsedMs} ms`);
});

test('a body trickling forever ends at the total deadline', async (t) => {
  const server = await fixture(t, '127.0.0.31', {
    '/trickle': (_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(timer));
    },
  });
  const response = await fetcher(t, { totalTimeoutMs: 600 }).fetch({ url: `${server.origin}/trickle`, address: server.address });
  assert.equal(response.outcome, 'timeout');
  assert.equal(response.message, 'total deadline of 600 ms passed');
  assert.ok(response.elapsedMs >= 590 && response.elapsedMs < 1100, `took ${response.elapsedMs} ms`);
});

test("the caller's abort resolves with timeout \"aborted\", at once", async (t) => {
  const server = await fixture(t, '127.0.0.32', { '/silent': () => {} });
  const f = fetcher(t, { headersTimeoutMs: 5000 });
  const url = `${server.origin}/silent`;
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const response = await f.fetch({ url, address: server.address }, controller.signal);
  assert.equal(response.outcome, 'timeout');
  assert.equal(response.code, 1302);
  assert.equal(response.message, 'aborted');
  assert.ok(response.elapsedMs < 1000, `took ${response.elapsedMs} ms`);

  const before = server.requests.length;
  const early = await f.fetch({ url, address: server.address }, AbortSignal.abort());
  assert.equal(early.message, 'aborted');
  assert.equal(server.requests.length, before, 'nothing sent');
});

test('a refused connection is connect 1201', async (t) => {
  const port = await closedPort('127.0.0.33');
  const response = await fetcher(t).fetch({ url: `http://127.0.0.33:${port}/`, address: '127.0.0.33' });
  assert.equal(response.outcome, 'connect');
  assert.equal(response.code, 1201);
  assert.equal(response.message, `connect ECONNREFUSED 127.0.0.33:${port}`);
  assert.equal(response.arcContent, undefined);
});

test('a connection reset or closed mid-body is connect 1201 without arcContent', async (t) => {
  const half = Buffer.alloc(50_000, 'x');
  const server = await fixture(t, '127.0.0.34', {
    '/reset': (req, res) => {
      res.writeHead(200, { 'Content-Length': '100000' });
      res.write(half, () => setTimeout(() => req.socket.resetAndDestroy(), 20));
    },
    '/closed': (req, res) => {
      res.writeHead(200, { 'Content-Length': '100000' });
      res.write(half, () => setTimeout(() => req.socket.end(), 20));
    },
  });
  const f = fetcher(t);
  for (const path of ['/reset', '/closed']) {
    const response = await f.fetch({ url: `${server.origin}${path}`, address: server.address });
    assert.equal(response.outcome, 'connect', `${path}: ${response.message}`);
    assert.equal(response.code, 1201);
    assert.equal(response.status, 200);
    assert.equal(response.arcContent, undefined);
  }
});

test('a server that does not speak HTTP is connect 1201', async (t) => {
  const server = createTcpServer((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n'));
  server.listen(0, '127.0.0.35');
  await once(server, 'listening');
  t.after(() => server.close());
  const port = (server.address() as { port: number }).port;
  const response = await fetcher(t).fetch({ url: `http://127.0.0.35:${port}/`, address: '127.0.0.35' });
  assert.equal(response.outcome, 'connect');
  assert.equal(response.code, 1201);
});

test('a gzip body the server sends unprompted is kept as sent', async (t) => {
  const gz = gzipSync('hello hello hello');
  const server = await fixture(t, '127.0.0.36', {
    '/gz': (_req, res) => res.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Type': 'text/plain' }).end(gz),
  });
  const response = await fetcher(t).fetch({ url: `${server.origin}/gz`, address: server.address });
  assert.equal(response.outcome, 'ok');
  assert.deepEqual(response.body, gz);
  assert.deepEqual(splitArc(response).body, gz);
  assert.equal(server.header(server.requests[0]!, 'accept-encoding'), undefined);
});

test('the connection goes to the given address while Host names the URL host, which need not resolve', async (t) => {
  const server = await fixture(t, '127.0.0.37', { '/where': (_req, res) => res.end('here') });
  const url = `http://sherlock-test.invalid:${server.port}/where?q=1`;
  const response = await fetcher(t).fetch({ url, address: '127.0.0.37' });
  assert.equal(response.outcome, 'ok', response.message);
  assert.equal(response.url, url);
  assert.equal(response.address, '127.0.0.37');
  assert.equal(response.body.toString(), 'here');
  const [request] = server.requests;
  assert.equal(request?.path, '/where?q=1');
  assert.equal(server.header(request, 'host'), `sherlock-test.invalid:${server.port}`);
});

test('an IPv6 address is connected to as well', async (t) => {
  let server: Fixture;
  try {
    server = await startFixture({ address: '::1', routes: { '/six': (_req, res) => res.end('six') } });
  } catch {
    t.skip('no IPv6 loopback here');
    return;
  }
  t.after(() => server.close());
  const response = await fetcher(t).fetch({ url: `http://sherlock-test.invalid:${server.port}/six`, address: '::1' });
  assert.equal(response.outcome, 'ok', response.message);
  assert.equal(response.body.toString(), 'six');
});

test('a self-signed certificate is tls 2202, checked against the URL host sent as SNI', async (t) => {
  const dir = scratchDir(t);
  const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1', '-keyout', keyFile, '-out', certFile], {
    stdio: 'ignore',
  });
  const servernames: string[] = [];
  const server = await startFixture({
    address: '127.0.0.38',
    routes: { '/': (_req, res) => res.end('secret') },
    tls: {
      key: readFileSync(keyFile),
      cert: readFileSync(certFile),
      SNICallback: (name, callback) => {
        servernames.push(name);
        callback(null);
      },
    },
  });
  t.after(() => server.close());
  const response = await fetcher(t, { connectTimeoutMs: 2000 }).fetch({ url: `https://localhost:${server.port}/`, address: server.address });
  assert.equal(response.outcome, 'tls', response.message);
  assert.equal(response.code, 2202);
  assert.match(response.message, /self[- ]signed/);
  assert.deepEqual(servernames, ['localhost']);
  assert.equal(server.requests.length, 0);
});

test('no more requests than maxConnections are in flight at once', async (t) => {
  const slow: RouteHandler = (_req, res) => void setTimeout(() => res.end('slow'), 200);
  const one = await fixture(t, '127.0.0.39', { '/': slow });
  const two = await fixture(t, '127.0.0.40', { '/': slow });
  const f = fetcher(t, { maxConnections: 1 });
  const [a, b] = await Promise.all([
    f.fetch({ url: `${one.origin}/`, address: one.address }),
    f.fetch({ url: `${two.origin}/`, address: two.address }),
  ]);
  assert.equal(a.outcome, 'ok');
  assert.equal(b.outcome, 'ok');
  const gap = two.requests[0]!.at - one.requests[0]!.at;
  assert.ok(gap >= 180, `second request ${gap} ms after the first`);
});

test('a fetch waiting for a slot can be aborted, and never reaches the server', async (t) => {
  const busy = await fixture(t, '127.0.0.41', { '/': () => {} });
  const idle = await fixture(t, '127.0.0.42', { '/': (_req, res) => res.end('never asked') });
  const f = fetcher(t, { maxConnections: 1, headersTimeoutMs: 1000 });
  const holder = f.fetch({ url: `${busy.origin}/`, address: busy.address });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  const waiter = await f.fetch({ url: `${idle.origin}/`, address: idle.address }, controller.signal);
  assert.equal(waiter.message, 'aborted');
  assert.equal(idle.requests.length, 0);
  assert.equal((await holder).outcome, 'timeout');
  const after = await f.fetch({ url: `${idle.origin}/`, address: idle.address });
  assert.equal(after.outcome, 'ok', 'the slot was freed');
});

test('a URL that is not http(s) or an address that is not an IP is our bug: the fetch rejects', async (t) => {
  const f = fetcher(t);
  await assert.rejects(f.fetch({ url: 'ftp://example.com/', address: '127.0.0.1' }), (err: unknown) => isSherlockError(err, 'SHERLOCK_BAD_URL'));
  await assert.rejects(f.fetch({ url: 'http://example.com/', address: 'example.com' }), (err: unknown) => isSherlockError(err, 'SHERLOCK_BAD_URL'));
});
