/**
 * The capture each 304 Not Modified of `export warc` confirms: the latest 200
 * of the same URL (as stored) among the records read before it, in the order
 * files and records are read (the crawl's files in name order, which is time
 * order; `--arc` files as given), and not later than the 304. Held in memory:
 * one entry per URL with a 200 (its date, digest and record id, about 150
 * bytes with the URL), so a crawl of ten million URLs asks for about 1.5 GB.
 */

import { warcUri, type RevisitOriginal } from '../../common/archive/warc.js';

export class RevisitOriginals {
  private readonly latest = new Map<string, Omit<RevisitOriginal, 'uri'>>();

  /** Remembers a 200 capture of `url` (later ones replace earlier ones). */
  note(url: string, date: string, digest: string, id: string): void {
    this.latest.set(url, { date, digest, id });
  }

  /** The original of a 304 of `url` at `date` (14 digits), if a 200 of it was seen and is not later. */
  of(url: string, date: string): RevisitOriginal | undefined {
    const seen = this.latest.get(url);
    return seen === undefined || seen.date > date ? undefined : { uri: warcUri(url), ...seen };
  }
}
