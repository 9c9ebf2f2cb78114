/**
 * The Nutch export's linkdb records (export.ts) from the sorted
 * link lines `target NUL from NUL anchor` (UTF-8 bytes read as Latin-1, as
 * segment.ts sorts them): a target's lines, repeats dropped, make
 * one Inlinks of at most MAX_INLINKS links. The segment's worker threads
 * make them a slice of the merge at a time (common/external-sort.ts's
 * `slices`, cut between targets), so the slices' records laid end to end
 * are the whole linkdb in key order.
 */

import { InlinksBuilder } from '../../common/hadoop/nutch-writables.js';
import { urlParts } from '../../common/url.js';

/** Nutch's db.max.inlinks. */
const MAX_INLINKS = 10_000;
export const LINK_SEP = '\0';

/**
 * The host a link is internal to, as Nutch's LinkDb compares them
 * (`linkdb.ignore.internal.links`, true by default: a link whose target has
 * its source's host is left out): the host without the port, so two ports
 * of one host are one; undefined for a URL that is not canonical (Nutch
 * leaves out a link whose host it cannot read).
 */
export function linkHost(url: string): string | undefined {
  try {
    return urlParts(url).host;
  } catch {
    return undefined;
  }
}

/** A link line's target: the group `slices` keeps whole (NUL sorts below every byte of a URL). */
export function linkTarget(line: string): string {
  return line.slice(0, line.indexOf(LINK_SEP));
}

/** Calls `record` with each target (its UTF-8 bytes as a byte string) and Inlinks (valid until the next call) in the lines' order; returns the number of targets. */
export function linkRecords(lines: Iterable<string>, record: (target: string, inlinks: Buffer) => void): number {
  let target: string | undefined;
  const inlinks = new InlinksBuilder();
  let targets = 0;
  let previous = '';
  const flush = () => {
    if (target === undefined) return;
    record(target, inlinks.view());
    targets++;
  };
  for (const line of lines) {
    if (line === previous) continue;
    previous = line;
    const cut = line.indexOf(LINK_SEP);
    const to = line.slice(0, cut);
    if (to !== target) {
      flush();
      target = to;
      inlinks.clear();
    }
    // The sort lines' byte strings are the Text payloads (UTF-8).
    const anchorAt = line.indexOf(LINK_SEP, cut + 1);
    if (inlinks.count < MAX_INLINKS) inlinks.add(line.slice(cut + 1, anchorAt), line.slice(anchorAt + 1));
  }
  flush();
  return targets;
}
