/**
 * The R links of a document that is not HTML (a feed's entries, a PDF's or
 * an office file's hyperlinks): each resolved against the document's URL and
 * canonicalised, stored once at its first occurrence, at most `max` of them.
 * index() gives the number a link bracket in the text names (doc-text.ts).
 */

import type { Link } from '../common/bucket/doc-body.js';
import { canonicalOrNone } from '../common/url.js';

export class LinkList {
  readonly links: Link[] = [];
  private readonly seen = new Map<string, number>();
  private unusable = 0;
  private overCap = 0;

  constructor(
    private readonly base: string,
    private readonly max: number,
    /** How the problems name these links ("feed links", "PDF links"). */
    private readonly what: string,
  ) {}

  /** The index of `raw`'s link, added when new; undefined when it has no canonical form or is over the cap. */
  index(raw: string): number | undefined {
    const url = canonicalOrNone(raw.trim(), this.base);
    if (url === undefined) {
      this.unusable += 1;
      return undefined;
    }
    let n = this.seen.get(url);
    if (n === undefined) {
      if (this.links.length >= this.max) {
        this.overCap += 1;
        return undefined;
      }
      n = this.links.length;
      this.links.push({ type: 'R', url });
      this.seen.set(url, n);
    }
    return n;
  }

  /** What was dropped, one sentence each. */
  problems(): string[] {
    const problems: string[] = [];
    if (this.unusable > 0) problems.push(`${this.unusable} ${this.what} without a canonical form dropped`);
    if (this.overCap > 0) problems.push(`${this.overCap} ${this.what} beyond ${this.max} dropped`);
    return problems;
  }
}
