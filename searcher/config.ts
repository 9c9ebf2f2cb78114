/**
 * The [searcher] table of sherlock.toml: where it listens, who may ask, and
 * how much one client may ask, and how much memory the caches of an index
 * version and the result cache take. Defaults live here; `etc/sherlock.toml`
 * documents them and a test checks both agree. A reload (SIGHUP) applies
 * everything but `listen` at once, to connections already open too, and
 * the cache sizes too (a smaller one pushes the oldest entries out).
 */

import { z } from 'zod';
import { duration, size } from '../common/config.js';
import { socketLimit, type SocketLimits } from '../common/service/http-listener.js';
import { coresButOne } from '../common/threads.js';

/** A browser origin ("https://search.example.org"), normalised as browsers send it. */
const origin = z.string().transform((text, ctx) => {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.href !== `${url.origin}/`) {
    ctx.addIssue({ code: 'custom', message: 'expected an origin like "https://search.example.org" (scheme, host, optional port; no path)' });
    return z.NEVER;
  }
  return url.origin;
});

/** A DNS name as a Host header carries it, lower-cased, without a port. */
const hostName = z
  .string()
  .regex(/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/, 'expected a host name such as "search.example.org" (no port, no scheme)')
  .transform((name) => name.toLowerCase());

/** A collection's name: a short identifier, as requests name it. */
export const COLLECTION_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/** One collection, "NAME=STATE_DIR". */
const collection = z.string().transform((text, ctx) => {
  const eq = text.indexOf('=');
  const name = text.slice(0, eq);
  const state = text.slice(eq + 1).trim();
  if (eq < 0 || !COLLECTION_NAME.test(name) || state === '') {
    ctx.addIssue({ code: 'custom', message: 'expected "NAME=STATE_DIR", NAME of 1 to 32 characters a-z, 0-9, _ and - starting with a letter' });
    return z.NEVER;
  }
  return { name, state };
});

/** Requests a second, fractions allowed; 0 turns the limit off. */
const rate = z.number().min(0).max(1_000_000);
const burst = z.number().int().min(1).max(1_000_000);

export const searcherConfig = z
  .object({
    /** HOST:PORT for the WebSocket API, the search page and /healthz. */
    listen: z
      .string()
      .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'expected HOST:PORT such as "127.0.0.1:8080"')
      .default('127.0.0.1:8080'),
    /** File holding the bearer token clients must send; empty means no token is asked for. */
    token_file: z.string().default(''),
    /** The operator's synonyms (searcher/synonyms.ts, Solr's format); empty: none. */
    synonyms_file: z.string().default(''),
    /** The searcher's short name in browsers' search engine lists (OpenSearch ShortName, at most 16 characters) and the search page's link to its description. */
    opensearch_name: z.string().min(1).max(16).default('sherlock'),
    /** Browser origins allowed besides the searcher's own (the Origin naming the Host asked), for the WebSocket and the JSON API's CORS. */
    allowed_origins: z.array(origin).default([]),
    /** Host names the searcher answers to besides IP addresses and "localhost" (a name a reverse proxy passes on); any other Host is refused, which stops DNS rebinding. */
    server_names: z.array(hostName).default([]),
    /** TCP connections open at once (HTTP and WebSocket); "auto": what the descriptor limit leaves after the index files. */
    max_sockets: z.union([z.literal('auto'), z.number().int().min(16).max(1_000_000)]).default('auto'),
    /** TCP connections open at once from one IP address; more are closed on accept. */
    max_sockets_per_ip: z.number().int().min(2).max(1_000_000).default(128),
    /** A new connection that has not sent a whole request head this long after it opened is closed. */
    header_timeout: duration({ min: '100ms', max: '10m' }).prefault('10s'),
    /** Open WebSocket connections over all clients; more are refused with HTTP 503. */
    max_connections: z.number().int().min(1).max(1_000_000).default(1024),
    /** Open WebSocket connections from one IP address. */
    max_connections_per_ip: z.number().int().min(1).max(1_000_000).default(64),
    /** Searches one connection may have running at once. */
    max_in_flight: z.number().int().min(1).max(1000).default(4),
    /** Messages a second one connection may send (token bucket); 0: no limit. */
    message_rate: rate.default(20),
    /** Messages one connection may send at once before message_rate applies. */
    message_burst: burst.default(40),
    /** Searches a second from one IP address, WebSocket, /search and /api/search together; 0: no limit. */
    ip_search_rate: rate.default(50),
    /** Searches from one IP address at once before ip_search_rate applies. */
    ip_search_burst: burst.default(100),
    /** A search running longer is aborted and answered TIMEOUT. */
    query_timeout: duration({ min: '10ms' }).prefault('10s'),
    /** Bytes queued to one slow client above which the server stops reading its requests and drops its status events. */
    send_high_water: size({ min: '1KiB', max: '1GiB' }).prefault('1MiB'),
    /** A client that keeps more than send_high_water unread this long is cut off, whatever it sends. */
    send_timeout: duration({ min: '100ms' }).prefault('30s'),
    /** Bytes queued to all clients together; past it the clients with the most unread are cut off first. */
    max_buffered: size({ min: '1MiB', max: '64GiB' }).prefault('64MiB'),
    /** A WebSocket ping this often; a client that has not answered the previous one is cut off. */
    heartbeat_interval: duration({ min: '100ms' }).prefault('30s'),
    /** How often subscribers of the status topic get an event. */
    status_interval: duration({ min: '100ms' }).prefault('1s'),
    /** Bytes of decoded chains (typed columns) kept per index version, and of words of several forms merged, in one budget (docs/search.md "In memory"). */
    chain_cache: size({ min: '1MiB', max: '64GiB' }).prefault('512MiB'),
    /** Bytes of cards (title, URL, text cut into words for snippets) kept per index version. */
    card_cache: size({ min: '1MiB', max: '64GiB' }).prefault('256MiB'),
    /** Bytes of answers kept by the result cache (searcher/result-cache.ts: keyed by the parsed query, filters, page, collections picked and index version, dropped on a swap and when takedowns or the site rules change); 0 turns it off. A reload applies a new size at once. */
    result_cache: size({ max: '64GiB' }).prefault('64MiB'),
    /** Threads that run searches, each with its own Lexicon and CardInfo and a share of the caches; "auto": one per core but one. */
    search_threads: z.union([z.literal('auto'), z.number().int().min(1).max(256)]).default('auto'),
    /** Several collections in one searcher (docs/search.md "Several collections"): "NAME=STATE_DIR" each, a later one newer (its copy of a URL hides an older one's); a relative STATE_DIR is from the config file's directory; empty: the --state directory alone. */
    collections: z.array(collection).default([]).superRefine((list, ctx) => {
      const seen = new Set<string>();
      for (const [i, { name }] of list.entries()) {
        if (seen.has(name)) ctx.addIssue({ code: 'custom', path: [i], message: `collection "${name}" is named twice` });
        seen.add(name);
      }
    }),
  })
  .strict();

export type SearcherConfig = z.output<typeof searcherConfig>;

/** The connection caps of the searcher's listener (common/service/http-listener.ts). */
export function socketLimits(config: SearcherConfig): SocketLimits {
  const maxSockets = config.max_sockets === 'auto' ? socketLimit() : config.max_sockets;
  return { maxSockets, maxSocketsPerIp: config.max_sockets_per_ip, headerTimeoutMs: config.header_timeout };
}

/** The cache sizes of an index version (index-version.ts) from the config. */
export function cacheSizes(config: Pick<SearcherConfig, 'chain_cache' | 'card_cache'> = searcherConfig.parse({})): { chains: number; cards: number } {
  return { chains: config.chain_cache, cards: config.card_cache };
}

/**
 * Search threads for `searcher.search_threads`. "auto" leaves a core to the
 * main thread's sockets and to the appliance's other daemons: on 2 cores a
 * second thread answered fewer queries a second (docs/search.md "Threads").
 */
export function searchThreads(setting: SearcherConfig['search_threads']): number {
  return setting === 'auto' ? coresButOne() : setting;
}
