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
 * transferred buffers, not a structured clone of objects; the URLs cross as
 * ASCII bytes and their lengths, url-batch-thread.ts). `n` entries kept, in
 * the order given, `m` distinct sites in the order first met:
 *   from        u32 n   the entry's index in the request
 *   urls        n       the canonical URLs
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

import { canonicalOrNone, footprintInSite, siteFootprint, urlParts } from '../common/url.js';

export interface PreparedBatch {
  n: number;
  refused: number;
  from: Uint32Array;
  urls: string[];
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

/** Cuts and hashes a batch (layout in the module comment). */
export function prepareBatch({ urls, depths, sources }: BatchRequest, halves: SiteHalves): PreparedBatch {
  const kept: string[] = [];
  const keptDepths: number[] = [];
  const from: number[] = [];
  for (let i = 0; i < urls.length; i++) {
    const depth = depths[i]!;
    const url = Number.isSafeInteger(depth) && depth >= 0 ? canonicalOrNone(urls[i]!, sources?.[i]) : undefined;
    if (url === undefined) continue;
    kept.push(url);
    keptDepths.push(depth);
    from.push(i);
  }
  const n = kept.length;
  // Own memory, not the shared pool of small Buffers: these buffers are transferred.
  const footprints = Buffer.allocUnsafeSlow(16 * n);
  const siteOf = new Uint32Array(n);
  const sites: string[] = [];
  const siteIndex = new Map<string, number>();
  const siteHalves: Buffer[] = [];
  const mix = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const url = kept[i]!;
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
    from: Uint32Array.from(from),
    urls: kept,
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

/** URLs as they cross back from the worker (url-batch-thread.ts): ASCII bytes, and each one's length. */
export interface JoinedUrls {
  text: Uint8Array;
  lengths: Uint32Array;
}

/** A prepared batch as the database thread reads it: its URLs as strings, or joined when they crossed from the worker. */
export type BatchData = Omit<PreparedBatch, 'urls'> & ({ urls: string[] } | JoinedUrls);

/** Reads a prepared batch's entries (on the thread that owns the database). */
export class BatchReader {
  private readonly scratch = Buffer.alloc(16);
  private readonly starts: Uint32Array | undefined;
  private readonly text: Buffer | undefined;

  constructor(readonly batch: BatchData) {
    if ('lengths' in batch) {
      // A transferred Buffer arrives as a plain Uint8Array.
      this.text = Buffer.from(batch.text.buffer, batch.text.byteOffset, batch.text.byteLength);
      this.starts = new Uint32Array(batch.n + 1);
      for (let i = 0; i < batch.n; i++) this.starts[i + 1] = this.starts[i]! + batch.lengths[i]!;
    }
  }

  /**
   * Entry i's canonical URL. A joined batch's is made when asked, so it dies
   * young: strings of a whole batch (or one string of them all) outlive the
   * young generation and pile up, hundreds of MB a million URLs, until a
   * full collection.
   */
  url(i: number): string {
    const { batch, starts } = this;
    return 'urls' in batch ? batch.urls[i]! : this.text!.toString('latin1', starts![i], starts![i + 1]);
  }

  /** Entry i's footprint, in a buffer the next call overwrites (SQLite copies what it binds). */
  footprint(i: number): Buffer {
    const { footprints } = this.batch;
    for (let k = 0, at = 16 * i; k < 16; k++) this.scratch[k] = footprints[at + k]!;
    return this.scratch;
  }

  /** Site s's half, a copy of its own. */
  half(s: number): Buffer {
    return Buffer.from(this.batch.halves.subarray(8 * s, 8 * s + 8));
  }
}
