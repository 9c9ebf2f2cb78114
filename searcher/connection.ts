/**
 * One WebSocket client: authentication, its searches in flight, its status
 * subscriptions, its limits, and sending under back-pressure.
 *
 * Limits, in the order a message meets them:
 * - binary frames close the socket (4400); frames over MAX_PAYLOAD are closed
 *   by ws itself (1009);
 * - invalid messages are answered BAD_MESSAGE, and a flood of them (more
 *   than INVALID_BURST at once, INVALID_RATE a second after) closes it (4400);
 * - with a token configured, the first message must be a hello holding it,
 *   within HELLO_TIMEOUT_MS; anything else closes with 4401;
 * - every message takes a token from the connection's bucket, every search
 *   one from its IP's bucket too, and at most max_in_flight searches run at
 *   once (a suggest takes only the connection's token: they come with each
 *   keystroke and cost microseconds; the query timeout bounds each): past a limit the answer is TOO_MANY_REQUESTS (with retry_after_ms
 *   for the buckets), and a client that is refused MAX_REFUSALS times in a
 *   row is closed (4429).
 *
 * Back-pressure: ws queues what the kernel does not take yet (bufferedAmount).
 * Above send_high_water the connection stops reading the client's messages
 * (so a client that sends but does not read stalls itself, not the server)
 * and status events are dropped rather than queued; reading resumes when the
 * queue is half drained. What can be queued is thus bounded by the high-water
 * mark plus the answers of the searches in flight. A client that stays above
 * the mark for send_timeout is cut off, whatever it sends; and the bytes
 * queued to all clients together are counted (Shared.queued), so the server
 * can cut off the clients holding the most when they pass max_buffered.
 *
 * Liveness: each heartbeat pings with a fresh random payload, and only a
 * pong carrying that payload counts (RFC 6455 §5.5.3: a pong echoes its
 * ping). An unsolicited pong, or one for an older ping, does not keep a
 * client that never reads alive.
 */

import { randomBytes } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import { logger } from '../common/log.js';
import { tokenMatches } from './auth.js';
import type { SearcherConfig } from './config.js';
import type { Engine } from './engine.js';
import { KeyedBuckets, TokenBucket } from './limits.js';
import type { Synonyms } from './synonyms.js';
import { CLOSE, MAX_PAYLOAD, MessageError, SUBPROTOCOL, errorMessage, parseClientMessage, resultText, type ClientMessage, type ErrorFields, type ServerMessage } from './protocol.js';
import type { SearcherMetrics } from './metrics.js';
import type { Counters } from './counters.js';
import { runSearch } from './search.js';
import { runSuggest } from './suggest.js';
import type { ResultCache } from './result-cache.js';

const log = logger('searcher');

const HELLO_TIMEOUT_MS = 10_000;
export const INVALID_BURST = 10;
const INVALID_RATE = 1;
export const MAX_REFUSALS = 20;
const MAX_SUBSCRIPTIONS = 4;

/** What the server shares with every connection; read anew on each use, so a reload applies at once. */
export interface Shared {
  readonly engine: Engine;
  readonly results: ResultCache;
  readonly config: SearcherConfig;
  readonly token: string | undefined;
  readonly synonyms: Synonyms;
  readonly ipSearches: KeyedBuckets;
  readonly counters: Counters;
  readonly metrics: SearcherMetrics;
  /** The data of a status event, made once per tick for all subscribers. */
  status(): Record<string, unknown>;
  /** Bytes queued to this client grew (or shrank, negative) by `delta`. */
  queued(connection: Connection, delta: number): void;
  closed(connection: Connection): void;
}

export class Connection {
  private authenticated: boolean;
  private readonly searches = new Map<string, AbortController>();
  /** Suggests not answered yet, by id: aborted when the socket closes. */
  private readonly suggesting = new Map<string, AbortController>();
  private readonly subscriptions = new Set<string>();
  private readonly messages = new TokenBucket();
  private readonly invalid = new TokenBucket();
  private refusals = 0;
  private paused = false;
  /** Cut off by send_timeout when the client does not drain its queue below the high-water mark in time. */
  private stallTimer: NodeJS.Timeout | undefined;
  /** The payload of the ping not answered yet; undefined: answered (or none sent). */
  private ping: Buffer | undefined;
  /** Bytes handed to ws and not yet written to the kernel (what Shared.queued was told). */
  private pending = 0;
  private ended = false;
  private readonly helloTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ws: WebSocket,
    readonly ip: string,
    private readonly shared: Shared,
  ) {
    this.authenticated = shared.token === undefined;
    ws.on('message', (data, isBinary) => this.receive(data, isBinary));
    ws.on('pong', (data) => {
      if (this.ping !== undefined && data.equals(this.ping)) this.ping = undefined;
    });
    // ws reports protocol faults (oversize frame, bad UTF-8) here and closes the socket itself.
    ws.on('error', (err) => log.debug('websocket error', { ip, problem: err.message }));
    ws.on('close', () => this.onClose());
    if (this.authenticated) this.welcome();
    else this.helloTimer = setTimeout(() => this.close(CLOSE.unauthorized, 'no hello with a token'), HELLO_TIMEOUT_MS);
  }

  get inFlight(): number {
    return this.searches.size;
  }

  get buffered(): number {
    return this.ws.bufferedAmount;
  }

  /** Bytes queued to this client by this connection, not yet written to the kernel. */
  get queuedBytes(): number {
    return this.pending;
  }

  get subscribed(): boolean {
    return this.subscriptions.size > 0;
  }

  /** Called every heartbeat_interval: cut off a client that did not answer the last ping. */
  heartbeat(): void {
    if (this.ping !== undefined) {
      log.info('client missed a ping; cut off', { ip: this.ip });
      this.terminate();
      return;
    }
    this.ping = randomBytes(8);
    this.ws.ping(this.ping);
  }

  /** Sends a status event to each subscription, unless the client is not keeping up. */
  event(data: Record<string, unknown>): void {
    for (const id of this.subscriptions) {
      if (this.ws.bufferedAmount > this.shared.config.send_high_water) this.shared.counters.events_dropped++;
      else this.send({ type: 'event', id, topic: 'status', data });
    }
  }

  close(code: number, reason: string): void {
    this.abortAll();
    this.ws.close(code, reason);
  }

  /** The server is stopping: each search in flight is answered UNAVAILABLE, then the socket closes. */
  shutdown(): void {
    for (const id of this.searches.keys()) this.error(id, { code: 'UNAVAILABLE', message: 'the searcher is shutting down' });
    this.close(CLOSE.goingAway, 'the searcher is shutting down');
  }

  /** For a socket that did not close in time, or a client cut off; what was queued to it is forgotten at once. */
  terminate(): void {
    this.release();
    this.ws.terminate();
  }

  private send(message: ServerMessage): void {
    this.sendText(JSON.stringify(message));
  }

  /** Sends a message already written as JSON text. */
  private sendText(text: string): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    const { send_high_water: highWater, send_timeout: sendTimeout } = this.shared.config;
    const bytes = Buffer.byteLength(text);
    this.pending += bytes;
    this.ws.send(text, () => {
      if (this.ended) return;
      this.pending -= bytes;
      this.shared.queued(this, -bytes);
      if (this.paused && this.ws.bufferedAmount <= highWater / 2) {
        this.paused = false;
        clearTimeout(this.stallTimer);
        this.ws.resume();
      }
    });
    if (!this.paused && this.ws.bufferedAmount > highWater) {
      this.paused = true;
      this.ws.pause();
      this.stallTimer = setTimeout(() => {
        log.info('client did not read its answers in time; cut off', { ip: this.ip, queued: this.ws.bufferedAmount });
        this.terminate();
      }, sendTimeout);
    }
    this.shared.queued(this, bytes);
  }

  /** Stops counting what is queued to this client (the socket is going away with it). */
  private release(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.stallTimer);
    if (this.pending > 0) this.shared.queued(this, -this.pending);
    this.pending = 0;
  }

  private welcome(): void {
    const c = this.shared.config;
    this.send({
      type: 'welcome',
      protocol: SUBPROTOCOL,
      index: this.shared.engine.version ?? null,
      limits: {
        max_payload: MAX_PAYLOAD,
        max_in_flight: c.max_in_flight,
        message_rate: c.message_rate,
        message_burst: c.message_burst,
        ip_search_rate: c.ip_search_rate,
        ip_search_burst: c.ip_search_burst,
        query_timeout_ms: c.query_timeout,
      },
    });
  }

  private error(id: string | undefined, fields: ErrorFields): void {
    this.send(errorMessage(id, fields));
  }

  private receive(data: RawData, isBinary: boolean): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    if (isBinary) return this.close(CLOSE.badMessages, 'binary frames are not part of sherlock.v1');
    let message: ClientMessage;
    try {
      message = parseClientMessage(data.toString());
    } catch (err) {
      if (!(err instanceof MessageError)) throw err;
      return this.invalidMessage(err);
    }
    if (!this.authenticated) return this.authenticate(message);
    const wait = this.messages.take(this.shared.config.message_rate, this.shared.config.message_burst, performance.now());
    if (wait > 0) return this.refuse('id' in message ? message.id : undefined, 'too many messages on this connection', wait);
    switch (message.type) {
      case 'hello':
        return this.accepted(() => this.welcome());
      case 'search':
        return this.search(message);
      case 'suggest':
        return this.suggest(message);
      case 'cancel':
        return this.accepted(() => this.cancel(message.id));
      case 'subscribe':
        return this.subscribe(message.id);
      case 'unsubscribe':
        return this.accepted(() => this.subscriptions.delete(message.id));
      case 'ping':
        return this.accepted(() => this.send(message.id === undefined ? { type: 'pong' } : { type: 'pong', id: message.id }));
    }
  }

  private invalidMessage(err: MessageError): void {
    if (!this.authenticated) return this.close(CLOSE.unauthorized, 'the first message must be a hello with a token');
    this.send(err.toMessage());
    if (this.invalid.take(INVALID_RATE, INVALID_BURST, performance.now()) > 0) this.close(CLOSE.badMessages, 'too many invalid messages');
  }

  private authenticate(message: ClientMessage): void {
    const token = this.shared.token;
    if (message.type !== 'hello' || message.token === undefined || token === undefined || !tokenMatches(token, message.token)) {
      const why = message.type !== 'hello' ? 'the first message must be a hello with a token' : 'wrong or missing token';
      this.error(undefined, { code: 'UNAUTHORIZED', message: why });
      log.info('client refused', { ip: this.ip, reason: why });
      return this.close(CLOSE.unauthorized, why);
    }
    clearTimeout(this.helloTimer);
    this.authenticated = true;
    this.welcome();
  }

  private accepted(then: () => void): void {
    this.refusals = 0;
    then();
  }

  private refuse(id: string | undefined, why: string, retryAfterMs?: number): void {
    this.shared.counters.rate_limited++;
    this.error(id, { code: 'TOO_MANY_REQUESTS', message: why, ...(retryAfterMs === undefined ? {} : { retry_after_ms: retryAfterMs }) });
    if (++this.refusals > MAX_REFUSALS) {
      log.notice('client ignores rate limits; cut off', { ip: this.ip });
      this.close(CLOSE.abuse, 'too many requests refused');
    }
  }

  private search(message: Extract<ClientMessage, { type: 'search' }>): void {
    const { id } = message;
    const config = this.shared.config;
    if (!this.freeId(id)) return;
    if (this.searches.size >= config.max_in_flight) {
      return this.refuse(id, `${config.max_in_flight} searches are in flight on this connection; wait for an answer or cancel one`);
    }
    const wait = this.shared.ipSearches.take(this.ip, config.ip_search_rate, config.ip_search_burst, performance.now());
    if (wait > 0) return this.refuse(id, 'too many searches from this address', wait);
    this.refusals = 0;
    const controller = new AbortController();
    this.searches.set(id, controller);
    void runSearch(this.shared, message, controller.signal, 'websocket').then((outcome) => {
      // Cancelled, or the socket closed: the answer was given already or has no one to go to.
      if (this.searches.get(id) !== controller) return;
      this.searches.delete(id);
      if (!outcome.ok) this.error(id, outcome.error);
      else this.sendText(resultText(id, outcome.took_ms, outcome.result));
    });
  }

  private suggest({ id, q, limit }: Extract<ClientMessage, { type: 'suggest' }>): void {
    if (!this.freeId(id)) return;
    this.refusals = 0;
    const controller = new AbortController();
    this.suggesting.set(id, controller);
    void runSuggest(this.shared, { q, limit }, controller.signal).then((outcome) => {
      // The socket closed: no one to answer.
      if (this.suggesting.get(id) !== controller) return;
      this.suggesting.delete(id);
      if (outcome.ok) this.send({ type: 'suggestions', id, took_ms: outcome.took_ms, ...outcome.result });
      else this.error(id, outcome.error);
    });
  }

  /** Ids name searches and suggests in flight and subscriptions alike; a taken one is a BAD_MESSAGE. */
  private freeId(id: string): boolean {
    if (!this.searches.has(id) && !this.suggesting.has(id) && !this.subscriptions.has(id)) return true;
    this.invalidMessage(new MessageError(`id ${JSON.stringify(id)} is in use by a search or suggest in flight or a subscription`, 'id', id));
    return false;
  }

  private cancel(id: string): void {
    const controller = this.searches.get(id);
    // Unknown ids are ignored: the answer may have crossed the cancel on the wire.
    if (controller === undefined) return;
    this.searches.delete(id);
    controller.abort();
    this.error(id, { code: 'CANCELLED', message: 'the search was cancelled' });
  }

  private subscribe(id: string): void {
    if (!this.freeId(id)) return;
    if (this.subscriptions.size >= MAX_SUBSCRIPTIONS) return this.refuse(id, `at most ${MAX_SUBSCRIPTIONS} subscriptions per connection`);
    this.refusals = 0;
    this.subscriptions.add(id);
    this.send({ type: 'event', id, topic: 'status', data: this.shared.status() });
  }

  private abortAll(): void {
    for (const controller of [...this.searches.values(), ...this.suggesting.values()]) controller.abort();
    this.searches.clear();
    this.suggesting.clear();
  }

  private onClose(): void {
    this.release();
    clearTimeout(this.helloTimer);
    this.abortAll();
    this.subscriptions.clear();
    this.shared.closed(this);
  }
}
