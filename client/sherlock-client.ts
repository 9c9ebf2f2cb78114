/**
 * The typed client of the searcher's WebSocket API (sherlock.v1; how to use
 * it: docs/client.md). One socket, opened at once and reopened with back-off
 * when it drops; searches and suggestions are promises answered by id, and
 * the client keeps to the limits the welcome announces: never more than
 * max_in_flight searches out (the rest wait here, in order), messages paced
 * under message_rate/message_burst, searches under the per-IP search rate.
 *
 * It runs unchanged in browsers (the search page loads it as /client.js) and
 * in Node ≥ 20, so it imports nothing at run time and uses only the WHATWG
 * WebSocket API; the wire types come from the searcher by `import type`,
 * which tsc erases.
 */

import type { Completion } from '../searcher/engine.js';
import type { CLOSE, ErrorCode, ErrorFields, ResultMessage, SearchFields, ServerMessage, SuggestionsMessage, WelcomeMessage } from '../searcher/protocol.js';

export type { Completion, ErrorCode, ResultMessage, SuggestionsMessage, WelcomeMessage };

const SUBPROTOCOL: WelcomeMessage['protocol'] = 'sherlock.v1';
const CLOSE_UNAUTHORIZED: (typeof CLOSE)['unauthorized'] = 4401;
const CLOSE_BAD_MESSAGES: (typeof CLOSE)['badMessages'] = 4400;
const CLOSE_ABUSE: (typeof CLOSE)['abuse'] = 4429;
/** The client's own closing (RFC 6455 §7.4.1, normal closure). */
const CLOSE_NORMAL = 1000;
/** What a socket lost without a close frame reports (RFC 6455 §7.1.5); the client says it too when it gives up on a silent one. */
const CLOSE_ABNORMAL = 1006;
/** The id of the one status subscription, shared by every listener. */
const STATUS_ID = 'status';
/** A TOO_MANY_REQUESTS without retry_after_ms while nothing is out to wait for: try again this much later. */
const BLIND_RETRY_MS = 1000;
/**
 * Past the searcher's query timeout and this much more without a word from
 * it while requests are out, the connection is taken for dead (a laptop
 * that slept, a NAT that forgot it: nothing reports a half-open socket).
 */
const SILENCE_MARGIN_MS = 5000;
/** Each connection left for silence doubles the margin (a slow link that takes longer to carry a big answer is not cut off forever), up to this. */
const MAX_SILENCE_MARGIN_MS = 120_000;
/**
 * Pacing keeps under the server's buckets with a margin: the hello may have
 * taken one token already, and messages sent evenly can arrive bunched.
 */
const RATE_SHARE = 0.9;
const BURST_RESERVE = 2;

/** The fields of a search: only `q` is required; the rest as the `search` message (docs/api.md). */
export type SearchInput = Pick<SearchFields, 'q'> & Partial<Omit<SearchFields, 'q'>>;

/** The status topic's figures (docs/api.md, "event"). */
export type StatusData = Extract<ServerMessage, { type: 'event' }>['data'];

/**
 * The part of the WHATWG WebSocket the client uses; browsers', Node 22's
 * global and undici's fit. The handlers take `never` so that any
 * implementation's event types fit; the client reads `data` of a message
 * event and `code`, `reason` of a close event.
 */
export interface WebSocketLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: never) => unknown) | null;
  onmessage: ((event: never) => unknown) | null;
  onclose: ((event: never) => unknown) | null;
  onerror: ((event: never) => unknown) | null;
}

export type WebSocketConstructor = new (url: string, protocols: string) => WebSocketLike;

export interface ClientOptions {
  /** The searcher's token (searcher.token_file), sent in the hello. */
  token?: string;
  /** The WebSocket implementation; default the platform's (globalThis.WebSocket). */
  WebSocket?: WebSocketConstructor;
  /** Back-off between reconnection attempts: doubling from minMs (default 500) up to maxMs (default 30 000), with jitter. */
  reconnect?: { minMs?: number; maxMs?: number };
  /** How long a request waits for a connection before it fails UNAVAILABLE (default 30 000 ms). */
  unavailableAfterMs?: number;
  /** How often one request is sent again after TOO_MANY_REQUESTS (default 3); then it fails with it. */
  maxRetries?: number;
}

export interface RequestOptions {
  /** Aborting it cancels the request: its promise rejects CANCELLED, and a search on the wire is cancelled on the server. */
  signal?: AbortSignal;
  /** A key: a new request with the same key cancels the one before it (search-as-you-type). */
  supersede?: string;
}

export interface SuggestOptions extends RequestOptions {
  /** 1–20, default 8 (the server's). */
  limit?: number;
}

export interface ClientEvents {
  /** The socket opened (the hello is on its way). */
  open: undefined;
  /** The searcher accepted the connection; its limits now apply. */
  welcome: WelcomeMessage;
  /** The socket closed, by either side. */
  close: { code: number; reason: string };
  /** Another attempt is due in `delayMs`. */
  reconnecting: { attempt: number; delayMs: number };
  /** The token was refused (4401): nothing is retried until setToken(). */
  unauthorized: { message: string };
}

export type ClientState = 'connecting' | 'ready' | 'waiting' | 'unauthorized' | 'closed';

/** A request that failed: the searcher's error fields, or the client's own CANCELLED, UNAVAILABLE or UNAUTHORIZED. */
export class SherlockError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly reason: ErrorFields['reason'];
  readonly position: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(fields: ErrorFields) {
    super(fields.message);
    this.name = 'SherlockError';
    this.code = fields.code;
    this.field = fields.field;
    this.reason = fields.reason;
    this.position = fields.position;
    this.retryAfterMs = fields.retry_after_ms;
  }
}

interface Request {
  readonly id: string;
  readonly kind: 'search' | 'suggest';
  readonly text: string;
  readonly key: string | undefined;
  readonly resolve: (answer: never) => void;
  readonly reject: (error: SherlockError) => void;
  settled: boolean;
  retries: number;
  /** Fails the request UNAVAILABLE when no connection takes it in time. */
  giveUp: ReturnType<typeof setTimeout> | undefined;
  detach: () => void;
}

/** A token bucket: `rate` a second on average, `burst` at once; rate 0 is no limit. */
class Pace {
  private tokens = 0;
  private at = 0;
  private rate = 0;
  private burst = 1;

  reset(rate: number, burst: number, now: number): void {
    this.rate = rate * RATE_SHARE;
    this.burst = Math.max(1, burst - BURST_RESERVE);
    this.tokens = this.burst;
    this.at = now;
  }

  /** Milliseconds until a token is there; 0 when there is one now. */
  wait(now: number): number {
    if (this.rate === 0) return 0;
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.rate) / 1000);
    this.at = now;
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 1000) / this.rate);
  }

  take(): void {
    if (this.rate !== 0) this.tokens -= 1;
  }
}

export class SherlockClient {
  private readonly WebSocketImpl: WebSocketConstructor;
  private token: string | undefined;
  private readonly minMs: number;
  private readonly maxMs: number;
  private readonly unavailableAfterMs: number;
  private readonly maxRetries: number;
  private socket: WebSocketLike | undefined;
  private current: ClientState = 'connecting';
  private welcomed: WelcomeMessage | undefined;
  /** Why the token was refused, from the error before the 4401 close. */
  private refusal: string | undefined;
  private attempt = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private pumpTimer: ReturnType<typeof setTimeout> | undefined;
  /** Armed while requests are out; reset by every message from the searcher (SILENCE_MARGIN_MS). */
  private silence: ReturnType<typeof setTimeout> | undefined;
  private silenceMargin = SILENCE_MARGIN_MS;
  private serial = 0;
  /** cancel, subscribe and unsubscribe: sent before any request waiting. */
  private readonly control: string[] = [];
  /** Requests not sent yet, in order. */
  private readonly queue: Request[] = [];
  /** Requests on the wire, until the searcher answers (a cancelled one too: its slot is taken until then). */
  private readonly sent = new Map<string, Request>();
  private readonly latest = new Map<string, Request>();
  private readonly statusListeners = new Set<(data: StatusData) => void>();
  private readonly listeners = new Map<keyof ClientEvents, Set<(detail: never) => void>>();
  private readonly messages = new Pace();
  private readonly searches = new Pace();
  private maxInFlight = 1;
  /** Nothing is sent before this time (performance.now()): a retry_after_ms. */
  private notBefore = 0;

  constructor(
    readonly url: string,
    options: ClientOptions = {},
  ) {
    const platform = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    const impl = options.WebSocket ?? platform;
    if (impl === undefined) {
      throw new TypeError('sherlock client: this platform has no global WebSocket (Node 20: run with --experimental-websocket, or pass the WebSocket option, e.g. undici’s)');
    }
    this.WebSocketImpl = impl;
    this.token = options.token;
    this.minMs = options.reconnect?.minMs ?? 500;
    this.maxMs = Math.max(this.minMs, options.reconnect?.maxMs ?? 30_000);
    this.unavailableAfterMs = options.unavailableAfterMs ?? 30_000;
    this.maxRetries = options.maxRetries ?? 3;
    this.connect();
  }

  /** connecting, ready (welcomed), waiting (to reconnect), unauthorized (until setToken) or closed. */
  get state(): ClientState {
    return this.current;
  }

  /** The last welcome: the index version and the limits in force. */
  get welcome(): WelcomeMessage | undefined {
    return this.welcomed;
  }

  /** One page of hits; rejects with a SherlockError. */
  search(fields: SearchInput, options: RequestOptions = {}): Promise<ResultMessage> {
    return this.request('search', fields, options);
  }

  /** Whole queries completing `q` (the text in the box, the cursor at its end). */
  suggest(q: string, options: SuggestOptions = {}): Promise<SuggestionsMessage> {
    return this.request('suggest', options.limit === undefined ? { q } : { q, limit: options.limit }, options);
  }

  /** Calls `listener` with each status event (at once, then every searcher.status_interval), across reconnections; returns the unsubscribe. */
  subscribeStatus(listener: (data: StatusData) => void): () => void {
    this.statusListeners.add(listener);
    if (this.statusListeners.size === 1 && this.current === 'ready') this.sendControl({ type: 'subscribe', id: STATUS_ID, topic: 'status' });
    return () => {
      if (!this.statusListeners.delete(listener) || this.statusListeners.size > 0) return;
      if (this.current === 'ready') this.sendControl({ type: 'unsubscribe', id: STATUS_ID });
    };
  }

  /** Listens to `type`; returns the function that stops it. */
  on<K extends keyof ClientEvents>(type: K, listener: (detail: ClientEvents[K]) => void): () => void {
    let set = this.listeners.get(type);
    if (set === undefined) this.listeners.set(type, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** A new token: used from the next connection, which is opened at once after a refusal or while waiting to reconnect. */
  setToken(token: string | undefined): void {
    this.token = token;
    if (this.current !== 'unauthorized' && this.current !== 'waiting') return;
    clearTimeout(this.reconnectTimer);
    this.attempt = 0;
    this.connect();
  }

  /** Closes the socket for good; what is pending rejects CANCELLED. */
  close(): void {
    if (this.current === 'closed') return;
    this.current = 'closed';
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.pumpTimer);
    clearTimeout(this.silence);
    const socket = this.socket;
    this.socket = undefined;
    socket?.close(CLOSE_NORMAL, 'client closed');
    this.failAll({ code: 'CANCELLED', message: 'the client was closed' });
  }

  private request<T>(kind: Request['kind'], body: object, options: RequestOptions): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.current === 'closed') return reject(new SherlockError({ code: 'CANCELLED', message: 'the client was closed' }));
      if (this.current === 'unauthorized') return reject(this.unauthorized());
      if (options.signal?.aborted === true) return reject(cancelled());
      const id = `${kind === 'search' ? 's' : 'g'}${++this.serial}`;
      const request: Request = {
        id,
        kind,
        text: JSON.stringify({ ...body, type: kind, id }),
        key: options.supersede,
        resolve: resolve as (answer: never) => void,
        reject,
        settled: false,
        retries: 0,
        giveUp: undefined,
        detach: () => undefined,
      };
      if (request.key !== undefined) {
        const older = this.latest.get(request.key);
        if (older !== undefined) this.cancel(older);
        this.latest.set(request.key, request);
      }
      const signal = options.signal;
      if (signal !== undefined) {
        const onAbort = () => this.cancel(request);
        signal.addEventListener('abort', onAbort, { once: true });
        request.detach = () => signal.removeEventListener('abort', onAbort);
      }
      this.queue.push(request);
      if (this.current !== 'ready') this.armGiveUp(request);
      this.pump();
    });
  }

  private cancel(request: Request): void {
    if (request.settled) return;
    this.settle(request, cancelled());
    const at = this.queue.indexOf(request);
    if (at >= 0) {
      // Never on the wire: nothing to tell the searcher.
      this.queue.splice(at, 1);
      return;
    }
    // A suggestion costs the searcher microseconds: its answer is dropped when it comes.
    if (request.kind === 'search' && this.sent.get(request.id) === request) this.sendControl({ type: 'cancel', id: request.id });
  }

  private settle(request: Request, error: SherlockError | undefined, answer?: unknown): void {
    if (request.settled) return;
    request.settled = true;
    clearTimeout(request.giveUp);
    request.detach();
    if (request.key !== undefined && this.latest.get(request.key) === request) this.latest.delete(request.key);
    if (error === undefined) request.resolve(answer as never);
    else request.reject(error);
  }

  private armGiveUp(request: Request): void {
    if (request.giveUp !== undefined) return;
    request.giveUp = setTimeout(() => {
      const at = this.queue.indexOf(request);
      if (at >= 0) this.queue.splice(at, 1);
      this.settle(request, new SherlockError({ code: 'UNAVAILABLE', message: `no connection to the searcher within ${this.unavailableAfterMs} ms` }));
    }, this.unavailableAfterMs);
  }

  private sendControl(message: object): void {
    this.control.push(JSON.stringify(message));
    this.pump();
  }

  private searchesOut(): number {
    let n = 0;
    for (const request of this.sent.values()) if (request.kind === 'search') n++;
    return n;
  }

  /** The next request the limits let out: a suggestion any time, a search while a slot is free. */
  private nextRequest(): Request | undefined {
    const slots = this.searchesOut() < this.maxInFlight;
    return this.queue.find((r) => r.kind === 'suggest' || slots);
  }

  /** Sends what waits, as fast as the limits allow; a timer calls it again when a token is due. */
  private pump(): void {
    clearTimeout(this.pumpTimer);
    this.pumpTimer = undefined;
    const socket = this.socket;
    if (this.current !== 'ready' || socket === undefined) return;
    for (;;) {
      const request = this.control.length > 0 ? undefined : this.nextRequest();
      if (this.control.length === 0 && request === undefined) return;
      const now = performance.now();
      let wait = Math.max(this.notBefore - now, this.messages.wait(now));
      if (request?.kind === 'search') wait = Math.max(wait, this.searches.wait(now));
      if (wait > 0) {
        this.pumpTimer = setTimeout(() => this.pump(), wait);
        return;
      }
      this.messages.take();
      if (request === undefined) {
        socket.send(this.control.shift()!);
        continue;
      }
      if (request.kind === 'search') this.searches.take();
      this.queue.splice(this.queue.indexOf(request), 1);
      clearTimeout(request.giveUp);
      request.giveUp = undefined;
      this.sent.set(request.id, request);
      socket.send(request.text);
      this.watch();
    }
  }

  private connect(): void {
    this.current = 'connecting';
    this.refusal = undefined;
    const socket = new this.WebSocketImpl(this.url, SUBPROTOCOL);
    this.socket = socket;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      this.emit('open', undefined);
      // A listener may have closed the client.
      if (this.socket !== socket) return;
      // A hello even without a token: a searcher that wants one refuses it at once instead of after its hello timeout.
      socket.send(JSON.stringify(this.token === undefined ? { type: 'hello' } : { type: 'hello', token: this.token }));
    };
    socket.onmessage = (event: { data: unknown }) => {
      if (this.socket === socket && typeof event.data === 'string') this.receive(event.data);
    };
    socket.onclose = (event: { code: number; reason: string }) => {
      if (this.socket === socket) this.lost(event.code, event.reason);
    };
    // The close that follows an error says what happened.
    socket.onerror = () => undefined;
  }

  /** Arms the silence timer while requests are out and none is armed. */
  private watch(): void {
    if (this.silence !== undefined || this.sent.size === 0) return;
    const limit = (this.welcomed?.limits['query_timeout_ms'] ?? 0) + this.silenceMargin;
    this.silence = setTimeout(() => {
      this.silence = undefined;
      const socket = this.socket;
      if (socket === undefined || this.sent.size === 0) return;
      // Its late events are ignored: they check that it is still the client's socket.
      this.socket = undefined;
      this.silenceMargin = Math.min(2 * this.silenceMargin, MAX_SILENCE_MARGIN_MS);
      socket.close();
      this.lost(CLOSE_ABNORMAL, `no word from the searcher in ${limit} ms with requests out`);
    }, limit);
  }

  /** Disarms the silence timer once nothing is out, so a request sent later gets a whole period. */
  private unwatch(): void {
    if (this.sent.size > 0) return;
    clearTimeout(this.silence);
    this.silence = undefined;
  }

  private receive(text: string): void {
    clearTimeout(this.silence);
    this.silence = undefined;
    this.watch();
    let message: ServerMessage | SuggestionsMessage;
    try {
      message = JSON.parse(text) as ServerMessage | SuggestionsMessage;
    } catch {
      return;
    }
    switch (message.type) {
      case 'welcome':
        return this.accept(message);
      case 'result':
      case 'suggestions':
        return this.answer(message.id, message);
      case 'error':
        if (message.id === undefined) {
          if (message.code === 'UNAUTHORIZED') this.refusal = message.message;
          return;
        }
        return this.failed(message.id, message);
      case 'event':
        if (message.id === STATUS_ID) for (const listener of [...this.statusListeners]) listener(message.data);
        return;
      case 'pong':
        return;
    }
  }

  private accept(welcome: WelcomeMessage): void {
    this.welcomed = welcome;
    // A searcher without a token welcomes at once and again after the hello: the first one counts.
    if (this.current === 'ready') return;
    this.current = 'ready';
    this.attempt = 0;
    const limits = welcome.limits;
    const now = performance.now();
    this.maxInFlight = Math.max(1, limits['max_in_flight'] ?? 1);
    this.messages.reset(limits['message_rate'] ?? 0, limits['message_burst'] ?? 1, now);
    this.searches.reset(limits['ip_search_rate'] ?? 0, limits['ip_search_burst'] ?? 1, now);
    this.notBefore = 0;
    for (const request of this.queue) {
      clearTimeout(request.giveUp);
      request.giveUp = undefined;
    }
    if (this.statusListeners.size > 0) this.control.push(JSON.stringify({ type: 'subscribe', id: STATUS_ID, topic: 'status' }));
    this.emit('welcome', welcome);
    if (this.current === 'ready') this.pump();
  }

  private answer(id: string, message: ResultMessage | SuggestionsMessage): void {
    const request = this.sent.get(id);
    if (request === undefined) return;
    this.sent.delete(id);
    this.silenceMargin = SILENCE_MARGIN_MS;
    this.unwatch();
    this.settle(request, undefined, message);
    this.pump();
  }

  private failed(id: string, error: ServerMessage & { type: 'error' }): void {
    const request = this.sent.get(id);
    if (request === undefined) return;
    this.sent.delete(id);
    this.unwatch();
    if (!request.settled) {
      const { type: _type, id: _id, ...fields } = error;
      if (error.code === 'UNAVAILABLE') {
        // The searcher is going away: the request goes again once it is back.
        this.queue.unshift(request);
      } else if (error.code === 'TOO_MANY_REQUESTS' && request.retries < this.maxRetries) {
        request.retries++;
        const now = performance.now();
        if (error.retry_after_ms !== undefined) this.notBefore = Math.max(this.notBefore, now + error.retry_after_ms);
        else if (this.searchesOut() > 0) this.maxInFlight = Math.max(1, this.searchesOut());
        else this.notBefore = Math.max(this.notBefore, now + BLIND_RETRY_MS);
        this.queue.unshift(request);
      } else {
        this.settle(request, new SherlockError(fields));
      }
    }
    this.pump();
  }

  private lost(code: number, reason: string): void {
    this.socket = undefined;
    clearTimeout(this.silence);
    this.silence = undefined;
    clearTimeout(this.pumpTimer);
    this.pumpTimer = undefined;
    this.notBefore = 0;
    this.control.length = 0;
    // What was on the wire goes again, in the order it was sent, before what never was.
    const back = [...this.sent.values()].filter((r) => !r.settled);
    this.sent.clear();
    this.queue.unshift(...back);
    this.emit('close', { code, reason });
    // Listeners run before the client decides what comes next: one may have closed it for good.
    if (this.current === 'closed') return;
    if (code === CLOSE_UNAUTHORIZED) {
      this.current = 'unauthorized';
      const error = this.unauthorized();
      this.failAll(error);
      this.emit('unauthorized', { message: error.message });
      return;
    }
    this.current = 'waiting';
    for (const request of this.queue) this.armGiveUp(request);
    // A searcher that closed for abuse or bad messages is not hammered.
    const ceiling = code === CLOSE_ABUSE || code === CLOSE_BAD_MESSAGES ? this.maxMs : Math.min(this.maxMs, this.minMs * 2 ** this.attempt);
    const delayMs = Math.round(ceiling * (0.5 + Math.random() / 2));
    this.attempt++;
    this.emit('reconnecting', { attempt: this.attempt, delayMs });
    if (this.current === 'waiting') this.reconnectTimer = setTimeout(() => this.connect(), delayMs);
  }

  private unauthorized(): SherlockError {
    return new SherlockError({ code: 'UNAUTHORIZED', message: this.refusal ?? 'the searcher refused the token' });
  }

  private failAll(fields: ErrorFields | SherlockError): void {
    const error = fields instanceof SherlockError ? fields : new SherlockError(fields);
    const pending = [...this.sent.values(), ...this.queue];
    this.sent.clear();
    this.queue.length = 0;
    for (const request of pending) this.settle(request, error);
  }

  private emit<K extends keyof ClientEvents>(type: K, detail: ClientEvents[K]): void {
    for (const listener of [...(this.listeners.get(type) ?? [])]) (listener as (detail: ClientEvents[K]) => void)(detail);
  }
}

function cancelled(): SherlockError {
  return new SherlockError({ code: 'CANCELLED', message: 'the request was cancelled' });
}
