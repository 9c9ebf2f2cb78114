/**
 * The benchmark site server: serves the Debian documentation corpus over HTTP
 * on loopback addresses, one `http.Server` per address, all on one port, as
 * laid out by `site.ts`. Started as a child process by the harness:
 *
 *   node dist/bench/site-server.js --layout FILE --log FILE [--max-seconds N]
 *
 * It prints one JSON line `{"ready":true,…}` on stdout when every address
 * listens, and stops by itself: on SIGTERM/SIGINT, when its stdin closes (the
 * harness died), or after --max-seconds. It binds 127.0.0.0/8 addresses only
 * and refuses a layout naming anything else.
 *
 * Access log (one JSON object per line, written synchronously when a response
 * ends, so the file is complete once the client has exited):
 *   t  arrival time, ms since the epoch (fractional)   a  host address
 *   m  method   p  path with query   s  status (0 = connection reset by us)
 *   b  body bytes sent   d  duration in ms   f  requests in flight on this
 *   address at arrival, this one included   ua  User-Agent
 */

import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import {
  decodePath,
  HUB_ADDRESS,
  hubPage,
  ownerOf,
  pathFate,
  REDIRECT_PREFIX,
  rewriteLinks,
  robotsTxt,
  SLOW_DELAY_MS,
} from './site.js';
import type { HostSpec, SiteLayout } from './site.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.json': 'application/json',
  '.txt': 'text/plain',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.jpg': 'image/jpeg',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.gz': 'application/gzip',
  '.pdf': 'application/pdf',
};

export interface LogLine {
  t: number;
  a: string;
  m: string;
  p: string;
  s: number;
  b: number;
  d: number;
  f: number;
  ua: string;
}

function isLoopback(address: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address);
}

function main(): void {
  const { values } = parseArgs({
    options: {
      layout: { type: 'string' },
      log: { type: 'string' },
      'max-seconds': { type: 'string', default: '3600' },
    },
  });
  if (values.layout === undefined || values.log === undefined) {
    process.stderr.write('usage: site-server --layout FILE --log FILE [--max-seconds N]\n');
    process.exit(2);
  }
  const layout = JSON.parse(readFileSync(values.layout, 'utf8')) as SiteLayout;
  const maxSeconds = Number(values['max-seconds']);
  for (const h of layout.hosts) {
    if (!isLoopback(h.address) || h.address === HUB_ADDRESS) throw new Error(`refusing non-loopback or hub address ${h.address}`);
  }
  const logFd = openSync(values.log, 'a');
  const inflight = new Map<string, number>();
  const servers: http.Server[] = [];

  const stop = (code: number): void => {
    for (const s of servers) {
      s.close();
      s.closeAllConnections();
    }
    try {
      closeSync(logFd);
    } catch {
      // already closed
    }
    process.exit(code);
  };
  process.on('SIGTERM', () => stop(0));
  process.on('SIGINT', () => stop(0));
  process.stdin.on('end', () => stop(0));
  process.stdin.on('close', () => stop(0));
  process.stdin.resume();
  setTimeout(() => {
    process.stderr.write(`site-server: --max-seconds ${maxSeconds} reached, stopping\n`);
    stop(3);
  }, maxSeconds * 1000).unref();

  const handler = (address: string, host: HostSpec | undefined) => (req: IncomingMessage, res: ServerResponse) => {
    const t = performance.timeOrigin + performance.now();
    const f = (inflight.get(address) ?? 0) + 1;
    inflight.set(address, f);
    let bytes = 0;
    let logged = false;
    const finish = (status: number): void => {
      if (logged) return;
      logged = true;
      inflight.set(address, (inflight.get(address) ?? 1) - 1);
      const line: LogLine = {
        t,
        a: address,
        m: req.method ?? '',
        p: req.url ?? '',
        s: status,
        b: bytes,
        d: performance.timeOrigin + performance.now() - t,
        f,
        ua: String(req.headers['user-agent'] ?? ''),
      };
      writeSync(logFd, JSON.stringify(line) + '\n');
    };
    res.on('finish', () => finish(res.statusCode));
    res.on('close', () => finish(res.writableFinished ? res.statusCode : 0));
    const send = (status: number, type: string, body: Buffer | string, extra: Record<string, string> = {}): void => {
      const buf = typeof body === 'string' ? Buffer.from(body) : body;
      bytes = req.method === 'HEAD' ? 0 : buf.length;
      res.writeHead(status, { 'Content-Type': type, 'Content-Length': String(buf.length), ...extra });
      res.end(req.method === 'HEAD' ? undefined : buf);
    };
    const answer = (): Promise<void> =>
      host === undefined ? serveHub(layout, req, send) : serveHost(layout, host, req, res, send);
    const delay = host?.behaviour === 'slow' ? SLOW_DELAY_MS : 0;
    setTimeout(() => {
      answer().catch((err: unknown) => {
        if (!res.headersSent) send(500, 'text/plain', `internal error: ${String(err)}\n`);
        else res.destroy();
      });
    }, delay);
  };

  const listen = (address: string, host: HostSpec | undefined): Promise<void> =>
    new Promise((resolve, reject) => {
      const server = http.createServer({ keepAlive: true }, handler(address, host));
      server.keepAliveTimeout = 5000;
      server.on('error', reject);
      server.listen(layout.port, address, () => resolve());
      servers.push(server);
    });

  Promise.all([listen(HUB_ADDRESS, undefined), ...layout.hosts.map((h) => listen(h.address, h))]).then(
    () => process.stdout.write(JSON.stringify({ ready: true, pid: process.pid, port: layout.port, hosts: layout.hosts.length }) + '\n'),
    (err: unknown) => {
      process.stderr.write(`site-server: cannot listen: ${String(err)}\n`);
      stop(1);
    },
  );
}

type Send = (status: number, type: string, body: Buffer | string, extra?: Record<string, string>) => void;

async function serveHub(layout: SiteLayout, req: IncomingMessage, send: Send): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]!;
  if (path === '/' || path === '/index.html') return send(200, 'text/html', hubPage(layout));
  if (path === '/robots.txt') return send(200, 'text/plain', 'User-agent: *\nDisallow: /external/\n');
  return send(404, 'text/plain', 'not found (outside the benchmark site)\n');
}

async function serveHost(layout: SiteLayout, host: HostSpec, req: IncomingMessage, res: ServerResponse, send: Send): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed\n', { Allow: 'GET, HEAD' });
  const rawPath = (req.url ?? '/').split('?')[0]!;
  if (rawPath === '/robots.txt') {
    const body = robotsTxt(host);
    return body === undefined ? send(404, 'text/plain', 'no robots.txt here\n') : send(200, 'text/plain', body);
  }
  if (rawPath.startsWith(REDIRECT_PREFIX + '/')) {
    const target = rawPath.slice(REDIRECT_PREFIX.length);
    return send(301, 'text/html', `<a href="${target}">moved</a>\n`, { Location: target });
  }
  const path = decodePath(rawPath);
  if (path.includes('\0')) return send(400, 'text/plain', 'bad path\n');
  const file = normalize(join(host.root, path));
  if (file !== host.root && !file.startsWith(host.root + '/')) return send(404, 'text/plain', 'not found\n');
  const owner = ownerOf(layout, host.root, path);
  if (owner !== host) return send(404, 'text/plain', 'not on this host\n');
  const fate = pathFate(host, path);
  if (fate.kind === 'reset') {
    res.socket?.destroy();
    return;
  }
  if (fate.kind === 'error') return send(fate.status, 'text/plain', `error ${fate.status}\n`, fate.status === 503 ? { 'Retry-After': '1' } : {});
  if (fate.kind === 'gone') return send(404, 'text/plain', 'gone\n');
  if (rendered.has(`${host.address}\0${file}`)) return serveFile(layout, host, req, send, file, path);
  let st;
  try {
    st = await stat(file);
  } catch {
    return send(404, 'text/plain', 'not found\n');
  }
  if (st.isDirectory()) {
    if (!rawPath.endsWith('/')) return send(301, 'text/html', 'moved\n', { Location: rawPath + '/' });
    return serveFile(layout, host, req, send, join(file, 'index.html'), path + 'index.html');
  }
  return serveFile(layout, host, req, send, file, path);
}

interface Rendered {
  type: string;
  body: Buffer;
  lastModified: Date;
}

/**
 * Pages as served (links rewritten), kept in memory up to CACHE_BYTES so that
 * the server answers far faster than any crawler asks: the benchmark measures
 * crawlers, not this server. The harness warms it before timing anything.
 */
const CACHE_BYTES = 768 * 1024 * 1024;
const rendered = new Map<string, Rendered>();
let cachedBytes = 0;

async function render(layout: SiteLayout, host: HostSpec, file: string, path: string): Promise<Rendered | undefined> {
  const key = `${host.address}\0${file}`;
  const hit = rendered.get(key);
  if (hit !== undefined) return hit;
  let st;
  try {
    st = await stat(file);
  } catch {
    return undefined;
  }
  if (!st.isFile()) return undefined;
  const lastModified = new Date(Math.floor(st.mtimeMs / 1000) * 1000);
  const type = TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
  let body = await readFile(file);
  // latin1 round-trips every byte: the rewrite touches ASCII attribute values only.
  if (type === 'text/html') body = Buffer.from(rewriteLinks(layout, host, path, body.toString('latin1')), 'latin1');
  const page = { type, body, lastModified };
  if (cachedBytes + body.length <= CACHE_BYTES) {
    rendered.set(key, page);
    cachedBytes += body.length;
  }
  return page;
}

async function serveFile(layout: SiteLayout, host: HostSpec, req: IncomingMessage, send: Send, file: string, path: string): Promise<void> {
  const page = await render(layout, host, file, path);
  if (page === undefined) return send(404, 'text/plain', 'not found\n');
  const since = req.headers['if-modified-since'];
  if (since !== undefined && !Number.isNaN(Date.parse(since)) && Date.parse(since) >= page.lastModified.getTime()) {
    return send(304, 'text/plain', '', { 'Last-Modified': page.lastModified.toUTCString() });
  }
  return send(200, page.type, page.body, { 'Last-Modified': page.lastModified.toUTCString() });
}

main();
