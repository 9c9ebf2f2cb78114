/**
 * The bare-loop peer's process: the least a polite crawler can do, in
 * Node.js with undici, so the gathering table shows what this machine and
 * site allow before any of sherlock's work (issue 4 quotes "a bare undici
 * loop" beside wget).
 *
 *   node dist/bench/peers/undici-loop.js SEEDS_FILE [--prepare]
 *
 * Per host: robots.txt first (its Disallow rules through robots-parser, as
 * sherlock's), then one request at a time on one kept-alive connection, no
 * delay, one retry after an error; links taken from `href="…"` by a regular
 * expression, resolved, kept when on the same host, `.html` (or a directory)
 * and allowed, and a redirect's target taken like a link; bodies read and
 * dropped. Crawl-delay is not honoured (nor by wget or crawlee). No archive, no parsing, no URL
 * database: everything sherlock adds is missing, so its pages/s is an upper
 * bound for any crawler that keeps to one request at a time per IP here.
 *
 * With `--prepare` it is sherlock's processor floor instead (issue 32): every
 * response also goes through the parse worker's own step on this thread
 * (parse-worker.ts prepareResponse: the ARC record framed, deflated and
 * digested, the MD5 of the body, a 200 HTML page parsed and its bucket body
 * deflated), as sherlock must for each response it stores. Still no files,
 * URL database, scheduler or second thread: what sherlock adds beyond that
 * floor is its own overhead.
 * Prints {"pages":N,"requests":N} when done (with --prepare, also
 * "prepared": responses through that step, "parsed": pages parsed).
 */

import { createRequire } from 'node:module';
import { Agent, request } from 'undici';
import { DEFAULT_MAX_RECORD_SIZE } from '../../common/archive/arc.js';
import { gathererConfig } from '../../gatherer/config.js';
import { prepareResponse } from '../../gatherer/parse-worker.js';
import { ARC_LEVEL } from '../../gatherer/store.js';
import { readSeeds } from './seeds.js';

// robots-parser is CommonJS with a default-export typing (as gatherer/robots.ts loads it).
const robotsParser = createRequire(import.meta.url)('robots-parser') as typeof import('robots-parser').default;

const AGENT = 'undici-loop-sherlock-bench';
const HREF = /href\s*=\s*"([^"#]*)/gi;
const PAGE_PATH = /(\.html|\/)$/;

const [seedsFile, flag] = process.argv.slice(2);
if (seedsFile === undefined || (flag !== undefined && flag !== '--prepare')) {
  process.stderr.write('usage: undici-loop SEEDS_FILE [--prepare]\n');
  process.exit(2);
}
const prepare = flag === '--prepare';
// As the gatherer frames (gatherer/store.ts) and parses (gatherer.max_decoded_size as configured by default).
const FRAMING = { compress: true, level: ARC_LEVEL, maxRecordSize: DEFAULT_MAX_RECORD_SIZE } as const;
const MAX_DECODED = gathererConfig.parse({}).max_decoded_size;
const seeds = readSeeds(seedsFile);

const dispatcher = new Agent({ connections: 1, keepAliveTimeout: 30_000 });
const seen = new Set<string>();
let pages = 0;
let requests = 0;
// With --prepare: responses through prepareResponse, and pages of them parsed.
let prepared = 0;
let parsed = 0;

interface Answer {
  status: number;
  location: string | undefined;
  /** The body of an HTML or plain-text answer (pages, robots.txt); other bodies are dropped unread. */
  text: string | undefined;
  html: boolean;
}

/** One GET, retried once after a network error or a 5xx; undefined when both failed. */
async function get(url: string): Promise<Answer | undefined> {
  for (let attempt = 0; attempt < 2; attempt++) {
    requests++;
    try {
      const res = await request(url, { dispatcher, headers: { 'user-agent': AGENT } });
      const type = String(res.headers['content-type'] ?? '');
      const html = type.includes('text/html');
      const textual = html || type.includes('text/plain');
      let text: string | undefined;
      if (prepare) {
        const body = Buffer.from(await res.body.arrayBuffer());
        await prepareAsStored(url, res.statusCode, res.headers, body, html && res.statusCode === 200);
        if (textual) text = body.toString('utf8');
      } else {
        text = textual ? await res.body.text() : (await res.body.dump(), undefined);
      }
      if (res.statusCode >= 500 && attempt === 0) continue;
      const location = res.headers.location;
      return { status: res.statusCode, location: typeof location === 'string' ? location : undefined, text, html };
    } catch {
      // a reset or a refused connection: the retry, then give up
    }
  }
  return undefined;
}

/** What sherlock's parse worker does for a response it stores; the header block is rebuilt from undici's parsed headers. */
async function prepareAsStored(url: string, status: number, headers: Record<string, string | string[] | undefined>, body: Buffer, page: boolean): Promise<void> {
  const pairs = Object.entries(headers).flatMap(([name, value]) => (value === undefined ? [] : Array.isArray(value) ? value.map((v) => [name, v] as [string, string]) : [[name, value] as [string, string]]));
  const head = Buffer.from(`HTTP/1.1 ${status}\r\n${pairs.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`, 'latin1');
  const type = headers['content-type'];
  const result = await prepareResponse({
    arc: { url, ip: new URL(url).hostname, date: new Date(), ...(typeof type === 'string' ? { contentType: type } : {}), content: Buffer.concat([head, body]) },
    framing: FRAMING,
    body,
    ...(page ? { parse: { url, headers: pairs, maxDecodedSize: MAX_DECODED } } : {}),
  });
  prepared++;
  if (result.parsed !== undefined) parsed++;
}

/** Crawls one host from its entry page, one request after another. */
async function crawlHost(seed: string): Promise<void> {
  const origin = new URL(seed).origin;
  const robotsUrl = `${origin}/robots.txt`;
  const robotsAnswer = await get(robotsUrl);
  const robots = robotsParser(robotsUrl, robotsAnswer?.status === 200 ? (robotsAnswer.text ?? '') : '');
  const queue = [seed];
  seen.add(seed);
  for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
    const answer = await get(url);
    if (answer === undefined) continue;
    const page = answer.html ? answer.text : undefined;
    if (answer.status === 200 && page !== undefined) pages++;
    const links = answer.location !== undefined ? [answer.location] : page !== undefined ? Array.from(page.matchAll(HREF), (m) => m[1]!) : [];
    for (const found of links) {
      let link: URL;
      try {
        link = new URL(found, url);
      } catch {
        continue;
      }
      link.hash = '';
      const href = link.href;
      if (link.origin !== origin || !PAGE_PATH.test(link.pathname) || seen.has(href)) continue;
      seen.add(href);
      if (robots.isAllowed(href, AGENT) !== false) queue.push(href);
    }
  }
}

await Promise.all(seeds.map(crawlHost));
await dispatcher.close();
process.stdout.write(JSON.stringify(prepare ? { pages, requests, prepared, parsed } : { pages, requests }) + '\n');
