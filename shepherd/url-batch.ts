/**
 * A batch of URLs cut and hashed for the URL database's inject (urldb.ts):
 * the JavaScript half of adding a URL — canonical form, site, footprint, plan
 * order — done before the database is touched, so that a worker thread
 * (url-batch-worker.ts, started by url-batch-thread.ts) can do it for the next
 * batch while the thread owning the SQLite connection inserts this one. The
 * same function serves both threads, so a batch prepared in a worker and one
 * prepared in place give the same rows.
 *
 * Layout of a PreparedBatch (typed arrays, so it crosses threads as a few
 * transferred buffers, not a structured clone of objects). `n` entries kept,
 * in the order given, `m` distinct sites in the order first met:
 *   text        bytes   the canonical URLs, ASCII (common/url.ts rule 7), one after another
 *   ends        u32 n   entry i is text[ends[i − 1] (0 for i = 0) … ends[i])
 *   depths      f64 n   hops from a seed
 *   footprints  16 × n  common/url.ts footprint of each
 *   siteOf      u32 n   index of the entry's site in `sites`
 *   sites       m       site names (urlParts().site)
 *   halves      8 × m   each site's siteFootprint
 *   order       u32 n   entry indices by their footprint's bytes 8–13 (a hash
 *                       of path and query), ties in the order given: the order
 *                       new rows get their ids, so a batch's sites interleave
 * `refused` counts the entries dropped: no canonical form, or a depth that is
 * not a whole number ≥ 0.
 */

import { canonicalUrl, footprintInSite, siteFootprint, urlParts } from '../common/url.js';

export interface PreparedBatch {
  n: number;
  refused: number;
  text: Uint8Array;
  ends: Uint32Array;
  depths: Float64Array;
  footprints: Uint8Array;
  siteOf: Uint32Array;
  sites: string[];
  halves: Uint8Array;
  order: Uint32Array;
}

/** What the worker is asked: URLs with their depths (NaN: refused) and, where given, base URLs. */
export interface BatchRequest {
  urls: readonly string[];
  depths: Float64Array;
  sources?: ReadonlyArray<string | undefined>;
}

/** Site halves a thread has computed, by site name; emptied when it grows past this. */
const SITE_HALVES_LIMIT = 200_000;

/** The site halves one thread has computed (a site's half never changes), reused across batches. */
export class SiteHalves {
  private readonly halves = new Map<string, Buffer>();

  of(site: string, canonical: string): Buffer {
    let half = this.halves.get(site);
    if (half === undefined) {
      if (this.halves.size >= SITE_HALVES_LIMIT) this.halves.clear();
      half = siteFootprint(canonical);
      this.halves.set(site, half);
    }
    return half;
  }
}

function canonical(url: string, base: string | undefined): string | undefined {
  try {
    return canonicalUrl(url, base);
  } catch {
    return undefined;
  }
}

/** Cuts and hashes a batch (layout in the module comment). */
export function prepareBatch({ urls, depths, sources }: BatchRequest, halves: SiteHalves): PreparedBatch {
  const kept: string[] = [];
  const keptDepths: number[] = [];
  let bytes = 0;
  for (let i = 0; i < urls.length; i++) {
    const depth = depths[i]!;
    const url = Number.isSafeInteger(depth) && depth >= 0 ? canonical(urls[i]!, sources?.[i]) : undefined;
    if (url === undefined) continue;
    kept.push(url);
    keptDepths.push(depth);
    bytes += url.length;
  }
  const n = kept.length;
  // Own memory, not the shared pool of small Buffers: these buffers are transferred.
  const text = Buffer.allocUnsafeSlow(bytes);
  const ends = new Uint32Array(n);
  const footprints = Buffer.allocUnsafeSlow(16 * n);
  const siteOf = new Uint32Array(n);
  const sites: string[] = [];
  const siteIndex = new Map<string, number>();
  const siteHalves: Buffer[] = [];
  const mix = new Float64Array(n);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const url = kept[i]!;
    at += text.write(url, at, 'latin1');
    ends[i] = at;
    const parts = urlParts(url);
    let s = siteIndex.get(parts.site);
    if (s === undefined) {
      s = sites.length;
      siteIndex.set(parts.site, s);
      sites.push(parts.site);
      siteHalves.push(halves.of(parts.site, url));
    }
    siteOf[i] = s;
    const fp = footprintInSite(siteHalves[s]!, parts.rest);
    fp.copy(footprints, 16 * i);
    mix[i] = fp.readUIntBE(8, 6);
  }
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((a, b) => mix[a]! - mix[b]! || a - b);
  return {
    n,
    refused: urls.length - n,
    text,
    ends,
    depths: Float64Array.from(keptDepths),
    footprints,
    siteOf,
    sites,
    halves: joined(siteHalves),
    order,
  };
}

function joined(halves: readonly Buffer[]): Buffer {
  const out = Buffer.allocUnsafeSlow(8 * halves.length);
  halves.forEach((half, i) => half.copy(out, 8 * i));
  return out;
}

/** The buffers of a batch, to transfer rather than copy. */
export function batchBuffers(batch: PreparedBatch): ArrayBuffer[] {
  const views = [batch.text, batch.ends, batch.depths, batch.footprints, batch.siteOf, batch.halves, batch.order];
  return [...new Set(views.map((v) => v.buffer as ArrayBuffer))];
}
