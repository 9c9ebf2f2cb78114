/**
 * One HTTP GET of one URL, with undici (DESIGN §4 "Fetch").
 *
 * Contract: `Fetcher.fetch` never rejects for a network or HTTP problem; it
 * resolves with an outcome of outcome.ts and its code. It rejects only for our
 * own mistakes: a URL that is not absolute http(s), an address that is not an
 * IP address, a fetch after close(). dns, robots_denied and unsupported_type
 * are the caller's to decide; this module produces every other outcome.
 *
 * Address pinning: the caller resolved the host and checked the address
 * range, so the connection goes to exactly `req.address`. The request is
 * dispatched to the origin scheme://address:port while the Host header carries
 * the URL's host (and port); undici takes the TLS server name (SNI) from the
 * Host header and Node checks the certificate against that name. No DNS lookup
 * happens here. Connections are pooled per (scheme, address, port), one
 * connection per pool and no pipelining — politeness allows one request at a
 * time per IP anyway — and kept alive across the host names of one IP (for
 * https undici reconnects when the server name changes).
 *
 * Request: GET with User-Agent, Accept, If-None-Match / If-Modified-Since when
 * given, and no Accept-Encoding, so servers send identity; a body a server
 * compresses unprompted is kept as sent. Redirects are never followed (undici's
 * dispatcher does not; a 3xx is its own result with `location`).
 *
 * Timeouts (each ends in outcome timeout, code 1302):
 *   connectTimeoutMs  TCP connect and TLS handshake;
 *   headersTimeoutMs  from sending the request to the end of the response header;
 *   bodyTimeoutMs     idle time between two body chunks;
 *   totalTimeoutMs    the whole fetch from dispatch to the last body byte.
 * The header, body and total timers are ours (native timers, to the
 * millisecond); the connect timeout is undici's.
 * The caller's AbortSignal also resolves with outcome timeout and the message
 * "aborted" (the caller ran out of time for it: shutdown, a host dropped).
 *
 * Body: the bytes after transfer decoding (chunked framing removed), not
 * content-decoded, at most maxBodySize. A longer body is cut at exactly
 * maxBodySize bytes, the connection destroyed rather than drained, and the
 * outcome is too_large (2305) whatever the status (outcome.ts maps a status
 * to an outcome only when the body fitted); `truncated` says so.
 *
 * ARC content (`arcContent`): present when a response was received in full or
 * cut at the cap — 2xx, 3xx, 4xx, 5xx alike. It is "HTTP/1.1 STATUS REASON",
 * the header lines as received minus Transfer-Encoding, Content-Length set to
 * the stored body's length (replacing the first, dropping others, or added
 * last), an empty line, and the body: the stored header describes the stored
 * body (DESIGN §4). undici speaks only HTTP/1.1 and does not report the
 * version in a response's status line, so "1.1" is written for all. A fetch
 * that fails before or during the response (reset mid-body, Content-Length
 * mismatch, a timeout) has no arcContent and an empty body; status and headers
 * are still reported when they arrived.
 *
 * Failures: TLS certificate or handshake errors → tls (2202); refused, reset,
 * unreachable, closed before a full response, body shorter than its
 * Content-Length, unparseable HTTP → connect (1201).
 *
 * Global cap: at most maxConnections requests are in flight; further fetches
 * wait for a slot, and their deadline starts once they have one. A slot is
 * freed when undici is done with the request, which may be after the fetch
 * resolved (a deadline during connect resolves at once; the connection attempt
 * ends by its own timeout). Idle keep-alive connections are not counted; undici
 * closes them after the server's Keep-Alive hint less 2 s (at most 10 min), or
 * after 4 s when there is none.
 */

import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { isIP } from 'node:net';
import type { Agent as UndiciAgent, Dispatcher } from 'undici';
import type { GathererConfig } from './config.js';
import { SherlockError } from '../common/errors.js';
import { MAX_SITE_CONNECTIONS } from '../common/site-rules.js';
import { bodyCap, contentType, type TypeLimit } from './content-type.js';
import { CODE, httpOutcome, httpResult, type Outcome } from './outcome.js';

/**
 * Only undici's Agent: its package index also loads fetch, WebSocket, caches
 * and mocks, about 100 ms of every start-up (the version is pinned, so the
 * path is stable).
 */
const Agent = createRequire(import.meta.url)('undici/lib/dispatcher/agent.js') as typeof UndiciAgent;

export interface FetcherOptions {
  userAgent: string;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  /** Longest pause between two body chunks. */
  bodyTimeoutMs: number;
  /** Deadline of the whole fetch. */
  totalTimeoutMs: number;
  /** Bytes of body kept; a longer body is cut here. */
  maxBodySize: number;
  /** Caps of a 2xx response's body by its type, over maxBodySize (content-type.ts); 0: not fetched. */
  typeLimits: readonly TypeLimit[];
  /** Requests in flight over all addresses. */
  maxConnections: number;
}

export interface FetchRequest {
  /** Canonical absolute http or https URL. */
  url: string;
  /** IPv4 or IPv6 address to connect to, resolved and range-checked by the caller. */
  address: string;
  ifModifiedSince?: string;
  ifNoneMatch?: string;
}

export interface FetchResponse {
  outcome: Outcome;
  code: number;
  /** Short and human: "HTTP 404 Not Found", "connect ECONNREFUSED 127.0.0.5:8080". */
  message: string;
  url: string;
  address: string;
  /** When the request was dispatched (after waiting for a slot). */
  startedAt: Date;
  elapsedMs: number;
  status?: number;
  statusText?: string;
  httpVersion?: string;
  /** Header fields in received order with original case, bytes as latin1. */
  headers: [string, string][];
  body: Buffer;
  truncated: boolean;
  /** For a 3xx other than 304: Location resolved against the URL and canonicalised. */
  location?: string;
  /** For 429 and 503: Retry-After in seconds. */
  retryAfter?: number;
  /** What the ARC record stores: status line, header, body (see the module comment); `body` is a view of its end. */
  arcContent?: Buffer;
}

const ACCEPT = 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8';

/** Why we ended a transfer ourselves; undici reports it back to onResponseError, where it is ignored. */
const STOPPED = new Error('stopped by the fetcher');

/** Node's certificate verification codes (X509_V_ERR_* without the prefix) and TLS error codes. */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|CRL_|UNABLE_TO_|ERROR_IN_C)/;
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'HOSTNAME_MISMATCH',
  'EPROTO',
]);
/** undici's errors for a connection that broke or spoke no valid HTTP. */
const CONNECT_CODES = new Set(['UND_ERR_SOCKET', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'UND_ERR_HEADERS_OVERFLOW']);

interface Failure {
  outcome: Outcome;
  code: number;
  message: string;
}

/** The outcome of an error undici reported, or undefined when it is not a network problem (our bug). */
function classify(err: unknown, options: FetcherOptions): Failure | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const timeout = (message: string): Failure => ({ outcome: 'timeout', code: CODE.timeout, message });
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return timeout(`connect timeout after ${options.connectTimeoutMs} ms`);
  if (code === 'ETIMEDOUT') return timeout(err.message);
  if (TLS_CODE.test(code) || TLS_CODES.has(code)) return { outcome: 'tls', code: CODE.tls, message: `TLS: ${err.message}` };
  // A system error (it names its syscall) on the socket: refused, reset, unreachable, broken pipe, …
  const system = (err as NodeJS.ErrnoException).syscall !== undefined;
  if (system || CONNECT_CODES.has(code) || err.name === 'HTTPParserError') {
    return { outcome: 'connect', code: CODE.connect, message: err.message };
  }
  return undefined;
}

/** The three HTTP-date forms (RFC 9110 §5.6.7) start with a day name; Date.parse alone takes "-5" for a year. */
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /;

/** The most seconds retryAfterSeconds() gives: past it (136 years) a wait means nothing more, and the number stays an integer. */
export const MAX_RETRY_AFTER_S = 2 ** 32 - 1;

/**
 * Retry-After as seconds from now: delta-seconds or an HTTP-date (RFC 9110
 * §10.2.3), at most MAX_RETRY_AFTER_S; undefined when neither. How long a
 * retry really waits is the gatherer's call (gatherer.max_retry_after).
 */
export function retryAfterSeconds(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text), MAX_RETRY_AFTER_S);
  if (!HTTP_DATE.test(text)) return undefined;
  // asctime's form has no zone but means GMT; Date.parse would read it as local time.
  const date = Date.parse(text.endsWith(' GMT') ? text : `${text} GMT`);
  return Number.isNaN(date) ? undefined : Math.min(Math.max(0, Math.ceil((date - now) / 1000)), MAX_RETRY_AFTER_S);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A raw header value as text: UTF-8 when it is valid UTF-8 (browsers read a raw non-ASCII Location so), else latin1. */
function headerText(value: Buffer): string {
  try {
    return UTF8.decode(value);
  } catch {
    return value.toString('latin1');
  }
}

/** The stored form of a response up to its body; see "ARC content" in the module comment. */
function arcHead(status: number, statusText: string, raw: Buffer[], bodyLength: number): Buffer[] {
  const parts: Buffer[] = [Buffer.from(`HTTP/1.1 ${status} ${statusText}\r\n`, 'latin1')];
  let lengthWritten = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toString('latin1').toLowerCase();
    if (lower === 'transfer-encoding') continue;
    if (lower === 'content-length') {
      if (!lengthWritten) parts.push(name, Buffer.from(`: ${bodyLength}\r\n`, 'latin1'));
      lengthWritten = true;
      continue;
    }
    parts.push(name, COLON_SPACE, raw[i + 1]!, CRLF);
  }
  if (!lengthWritten) parts.push(Buffer.from(`Content-Length: ${bodyLength}\r\n`, 'latin1'));
  parts.push(CRLF);
  return parts;
}
const COLON_SPACE = Buffer.from(': ', 'latin1');
const CRLF = Buffer.from('\r\n', 'latin1');

/** undici's raw header list as Buffers; it gives Buffers from the wire, strings only from mocks. */
function rawHeaderBuffers(raw: Dispatcher.DispatchController['rawHeaders']): Buffer[] {
  if (!Array.isArray(raw)) throw new Error('undici gave no raw response header');
  return raw.map((item: Buffer | string) => (typeof item === 'string' ? Buffer.from(item, 'latin1') : item));
}

/**
 * One request's life inside undici: collects status, header and body, keeps
 * the header, body and total timers, and settles the fetch once — at the end
 * of the body, at the cap, on an error, on a timer, or when stop() is called
 * (the caller's abort). undici's own end (onResponseEnd or onResponseError,
 * exactly one of them) calls `done`.
 */
class Transfer implements Dispatcher.DispatchHandler {
  readonly result: Promise<FetchResponse>;
  #resolve!: (response: FetchResponse) => void;
  #reject!: (err: unknown) => void;
  readonly #req: FetchRequest;
  readonly #options: FetcherOptions;
  readonly #done: () => void;
  #settled = false;
  #ended = false;
  #controller: Dispatcher.DispatchController | undefined;
  readonly #deadline: NodeJS.Timeout;
  /** The header timer, then the body idle timer. */
  #phase: NodeJS.Timeout | undefined;
  readonly #startedAt = new Date();
  readonly #start = performance.now();
  #status: number | undefined;
  #statusText = '';
  #raw: Buffer[] = [];
  #chunks: Buffer[] = [];
  #received = 0;
  /** The body cap of this response: maxBodySize, or its type's (type_limits). */
  #cap: number;

  constructor(req: FetchRequest, options: FetcherOptions, done: () => void) {
    this.#req = req;
    this.#options = options;
    this.#cap = options.maxBodySize;
    this.#done = done;
    this.result = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#deadline = setTimeout(() => this.stop(`total deadline of ${options.totalTimeoutMs} ms passed`), options.totalTimeoutMs);
  }

  /** Ends the fetch with outcome timeout now; the transfer is aborted as soon as undici lets us. */
  stop(message: string): void {
    this.#settle(this.#failure({ outcome: 'timeout', code: CODE.timeout, message }));
    this.#controller?.abort(STOPPED);
  }

  /** Connected; the request is being written. */
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // Stopped while still waiting for a connection.
    if (this.#settled) controller.abort(STOPPED);
    else this.#arm(this.#options.headersTimeoutMs, `no response header within ${this.#options.headersTimeoutMs} ms`);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, _headers: unknown, statusMessage?: string): void {
    if (this.#settled) return;
    if (statusCode < 200) {
      this.#phase?.refresh(); // 1xx informational: the real response follows
      return;
    }
    this.#status = statusCode;
    this.#statusText = statusMessage ?? '';
    this.#raw = rawHeaderBuffers(controller.rawHeaders);
    if (statusCode < 300 && this.#options.typeLimits.length > 0) {
      const type = this.#header('content-type')?.toString('latin1');
      this.#cap = bodyCap(this.#options.typeLimits, type, this.#options.maxBodySize);
      if (this.#cap === 0) {
        this.#settle(this.#notFetched(contentType(type).mime ?? 'no content type'));
        controller.abort(STOPPED);
        return;
      }
    }
    this.#arm(this.#options.bodyTimeoutMs, `body stalled for ${this.#options.bodyTimeoutMs} ms`);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#phase?.refresh();
    const room = this.#cap - this.#received;
    if (chunk.length <= room) {
      this.#chunks.push(chunk);
      this.#received += chunk.length;
      return;
    }
    this.#chunks.push(chunk.subarray(0, room));
    this.#received += room;
    this.#settle(this.#response(true));
    controller.abort(STOPPED); // destroys the connection: the rest is not read
  }

  onResponseEnd(): void {
    this.#settle(this.#response(false));
    this.#end();
  }

  onResponseError(_controller: unknown, err: Error): void {
    if (!this.#settled) {
      const failure = classify(err, this.#options);
      this.#settle(failure === undefined ? err : this.#failure(failure));
    }
    this.#end();
  }

  /**
   * Our own header and body timers rather than undici's, which run on a 0.5 s
   * tick and so fire up to a second late.
   */
  #arm(ms: number, message: string): void {
    clearTimeout(this.#phase);
    this.#phase = setTimeout(() => this.stop(message), ms);
  }

  /** undici is done with the request: free its slot, once. */
  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#done();
  }

  /** Resolves with a response or rejects with an error that is not a network problem; the first call wins. */
  #settle(result: FetchResponse | Error): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#deadline);
    clearTimeout(this.#phase);
    if (result instanceof Error) this.#reject(result);
    else this.#resolve(result);
  }

  #base(): Pick<FetchResponse, 'url' | 'address' | 'startedAt' | 'elapsedMs' | 'status' | 'statusText' | 'httpVersion' | 'headers'> {
    const received = this.#status !== undefined;
    return {
      url: this.#req.url,
      address: this.#req.address,
      startedAt: this.#startedAt,
      elapsedMs: Math.round(performance.now() - this.#start),
      ...(received ? { status: this.#status, statusText: this.#statusText, httpVersion: '1.1' } : {}),
      headers: this.#headerPairs(),
    };
  }

  #headerPairs(): [string, string][] {
    const pairs: [string, string][] = [];
    for (let i = 0; i < this.#raw.length; i += 2) pairs.push([this.#raw[i]!.toString('latin1'), this.#raw[i + 1]!.toString('latin1')]);
    return pairs;
  }

  #header(name: string): Buffer | undefined {
    for (let i = 0; i < this.#raw.length; i += 2) {
      if (this.#raw[i]!.toString('latin1').toLowerCase() === name) return this.#raw[i + 1];
    }
    return undefined;
  }

  #failure(failure: Failure): FetchResponse {
    return { ...failure, ...this.#base(), body: Buffer.alloc(0), truncated: false };
  }

  /** A response whose type type_limits does not fetch: its header archived, no body. */
  #notFetched(mime: string): FetchResponse {
    const arcContent = Buffer.concat(arcHead(this.#status!, this.#statusText, this.#raw, 0));
    return { outcome: 'unsupported_type', code: CODE.unsupportedType, message: `${mime}: not fetched (gatherer.type_limits)`, ...this.#base(), body: Buffer.alloc(0), truncated: false, arcContent };
  }

  /** The result of a response received in full or cut at the cap. */
  #response(truncated: boolean): FetchResponse {
    const status = this.#status!;
    // The body is copied once, into the end of the ARC content.
    const head = arcHead(status, this.#statusText, this.#raw, this.#received);
    const headLength = head.reduce((n, part) => n + part.length, 0);
    const content = Buffer.concat([...head, ...this.#chunks], headLength + this.#received);
    const body = content.subarray(headLength);
    this.#chunks = [];
    const location = httpOutcome(status) === 'redirect' ? this.#header('location') : undefined;
    const result = httpResult(this.#req.url, status, this.#statusText, location === undefined ? undefined : headerText(location), truncated ? this.#cap : undefined);
    const retryAfter = status === 429 || status === 503 ? retryAfterSeconds(this.#header('retry-after')?.toString('latin1'), Date.now()) : undefined;
    return {
      ...result,
      ...this.#base(),
      body,
      truncated,
      ...(retryAfter === undefined ? {} : { retryAfter }),
      arcContent: content,
    };
  }
}

export class Fetcher {
  readonly #options: FetcherOptions;
  readonly #agent: UndiciAgent;
  #inFlight = 0;
  /** Fetches waiting for a slot; a freed slot passes straight to the first. */
  readonly #waiting: (() => void)[] = [];
  #closed = false;

  constructor(options: FetcherOptions) {
    this.#options = options;
    this.#agent = new Agent({
      // Per origin: as many as a site rule may allow; the scheduler keeps every other address to one request at a time.
      connections: MAX_SITE_CONNECTIONS,
      pipelining: 1,
      connect: { timeout: options.connectTimeoutMs },
      // Off: Transfer keeps these timers itself (see #arm).
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  async fetch(req: FetchRequest, signal?: AbortSignal): Promise<FetchResponse> {
    const target = this.#target(req);
    const aborted = (): boolean => signal?.aborted === true;
    if (aborted() || !(await this.#acquire(signal))) return this.#aborted(req);
    // Both may have happened while waiting for the slot.
    if (this.#closed || aborted()) {
      this.#release();
      if (this.#closed) throw new Error('Fetcher is closed');
      return this.#aborted(req);
    }
    const transfer = new Transfer(req, this.#options, () => this.#release());
    const onAbort = (): void => transfer.stop('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    const headers: [string, string][] = [
      ['host', target.host],
      ['user-agent', this.#options.userAgent],
      ['accept', ACCEPT],
    ];
    if (req.ifNoneMatch !== undefined) headers.push(['if-none-match', req.ifNoneMatch]);
    if (req.ifModifiedSince !== undefined) headers.push(['if-modified-since', req.ifModifiedSince]);
    this.#agent.dispatch({ origin: target.origin, path: target.path, method: 'GET', headers: headers.flat() }, transfer);
    try {
      return await transfer.result;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Waits for requests in flight to end, then closes every connection. Later fetches reject. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#agent.close();
  }

  /** Where to connect (address origin) and what to ask for (Host, path). */
  #target(req: FetchRequest): { origin: string; host: string; path: string } {
    if (this.#closed) throw new Error('Fetcher is closed');
    let url: URL;
    try {
      url = new URL(req.url);
    } catch (err) {
      throw new SherlockError('SHERLOCK_BAD_URL', 'cannot parse URL', { url: req.url }, { cause: err });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new SherlockError('SHERLOCK_BAD_URL', `not an http or https URL (scheme ${url.protocol})`, { url: req.url });
    }
    const family = isIP(req.address);
    if (family === 0) throw new SherlockError('SHERLOCK_BAD_URL', `address ${req.address} is not an IP address`, { url: req.url });
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    const address = family === 6 ? `[${req.address}]` : req.address;
    return { origin: `${url.protocol}//${address}:${port}`, host: url.host, path: `${url.pathname}${url.search}` };
  }

  /** Takes a slot, waiting if all are used; false when the signal aborts the wait. */
  #acquire(signal: AbortSignal | undefined): Promise<boolean> {
    if (this.#inFlight < this.#options.maxConnections) {
      this.#inFlight++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      };
      const onAbort = (): void => {
        this.#waiting.splice(this.#waiting.indexOf(grant), 1);
        resolve(false);
      };
      this.#waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#inFlight--;
    else next();
  }

  #aborted(req: FetchRequest): FetchResponse {
    return {
      outcome: 'timeout',
      code: CODE.timeout,
      message: 'aborted',
      url: req.url,
      address: req.address,
      startedAt: new Date(),
      elapsedMs: 0,
      headers: [],
      body: Buffer.alloc(0),
      truncated: false,
    };
  }
}

/** The daemon's Fetcher for a [gatherer] config. */
export function fetcherFor(config: GathererConfig): Fetcher {
  return new Fetcher({
    userAgent: config.user_agent,
    connectTimeoutMs: config.connect_timeout,
    headersTimeoutMs: config.headers_timeout,
    bodyTimeoutMs: config.body_timeout,
    totalTimeoutMs: config.fetch_timeout,
    maxBodySize: config.max_body_size,
    typeLimits: config.type_limits,
    maxConnections: config.max_connections,
  });
}
