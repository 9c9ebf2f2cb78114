/**
 * The simulated web of the crawl-scale part (issue 32): many hosts with
 * names under the reserved `.test` TLD on loopback addresses from 127.16.0.1
 * up, what each host serves and how it behaves. Pure functions of the spec
 * (hosts, addresses, port), so the server (`sim-web-server.ts`), the harness
 * (`crawl-scale.ts`) and the log analysis (`sim-web-log.ts`) rebuild the same
 * web from three numbers instead of passing 10,000 hosts around.
 *
 * Invariants:
 * - Every address is in 127.16.0.0–127.31.255.254 (last octet 1–254), clear
 *   of the bench site's 127.0.0.x; names resolve only through the hosts file
 *   the harness writes (`hostsFile`), so nothing is ever looked up elsewhere.
 * - Addresses 0 … A−S−1 hold one host each; the last S = ⌈A ÷ 20⌉ addresses
 *   are shared hosting, holding the remaining hosts round robin (evenly).
 * - Host i has 50–200 pages: page 0 is `/` (its seed), page k is
 *   `/doc/k.html`. Page k links to pages 2k+1 and 2k+2 (a tree, so every page
 *   is reachable from `/`), to two more pages of the host chosen by hash, now
 *   and then into `/private/` (disallowed by robots.txt) and to a page of
 *   another host.
 * - Behaviour, page count, latency and robots.txt are deterministic by hash of
 *   the host name (`fnv1a`); only the per-request rolls of a flaky host are
 *   drawn by the server.
 */

import { fnv1a } from './site.js';

/**
 * How a host answers. refused: no listener on its address (only single-host
 * addresses); silent: accepts and never answers; robots-503: robots.txt
 * answers 503, so RFC 9309 §2.3.1.4 lets a crawler fetch nothing else there.
 */
export type SimBehaviour = 'normal' | 'slow' | 'flaky' | 'robots-503' | 'silent' | 'refused';

export interface SimWebSpec {
  readonly hosts: number;
  readonly addresses: number;
  readonly port: number;
}

export interface SimHost {
  readonly index: number;
  /** e.g. "h00042.sim.test" */
  readonly name: string;
  readonly address: string;
  readonly pages: number;
  /** Median answer time; each request's is this × a jitter of 0.75–1.25 (`answerDelayMs`). */
  readonly latencyMs: number;
  readonly behaviour: SimBehaviour;
  /** robots.txt disallows /private/; false: no robots.txt (404), everything allowed. */
  readonly robots: boolean;
}

export interface SimWeb {
  readonly spec: SimWebSpec;
  readonly hosts: readonly SimHost[];
  /** Every address in order; an address whose only host is refused has no listener. */
  readonly addresses: readonly string[];
  readonly byName: ReadonlyMap<string, SimHost>;
}

export const MIN_PAGES = 50;
export const MAX_PAGES = 200;
export const PRIVATE_PREFIX = '/private/';
/** A share of 1/SHARED_EVERY of the addresses is shared hosting. */
const SHARED_EVERY = 20;
/** Latency: median of the hosts' medians, its spread (σ of the log), and the clamp for hosts that are not slow. */
const LATENCY_MEDIAN_MS = 80;
const LATENCY_SIGMA = 0.7;
export const LATENCY_CLAMP_MS: readonly [number, number] = [20, 500];
/** Per mille of hosts by behaviour, in hash order: refused (or silent on a shared address), silent, robots-503, flaky, slow; the rest normal. */
const BEHAVIOUR_PER_MILLE: ReadonlyArray<readonly [SimBehaviour, number]> = [
  ['refused', 20],
  ['silent', 20],
  ['robots-503', 20],
  ['flaky', 40],
  ['slow', 50],
];
/** Flaky hosts, per request (not robots.txt, so that they stay crawlable): 8 % 503 with Retry-After, 4 % 500, 4 % connection reset. */
export const FLAKY_503 = 0.08;
export const FLAKY_500 = 0.04;
export const FLAKY_RESET = 0.04;
export const RETRY_AFTER_S = 2;

/** The i-th address: 127.16.0.1, …, 127.16.0.254, 127.16.1.1, … (no .0 or .255). */
export function simAddress(i: number): string {
  const block = Math.floor(i / 254);
  const second = 16 + Math.floor(block / 256);
  if (second > 31) throw new RangeError(`address ${i} is past 127.31.255.254`);
  return `127.${second}.${block % 256}.${(i % 254) + 1}`;
}

/** A uniform number in [0, 1) from a hash of `text`. */
function unit(text: string): number {
  return fnv1a(text) / 2 ** 32;
}

export function hostName(i: number): string {
  return `h${String(i).padStart(5, '0')}.sim.test`;
}

function behaviourOf(name: string, alone: boolean): SimBehaviour {
  let roll = fnv1a(name + ' behaviour') % 1000;
  for (const [behaviour, perMille] of BEHAVIOUR_PER_MILLE) {
    if (roll < perMille) return behaviour === 'refused' && !alone ? 'silent' : behaviour;
    roll -= perMille;
  }
  return 'normal';
}

/** Log-normal around LATENCY_MEDIAN_MS (Box–Muller from two hashes), clamped; slow hosts 5–10× that. */
function latencyOf(name: string, behaviour: SimBehaviour): number {
  const u1 = Math.max(unit(name + ' latency 1'), 1e-9);
  const u2 = unit(name + ' latency 2');
  const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  const base = Math.min(LATENCY_CLAMP_MS[1], Math.max(LATENCY_CLAMP_MS[0], LATENCY_MEDIAN_MS * Math.exp(LATENCY_SIGMA * z)));
  return Math.round(behaviour === 'slow' ? base * (5 + (fnv1a(name + ' slow') % 6)) : base);
}

export function simWeb(spec: SimWebSpec): SimWeb {
  if (!(spec.hosts >= spec.addresses && spec.addresses >= 2)) throw new RangeError(`${spec.hosts} hosts on ${spec.addresses} addresses: need at least 2 addresses and a host for each`);
  const shared = Math.ceil(spec.addresses / SHARED_EVERY);
  const single = spec.addresses - shared;
  const hosts: SimHost[] = [];
  for (let i = 0; i < spec.hosts; i++) {
    const name = hostName(i);
    const alone = i < single;
    const behaviour = behaviourOf(name, alone);
    hosts.push({
      index: i,
      name,
      address: simAddress(alone ? i : single + ((i - single) % shared)),
      pages: MIN_PAGES + (fnv1a(name + ' pages') % (MAX_PAGES - MIN_PAGES + 1)),
      latencyMs: latencyOf(name, behaviour),
      behaviour,
      robots: fnv1a(name + ' robots') % 20 !== 0,
    });
  }
  return {
    spec,
    hosts,
    addresses: Array.from({ length: spec.addresses }, (_, i) => simAddress(i)),
    byName: new Map(hosts.map((h) => [h.name, h])),
  };
}

/** Addresses with a listener: all but those of refused hosts. */
export function listeningAddresses(web: SimWeb): string[] {
  const refused = new Set(web.hosts.filter((h) => h.behaviour === 'refused').map((h) => h.address));
  return web.addresses.filter((a) => !refused.has(a));
}

export function pagePath(k: number): string {
  return k === 0 ? '/' : `/doc/${k}.html`;
}

/** The page number of a path, or undefined when the path is not one of the host's pages. */
export function pageIndex(host: SimHost, path: string): number | undefined {
  if (path === '/') return 0;
  const m = /^\/doc\/([1-9]\d{0,3})\.html$/.exec(path);
  const k = m === null ? Number.NaN : Number(m[1]);
  return k < host.pages ? k : undefined;
}

/** Same-host page numbers page k links to (the tree's children, then two by hash; may repeat). */
export function localLinks(host: SimHost, k: number): number[] {
  const out: number[] = [];
  for (const child of [2 * k + 1, 2 * k + 2]) if (child < host.pages) out.push(child);
  for (const extra of [1, 2]) out.push(fnv1a(`${host.name} ${k} link ${extra}`) % host.pages);
  return out;
}

/**
 * The links of page k as `href` values: the local ones relative, one into
 * /private/ on a quarter of pages, and on a tenth an absolute link to a page
 * of another host (by name: the hosts file resolves it).
 */
export function pageLinks(web: SimWeb, host: SimHost, k: number): string[] {
  const hrefs = localLinks(host, k).map(pagePath);
  const h = fnv1a(`${host.name} ${k} outside`);
  if (h % 4 === 0) hrefs.push(`${PRIVATE_PREFIX}${k}.html`);
  if (h % 10 === 1) {
    const other = web.hosts[fnv1a(`${host.name} ${k} other`) % web.hosts.length]!;
    hrefs.push(`http://${other.name}:${web.spec.port}${pagePath(h % other.pages)}`);
  }
  return hrefs;
}

/** Which corpus page (of `count`) page k of a host shows. */
export function corpusPageOf(host: SimHost, k: number, count: number): number {
  return fnv1a(`${host.name} ${k} corpus`) % count;
}

/** Milliseconds before the server answers `path` on `host`: its latency with a per-path jitter of 0.75–1.25. */
export function answerDelayMs(host: SimHost, path: string): number {
  return host.latencyMs * (0.75 + 0.5 * unit(`${host.name} ${path} jitter`));
}

export const ROBOTS_TXT = `User-agent: *\nDisallow: ${PRIVATE_PREFIX}\n`;

/** What the server does with one request. `roll`: a uniform draw in [0, 1), used by flaky hosts only. */
export type SimFate = 'page' | 'private' | 'robots' | 'no-robots' | 'robots-503' | 'not-found' | 'error-500' | 'error-503' | 'reset' | 'silent';

export function fateOf(host: SimHost, path: string, roll: number): SimFate {
  if (host.behaviour === 'silent' || host.behaviour === 'refused') return 'silent';
  if (path === '/robots.txt') return host.behaviour === 'robots-503' ? 'robots-503' : host.robots ? 'robots' : 'no-robots';
  if (host.behaviour === 'flaky') {
    if (roll < FLAKY_503) return 'error-503';
    if (roll < FLAKY_503 + FLAKY_500) return 'error-500';
    if (roll < FLAKY_503 + FLAKY_500 + FLAKY_RESET) return 'reset';
  }
  if (pageIndex(host, path) !== undefined) return 'page';
  if (/^\/private\/\d+\.html$/.test(path)) return 'private';
  return 'not-found';
}

/** The gatherer's hosts file: one "address name" line per host. */
export function hostsFile(web: SimWeb): string {
  return web.hosts.map((h) => `${h.address} ${h.name}\n`).join('');
}

/** Every host's entry page, one a line. */
export function seeds(web: SimWeb): string {
  return web.hosts.map((h) => `http://${h.name}:${web.spec.port}/\n`).join('');
}
