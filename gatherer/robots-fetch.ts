/**
 * One request for a robots.txt, as the daemon and `sherlock check` make it:
 * to the host's own address, or, when a redirect has led to another host, to
 * that host's address looked up first. A failed lookup stands in for the
 * response as a dns outcome, which interpretRobots treats as unreachable.
 */

import { urlParts } from '../common/url.js';
import type { Resolver } from './dns.js';
import type { FetchResponse, Fetcher } from './fetch.js';
import { CODE } from './outcome.js';
import type { RobotsResponse } from './robots.js';

export interface RobotsRequest {
  /** What interpretRobots reads, with the code and message the robots bucket records. */
  response: RobotsResponse & { code: number; message: string };
  /** The real response, when a request was made. */
  fetched?: FetchResponse;
  /** The address asked, when the lookup succeeded. */
  address?: string;
}

export async function requestRobots(
  url: string,
  own: { host: string; address: string },
  resolver: Resolver,
  fetcher: Fetcher,
  signal?: AbortSignal,
): Promise<RobotsRequest> {
  const host = urlParts(url).host;
  const target = host === own.host ? { ok: true as const, address: own.address } : await resolver.resolve(host);
  if (!target.ok) {
    const code = target.refused ? CODE.dnsRefused : target.temporary ? CODE.dnsTemporary : CODE.dnsNoHost;
    return { response: { outcome: 'dns', code, message: target.message, headers: [], body: Buffer.alloc(0), truncated: false } };
  }
  const fetched = await fetcher.fetch({ url, address: target.address }, signal);
  return { response: fetched, fetched, address: target.address };
}
