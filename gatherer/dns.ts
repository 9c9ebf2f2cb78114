/**
 * Host name → the address the gatherer connects to and counts politeness
 * against (the queue key). Lookups go through the system resolver
 * (getaddrinfo via dns.lookup, so /etc/hosts works as operators expect), at
 * most `concurrency` at a time, answers cached for `cacheMs`. The first
 * address returned is used (IPv4 first, as Node's default `verbatim` order
 * gives on most systems), and the same one is connected to, so a name that
 * resolves differently later cannot slip past the address check (DNS
 * rebinding).
 *
 * Hosts file (`gatherer.hosts_file`, ours): names pinned to an address
 * before any lookup, in the format of /etc/hosts (an address, then its
 * names; `#` starts a comment), so that a crawl can be pointed at a
 * staging copy, a name the local resolver does not know, or the bench's
 * simulated web, without touching the system's /etc/hosts. A pinned name
 * is checked like any answer: the file cannot open private addresses.
 *
 * Address check: unless private addresses are allowed, loopback, private,
 * link-local, shared (CGNAT), unspecified, multicast and reserved ranges,
 * IPv4 and IPv6 (RFC 6890 special-purpose registries), are refused:
 * a crawler must not be turned against the machine or network it runs on.
 * `allowNetworks` lets chosen private networks through (an intranet) while
 * the rest stays refused. The check applies to every address connected to:
 * a plan's host, a robots.txt redirect's host, a redirect target the shepherd
 * plans later, and an IPv4 address carried inside IPv6 (mapped
 * `::ffff:127.0.0.1`, NAT64 `64:ff9b::7f00:1`, 6to4 `2002:7f00:1::`).
 */

import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { SherlockError } from '../common/errors.js';
import type { GathererConfig } from './config.js';

export type Resolution =
  | { ok: true; address: string }
  | { ok: false; temporary: boolean; refused: boolean; message: string };

const NOT_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  // IPv4-compatible addresses (deprecated) and Teredo: refused whole.
  ['::', 96],
  ['2001::', 32],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv6');
}

/** Whether an address may be fetched from when private addresses are not allowed. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    const inside = embeddedIpv4(address);
    if (inside !== undefined) return isPublicAddress(inside);
  }
  return !NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The IPv4 address an IPv6 one carries where a packet would reach it: mapped
 * (::ffff:0:0/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16); undefined for
 * any other.
 */
function embeddedIpv4(address: string): string | undefined {
  const h = hextets(address);
  const v4 = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (h[0] === 0 && h[1] === 0 && h[2] === 0 && h[3] === 0 && h[4] === 0 && h[5] === 0xffff) return v4(h[6]!, h[7]!);
  if (h[0] === 0x64 && h[1] === 0xff9b && h[2] === 0 && h[3] === 0 && h[4] === 0 && h[5] === 0) return v4(h[6]!, h[7]!);
  if (h[0] === 0x2002) return v4(h[1]!, h[2]!);
  return undefined;
}

/** The eight 16-bit groups of a valid IPv6 address (a zone is ignored; a dotted tail is two groups). */
function hextets(address: string): number[] {
  let text = address.split('%')[0]!;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groups = (part: string | undefined): number[] => (part === undefined || part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const front = groups(head);
  const back = groups(tail);
  return tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/** A URL host as the resolver wants it: IPv6 literals lose their brackets. */
function bare(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** A name as written in a URL or a hosts file: case does not matter, nor does a trailing dot. */
function nameKey(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** The names a hosts file pins (name → address); a line whose address is not one, or that names nothing, is an error naming the file and the line. */
export function readHostsFile(file: string): Map<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new SherlockError('SHERLOCK_BAD_CONFIG', `hosts file ${file}: ${(err as Error).message}`, { file, key: 'gatherer.hosts_file' });
  }
  const pinned = new Map<string, string>();
  for (const [i, line] of text.split('\n').entries()) {
    const fields = line.replace(/#.*/, '').trim().split(/\s+/).filter((f) => f !== '');
    if (fields.length === 0) continue;
    const [address, ...names] = fields as [string, ...string[]];
    if (isIP(address) === 0 || names.length === 0) {
      throw new SherlockError('SHERLOCK_BAD_CONFIG', `hosts file ${file}, line ${i + 1}: ${isIP(address) === 0 ? `"${address}" is not an IP address` : 'no name after the address'}`, { file, key: 'gatherer.hosts_file', source: `${file}:${i + 1}` });
    }
    // The first line that names a host wins, as in /etc/hosts.
    for (const name of names) if (!pinned.has(nameKey(name))) pinned.set(nameKey(name), address);
  }
  return pinned;
}

interface Cached {
  result: Resolution;
  until: number;
}

export interface ResolverOptions {
  concurrency: number;
  cacheMs: number;
  allowPrivate: boolean;
  /** Private networks allowed all the same: addresses or ADDRESS/PREFIX (gatherer.allow_networks). */
  allowNetworks?: readonly string[];
  /** Names answered without a lookup (readHostsFile), keyed in lower case. */
  hosts?: ReadonlyMap<string, string>;
  /** Failures are cached this long (a negative answer is retried sooner than a positive one). */
  negativeCacheMs?: number;
  now?: () => number;
}

export class Resolver {
  private readonly cache = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<Resolution>>();
  private readonly waiting: Array<() => void> = [];
  private active = 0;
  private made = 0;
  private readonly now: () => number;
  private readonly allowed = new BlockList();

  constructor(private readonly options: ResolverOptions) {
    this.now = options.now ?? Date.now;
    for (const network of options.allowNetworks ?? []) {
      const [address = '', prefix] = network.split('/');
      const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
      this.allowed.addSubnet(address, prefix === undefined ? (family === 'ipv4' ? 32 : 128) : Number(prefix), family);
    }
  }

  /** Lookups made through the system resolver (the cache, pinned names and IP literals make none). */
  get lookups(): number {
    return this.made;
  }

  /** Lookups started and not yet answered, and those waiting for a slot. */
  get inFlight(): number {
    return this.active + this.waiting.length;
  }

  resolve(host: string): Promise<Resolution> {
    const name = bare(host);
    const cached = this.cache.get(name);
    if (cached !== undefined && cached.until > this.now()) return Promise.resolve(cached.result);
    const running = this.pending.get(name);
    if (running !== undefined) return running;
    const task = this.lookupLimited(name).then((result) => {
      this.pending.delete(name);
      const ttl = result.ok ? this.options.cacheMs : (this.options.negativeCacheMs ?? Math.min(this.options.cacheMs, 60_000));
      this.cache.set(name, { result, until: this.now() + ttl });
      return result;
    });
    this.pending.set(name, task);
    return task;
  }

  private async lookupLimited(name: string): Promise<Resolution> {
    if (isIP(name) !== 0) return this.check(name);
    const pinned = this.options.hosts?.get(nameKey(name));
    if (pinned !== undefined) return this.check(pinned);
    if (this.active >= this.options.concurrency) await new Promise<void>((go) => this.waiting.push(go));
    this.active += 1;
    this.made += 1;
    try {
      const { address } = await lookup(name);
      return this.check(address);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
      // ENOTFOUND and ENODATA are answers; anything else (EAI_AGAIN, timeouts, ESERVFAIL) may pass.
      const temporary = code !== 'ENOTFOUND' && code !== 'ENODATA';
      return { ok: false, temporary, refused: false, message: `DNS lookup of ${name} failed: ${code}` };
    } finally {
      this.active -= 1;
      this.waiting.shift()?.();
    }
  }

  private check(address: string): Resolution {
    if (!this.options.allowPrivate && !isPublicAddress(address) && !this.allowed.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6')) {
      return { ok: false, temporary: false, refused: true, message: `address ${address} is private or reserved (gatherer.allow_private_addresses is false)` };
    }
    return { ok: true, address };
  }
}

/** The daemon's Resolver for a [gatherer] config. */
export function resolverFor(config: GathererConfig): Resolver {
  const hosts = config.hosts_file === '' ? undefined : readHostsFile(config.hosts_file);
  return new Resolver({ concurrency: config.dns_concurrency, cacheMs: config.dns_cache, allowPrivate: config.allow_private_addresses, allowNetworks: config.allow_networks, ...(hosts === undefined ? {} : { hosts }) });
}
