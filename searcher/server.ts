/**
 * The searcher's one port: an HTTP server (pages.ts) whose upgrade requests
 * become WebSocket connections speaking sherlock.v1 (connection.ts).
 *
 * Every request first passes the guards of common/service/http-listener.ts (a
 * target that is not a URL is answered 400; idle and surplus TCP
 * connections are closed before they use up the descriptors) and the Host
 * check (auth.ts: refused 421 unless it names this searcher). The upgrade is
 * checked before ws sees it (ws runs in noServer mode, as its docs advise
 * for authentication): path `/`, the subprotocol offered, the Origin
 * (auth.ts), the connection caps. A refusal is a plain HTTP answer (400,
 * 403, 404, 421, 503) and no socket is made. The bearer token, if any, comes
 * afterwards, in the first message (never in the URL, which ends up in logs).
 *
 * Timers: every heartbeat_interval each client is pinged (and cut off when it
 * missed the previous ping) and idle IP buckets are forgotten; every
 * status_interval subscribers get one status event, made once for all.
 *
 * close(): stops listening, answers searches in flight UNAVAILABLE, closes
 * every socket with 1001 and ends them after a grace period if they linger.
 */

import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { isLive, readGatherStatus } from '../common/gather/status.js';
import { createListener, requestTarget, type ListenerCounts, type SocketLimits } from '../common/service/http-listener.js';
import { boundAddress, splitListen } from '../common/service/listen.js';
import { logger } from '../common/log.js';
import { Registry } from '../common/service/metrics.js';
import { hostAllowed, originAllowed } from './auth.js';
import { socketLimits, type SearcherConfig } from './config.js';
import { Connection, type Shared } from './connection.js';
import type { Engine } from './engine.js';
import { KeyedBuckets } from './limits.js';
import { handleHttp, loadAssets } from './pages.js';
import { SearcherMetrics } from './metrics.js';
import { MAX_PAYLOAD, SUBPROTOCOL } from './protocol.js';
import { newCounters, type Counters } from './counters.js';
import { Synonyms } from './synonyms.js';
import { ResultCache, type ResultCacheFigures } from './result-cache.js';

const log = logger('searcher');

/** How long close() lets sockets finish their closing handshake. */
const CLOSE_GRACE_MS = 2000;

export interface ServerOptions {
  config: SearcherConfig;
  engine: Engine;
  /** The bearer token clients must send (read from token_file by the caller); undefined: none. */
  token: string | undefined;
  /** The synonyms put into each query (read from synonyms_file by the caller); default none. */
  synonyms?: Synonyms;
  /** Where /metrics figures go (with the process metrics the caller registered); default: a registry of its own. */
  registry?: Registry;
  /** The state directory, whose gatherer status snapshot the status topic carries; none: no gatherer figures. */
  state?: string;
}

export class SearchServer {
  private config: SearcherConfig;
  private token: string | undefined;
  private synonyms: Synonyms;
  private readonly engine: Engine;
  private readonly http: Server;
  /** What the listener's guards refused (common/service/http-listener.ts). */
  readonly refused: ListenerCounts;
  private limits: SocketLimits;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD, perMessageDeflate: false, clientTracking: false, handleProtocols: () => SUBPROTOCOL });
  private readonly connections = new Set<Connection>();
  private readonly perIp = new Map<string, number>();
  private readonly ipSearches = new KeyedBuckets();
  private readonly counters: Counters = newCounters();
  /** Answers already given (result-cache.ts); clear() it when something makes them wrong without a new index version. */
  readonly results: ResultCache;
  private readonly shared: Shared;
  private readonly started = Date.now();
  private readonly metrics: SearcherMetrics;
  private readonly state: string | undefined;
  /** Bytes queued to all clients (Connection.queuedBytes summed). */
  private queuedBytes = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private ticker: NodeJS.Timeout | undefined;

  private constructor(options: ServerOptions) {
    this.config = options.config;
    this.token = options.token;
    this.synonyms = options.synonyms ?? Synonyms.NONE;
    this.engine = options.engine;
    this.results = new ResultCache(this.config.result_cache);
    const server = this;
    this.state = options.state;
    const metrics = new SearcherMetrics(options.registry ?? new Registry(), () => {
      const engine = this.engine.status();
      return { counters: this.counters, connections: this.connections.size, documents: Number(engine['cards'] ?? 0), indexBytes: Number(engine['bytes'] ?? 0), results: this.results.figures() };
    });
    this.metrics = metrics;
    this.shared = {
      engine: this.engine,
      results: this.results,
      metrics,
      ipSearches: this.ipSearches,
      counters: this.counters,
      get config() {
        return server.config;
      },
      get token() {
        return server.token;
      },
      get synonyms() {
        return server.synonyms;
      },
      status: () => this.status(),
      queued: (connection, delta) => this.queued(connection, delta),
      closed: (connection) => this.forget(connection),
    };
    const assets = loadAssets();
    this.limits = socketLimits(this.config);
    const listener = createListener(
      (req, res, target) => {
        if (!hostAllowed(req.headers.host, this.config.server_names)) {
          res.writeHead(421, { 'content-type': 'text/plain; charset=utf-8' }).end('this searcher does not answer to that Host\n');
          return;
        }
        return handleHttp(req, res, target, this.shared, assets);
      },
      () => this.limits,
      log,
    );
    this.http = listener.server;
    this.refused = listener.counts;
    this.http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
  }

  /** Starts listening on config.listen (port 0: any free port; see `address`). */
  static async listen(options: ServerOptions): Promise<SearchServer> {
    const server = new SearchServer(options);
    const { host, port } = splitListen(options.config.listen);
    await new Promise<void>((resolve, reject) => {
      server.http.once('error', reject);
      server.http.listen(port, host, () => {
        server.http.off('error', reject);
        resolve();
      });
    });
    server.startTimers();
    return server;
  }

  /** HOST:PORT actually bound. */
  get address(): string {
    return boundAddress(this.http);
  }

  /** A new config and token, in effect at once; `listen` is only read at start. */
  reload(config: SearcherConfig, token: string | undefined, synonyms: Synonyms): void {
    if (config.listen !== this.config.listen) log.warning('searcher.listen changes only on restart', { listen: this.config.listen });
    this.config = config;
    this.token = token;
    this.synonyms = synonyms;
    this.limits = socketLimits(config);
    this.results.resize(config.result_cache);
    this.stopTimers();
    this.startTimers();
  }

  /** What the status topic carries. */
  status(): Record<string, unknown> {
    let inFlight = 0;
    let buffered = 0;
    for (const c of this.connections) {
      inFlight += c.inFlight;
      buffered += c.buffered;
    }
    return {
      time: new Date().toISOString(),
      uptime_s: Math.round((Date.now() - this.started) / 1000),
      index: this.engine.version ?? null,
      connections: this.connections.size,
      in_flight: inFlight,
      buffered_bytes: buffered,
      ...this.counters,
      queries: this.metrics.recent(),
      result_cache: resultCacheStatus(this.results.figures()),
      engine: this.engine.status(),
      gatherer: this.gathererStatus(),
    };
  }

  /** The gatherer's snapshot with `live` (common/gather/status.ts), or null without one or when unreadable. */
  private gathererStatus(): Record<string, unknown> | null {
    if (this.state === undefined) return null;
    try {
      const snapshot = readGatherStatus(this.state);
      return snapshot === undefined ? null : { ...snapshot, live: isLive(snapshot) };
    } catch (err) {
      log.debug('gatherer status unreadable', { problem: err instanceof Error ? err.message : String(err) });
      return null;
    }
  }

  async close(): Promise<void> {
    this.stopTimers();
    const closed = new Promise<void>((resolve) => this.http.close(() => resolve()));
    this.http.closeIdleConnections();
    for (const c of this.connections) c.shutdown();
    const grace = setTimeout(() => {
      for (const c of this.connections) c.terminate();
      this.http.closeAllConnections();
    }, CLOSE_GRACE_MS);
    await closed;
    clearTimeout(grace);
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const ip = req.socket.remoteAddress ?? '';
    const target = requestTarget(req);
    if (target === undefined) return refuse(socket, 400, 'the request-target is not a URL');
    if (!hostAllowed(req.headers.host, this.config.server_names)) {
      log.info('WebSocket for a foreign Host refused', { ip, host: req.headers.host });
      return refuse(socket, 421, 'this searcher does not answer to that Host');
    }
    if (target.pathname !== '/') return refuse(socket, 404, 'the WebSocket API is at /');
    const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
    if (!offered.includes(SUBPROTOCOL)) return refuse(socket, 400, `offer the subprotocol ${SUBPROTOCOL}`);
    if (!originAllowed(req.headers.origin, req.headers.host, this.config.allowed_origins)) {
      log.info('WebSocket from a foreign origin refused', { ip, origin: req.headers.origin });
      return refuse(socket, 403, 'origin not allowed');
    }
    if (this.connections.size >= this.config.max_connections || (this.perIp.get(ip) ?? 0) >= this.config.max_connections_per_ip) {
      return refuse(socket, 503, 'too many connections', { 'retry-after': '10' });
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.perIp.set(ip, (this.perIp.get(ip) ?? 0) + 1);
      this.connections.add(new Connection(ws, ip, this.shared));
    });
  }

  /**
   * Keeps the bytes queued to all clients under max_buffered: past it, the
   * clients holding the most are cut off, largest first (a client that reads
   * holds little, so this finds the ones that do not).
   */
  private queued(connection: Connection, delta: number): void {
    this.queuedBytes += delta;
    while (delta > 0 && this.queuedBytes > this.config.max_buffered) {
      let largest: Connection = connection;
      for (const c of this.connections) if (c.queuedBytes > largest.queuedBytes) largest = c;
      if (largest.queuedBytes === 0) break;
      log.notice('the send buffers of all clients are full; the client holding the most cut off', { ip: largest.ip, queued: largest.queuedBytes });
      largest.terminate();
    }
  }

  private forget(connection: Connection): void {
    if (!this.connections.delete(connection)) return;
    const left = (this.perIp.get(connection.ip) ?? 1) - 1;
    if (left === 0) this.perIp.delete(connection.ip);
    else this.perIp.set(connection.ip, left);
  }

  private startTimers(): void {
    this.heartbeat = setInterval(() => {
      for (const c of this.connections) c.heartbeat();
      this.ipSearches.sweep(this.config.ip_search_rate, this.config.ip_search_burst, performance.now());
    }, this.config.heartbeat_interval);
    this.ticker = setInterval(() => {
      const listening = [...this.connections].filter((c) => c.subscribed);
      if (listening.length === 0) return;
      const data = this.status();
      for (const c of listening) c.event(data);
    }, this.config.status_interval);
  }

  private stopTimers(): void {
    clearInterval(this.heartbeat);
    clearInterval(this.ticker);
  }
}

/** The result cache as the status topic shows it: its counts, the share of lookups that hit (null before the first), its bytes and bound. */
function resultCacheStatus({ hits, misses, entries, bytes, bound }: ResultCacheFigures): Record<string, unknown> {
  const lookups = hits + misses;
  return { hits, misses, hit_rate: lookups === 0 ? null : Math.round((hits / lookups) * 1000) / 1000, entries, bytes, bound };
}

function refuse(socket: Duplex, status: number, message: string, headers: Record<string, string> = {}): void {
  const reason = { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 421: 'Misdirected Request', 503: 'Service Unavailable' }[status] ?? 'Error';
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  const body = `${message}\n`;
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nconnection: close\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`);
}
