/**
 * The [gatherer] table of sherlock.toml: politeness, limits and archive settings.
 * Defaults live here; `etc/sherlock.toml` documents them and a test checks both agree.
 */

import { z } from 'zod';
import { isIP } from 'node:net';
import { duration, size } from '../common/config.js';
import { adminListen } from '../common/service/metrics-listener.js';
import { typeLimit } from './content-type.js';

/** An address or ADDRESS/PREFIX, IPv4 or IPv6. */
const network = z.string().refine((text) => {
  const [address = '', prefix, extra] = text.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}, 'expected an IP address or network such as "10.1.2.0/24" or "fd00::/8"');

export const gathererConfig = z
  .object({
    /** Sent on every request; must name the operator's contact page (RFC 9309 §2.2.1 matches its first token). */
    user_agent: z.string().min(1).default('sherlock/0.1 (+https://sherlock.invalid/bot)'),
    /** Minimum pause between two requests to one IP address. */
    min_delay: duration().prefault('5s'),
    /** Highest robots.txt Crawl-delay honoured; a longer one is capped to this. */
    max_crawl_delay: duration().prefault('60s'),
    /** Open connections over all hosts at once. */
    max_connections: z.number().int().min(1).max(10_000).default(32),
    /** Loopback and private ranges are refused unless this is true (tests and intranets). */
    allow_private_addresses: z.boolean().default(false),
    /** Networks ("10.1.2.0/24", "fd00::/8", or one address) fetched from although private: one intranet without opening all of them. */
    allow_networks: z.array(network).default([]),
    /** Bodies longer than this are cut and the object marked truncated. */
    max_body_size: size({ min: '1KiB', max: '1GiB' }).prefault('10MiB'),
    /** Body caps by type over max_body_size, "PATTERN SIZE" each (content-type.ts); the first match decides; a size of 0: not fetched at all. */
    type_limits: z.array(typeLimit).prefault(['application/pdf 64MiB', 'application/vnd.openxmlformats-officedocument.* 64MiB', 'application/vnd.oasis.opendocument.* 64MiB']),
    /** Worker threads parsing pages and compressing their ARC records: "auto" (the cores but one, 1 to 4) or a number; 0 does it on the main thread. */
    parse_workers: z.union([z.literal('auto'), z.number().int().min(0).max(64)]).default('auto'),
    /** Bytes decoded from a compressed body for parsing; the rest is not parsed (a gzip bomb stops here). */
    max_decoded_size: size({ min: '1KiB', max: '1GiB' }).prefault('32MiB'),
    /** Time one PDF's or office file's parse may take; its worker is stopped there and the document recorded unparseable (2307). */
    document_parse_time: duration({ min: '100ms', max: '1h' }).prefault('30s'),
    /** Memory one PDF's or office file's parse may take, its worker's heap and the process's growth while it runs; over it the document is recorded too_large (2305). */
    document_parse_memory: size({ min: '16MiB', max: '16GiB' }).prefault('512MiB'),
    /** An ARC file is closed and a new one begun once it reaches this size. */
    arc_max_size: size({ min: '1MiB' }).prefault('100MB'),
    /** Time allowed to open a connection. */
    connect_timeout: duration({ min: '10ms' }).prefault('10s'),
    /** Time allowed from sending the request to the end of the response header. */
    headers_timeout: duration({ min: '10ms' }).prefault('30s'),
    /** Longest pause between two pieces of a body. */
    body_timeout: duration({ min: '10ms' }).prefault('30s'),
    /** Deadline for a whole fetch, however the server trickles. */
    fetch_timeout: duration({ min: '10ms' }).prefault('2m'),
    /** How long a fetched robots.txt is trusted (RFC 9309 §2.4 says at most a day). */
    robots_expire: duration({ min: '1s', max: '1d' }).prefault('1d'),
    /** A temporary error puts the URL back in its queue, to be fetched again no sooner than this. */
    retry_delay: duration().prefault('60s'),
    /** Temporary errors of one URL before its error is recorded as permanent. */
    max_retries: z.number().int().min(0).max(100).default(3),
    /** After this many errors in a row on a host, the host waits error_backoff. */
    error_backoff_after: z.number().int().min(1).max(1000).default(3),
    /** The longer pause of a host that keeps failing; also how long an unreachable robots.txt shuts its host. */
    error_backoff: duration().prefault('1h'),
    /** Longest Retry-After (503, 429) honoured; a longer one, or a date further off, waits this long. */
    max_retry_after: duration().prefault('1h'),
    /** DNS lookups in flight at once. */
    dns_concurrency: z.number().int().min(1).max(1000).default(8),
    /** How long a resolved address is reused. */
    dns_cache: duration().prefault('1h'),
    /** A file in the format of /etc/hosts whose names are answered without a lookup (dns.ts); "" for none. */
    hosts_file: z.string().default(''),
    /** Written data is fsynced (ARC, buckets, queues) at least this often; a power loss loses at most this much. */
    sync_interval: duration({ min: '100ms' }).prefault('5s'),
    /** Loopback HOST:PORT serving /metrics (also for `sherlock crawl`); "" serves none. Changes on restart. */
    admin_listen: adminListen(),
  })
  .strict();

export type GathererConfig = z.output<typeof gathererConfig>;
