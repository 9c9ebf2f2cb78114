/**
 * The simulated web's server (issue 32): every host of `sim-web.ts` answered
 * on its loopback address, one `http.Server` per address (none where the host
 * is refused), the Host header picking the virtual host. Started as a child
 * process by the crawl-scale part:
 *
 *   node dist/bench/sim-web-server.js --hosts N --addresses N --port N
 *        --pages FILE --log FILE [--max-seconds N]
 *
 * `--pages`: the corpus HTML files, one path a line. Each is read once, its
 * href and src attributes removed (a crawler finds only the generated links),
 * and kept cut at its last `</body>`; an answer is the head, the generated
 * block of links and the tail concatenated, so the server's own processor
 * time per page stays small beside the crawler's on the same cores.
 *
 * It prints `{"ready":true,…}` once every address listens and, when stopped
 * (SIGTERM, SIGINT, stdin closed, --max-seconds), `{"cpuMs":…,"requests":…}`:
 * its processor time since ready. The access log (format in sim-web-log.ts)
 * is buffered and written every second and at the stop, so it is complete once
 * the process has exited.
 */

import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { formatLine } from './sim-web-log.js';
import { answerDelayMs, corpusPageOf, fateOf, listeningAddresses, pageIndex, pageLinks, RETRY_AFTER_S, ROBOTS_TXT, simWeb } from './sim-web.js';
import type { SimHost, SimWeb } from './sim-web.js';

/** href, src and their values, in any quoting. */
const LINK_ATTRIBUTE = /\s(?:href|src)\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+)/gi;

interface CorpusPage {
  head: Buffer;
  tail: Buffer;
}

function loadPages(listFile: string): CorpusPage[] {
  const pages: CorpusPage[] = [];
  for (const file of readFileSync(listFile, 'utf8').split('\n')) {
    if (file === '') continue;
    // latin1 keeps every byte as it was: only ASCII attributes are touched.
    const html = readFileSync(file).toString('latin1').replace(LINK_ATTRIBUTE, '');
    const cut = html.toLowerCase().lastIndexOf('</body>');
    const at = cut < 0 ? html.length : cut;
    pages.push({ head: Buffer.from(html.slice(0, at), 'latin1'), tail: Buffer.from(html.slice(at), 'latin1') });
  }
  if (pages.length === 0) throw new Error(`no pages listed in ${listFile}`);
  return pages;
}

function pageBody(web: SimWeb, pages: readonly CorpusPage[], host: SimHost, k: number): Buffer {
  const page = pages[corpusPageOf(host, k, pages.length)]!;
  const links = pageLinks(web, host, k)
    .map((href) => `<li><a href="${href}">${href}</a></li>`)
    .join('');
  return Buffer.concat([page.head, Buffer.from(`<div class="sim-web"><p>${host.name}, page ${k}</p><ul>${links}</ul></div>`, 'latin1'), page.tail]);
}

const PRIVATE_PAGE = Buffer.from('<!DOCTYPE html>\n<html><head><title>private</title></head><body><p>private</p></body></html>\n');

function main(): void {
  const { values } = parseArgs({
    options: {
      hosts: { type: 'string' },
      addresses: { type: 'string' },
      port: { type: 'string' },
      pages: { type: 'string' },
      log: { type: 'string' },
      'max-seconds': { type: 'string', default: '7200' },
    },
  });
  if (values.hosts === undefined || values.addresses === undefined || values.port === undefined || values.pages === undefined || values.log === undefined) {
    process.stderr.write('usage: sim-web-server --hosts N --addresses N --port N --pages FILE --log FILE [--max-seconds N]\n');
    process.exit(2);
  }
  const web = simWeb({ hosts: Number(values.hosts), addresses: Number(values.addresses), port: Number(values.port) });
  const pages = loadPages(values.pages);
  const logFd = openSync(values.log, 'a');
  let pending: string[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    writeSync(logFd, pending.join(''));
    pending = [];
  };
  setInterval(flush, 1000).unref();
  const inflight = new Map<string, number>();
  const servers: http.Server[] = [];
  let requests = 0;
  let cpuAtReady: NodeJS.CpuUsage | undefined;

  let stopping = false;
  const stop = (code: number): void => {
    if (stopping) return;
    stopping = true;
    for (const s of servers) s.close();
    flush();
    closeSync(logFd);
    const cpu = process.cpuUsage(cpuAtReady);
    process.stdout.write(JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, requests }) + '\n');
    process.exit(code);
  };
  process.on('SIGTERM', () => stop(0));
  process.on('SIGINT', () => stop(0));
  process.stdin.on('end', () => stop(0));
  process.stdin.resume();
  setTimeout(() => {
    process.stderr.write(`sim-web-server: --max-seconds ${values['max-seconds']} reached, stopping\n`);
    stop(3);
  }, Number(values['max-seconds']) * 1000).unref();

  const handler = (address: string) => (req: IncomingMessage, res: ServerResponse) => {
    requests++;
    const t = performance.timeOrigin + performance.now();
    const f = (inflight.get(address) ?? 0) + 1;
    inflight.set(address, f);
    const name = String(req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const path = req.url ?? '/';
    let logged = false;
    // The end is read just before the answer is handed to the socket: no byte of it can reach the
    // crawler earlier. Read after, or at 'finish', it may come late (the server preempted, its loop
    // busy) and shorten the gap the crawler left before its next request.
    let endedAt: number | undefined;
    const finish = (status: number): void => {
      if (logged) return;
      logged = true;
      inflight.set(address, inflight.get(address)! - 1);
      const end = endedAt ?? performance.timeOrigin + performance.now();
      pending.push(formatLine({ t, a: address, h: name, p: path, s: status, d: end - t, f }));
    };
    res.on('finish', () => finish(res.statusCode));
    res.on('close', () => finish(res.writableFinished ? res.statusCode : 0));
    const send = (status: number, type: string, body: Buffer | string, extra: Record<string, string> = {}): void => {
      res.writeHead(status, { 'Content-Type': type, 'Content-Length': String(Buffer.byteLength(body)), ...extra });
      endedAt = performance.timeOrigin + performance.now();
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const host = web.byName.get(name);
    if (host === undefined || host.address !== address) return send(421, 'text/plain', 'no such host on this address\n');
    const fate = fateOf(host, path, Math.random());
    if (fate === 'silent') return; // the crawler's timeout ends it
    setTimeout(() => {
      switch (fate) {
        case 'page':
          return send(200, 'text/html', pageBody(web, pages, host, pageIndex(host, path)!));
        case 'private':
          return send(200, 'text/html', PRIVATE_PAGE);
        case 'robots':
          return send(200, 'text/plain', ROBOTS_TXT);
        case 'no-robots':
        case 'not-found':
          return send(404, 'text/plain', 'not found\n');
        case 'robots-503':
        case 'error-503':
          return send(503, 'text/plain', 'unavailable\n', { 'Retry-After': String(RETRY_AFTER_S) });
        case 'error-500':
          return send(500, 'text/plain', 'error\n');
        case 'reset':
          endedAt = performance.timeOrigin + performance.now();
          req.socket.destroy();
          return;
      }
    }, answerDelayMs(host, path));
  };

  const listen = (address: string): Promise<void> =>
    new Promise((resolve, reject) => {
      // Loopback only, whatever the layout says.
      if (!address.startsWith('127.')) return reject(new Error(`refusing to listen on ${address}`));
      const server = http.createServer({ keepAlive: true }, handler(address));
      server.keepAliveTimeout = 5000;
      server.on('error', reject);
      server.listen(web.spec.port, address, () => resolve());
      servers.push(server);
    });

  const addresses = listeningAddresses(web);
  Promise.all(addresses.map(listen)).then(
    () => {
      cpuAtReady = process.cpuUsage();
      process.stdout.write(JSON.stringify({ ready: true, pid: process.pid, addresses: addresses.length, hosts: web.hosts.length, pages: pages.length }) + '\n');
    },
    (err: unknown) => {
      process.stderr.write(`sim-web-server: cannot listen: ${String(err)}\n`);
      stop(1);
    },
  );
}

main();
