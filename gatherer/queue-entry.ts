/**
 * What a queue entry's URL rest holds besides the path. The queue file keeps
 * the seed's entry (url rest, NUL, u32 priority); the gatherer needs a little
 * more per URL, so the rest it stores is the path and query of the canonical
 * URL followed by TAB-separated hints. A canonical URL never holds a TAB (the
 * WHATWG parser strips it from input and percent-encodes nothing into one),
 * so the split is unambiguous.
 *
 *   m=<HTTP date>   If-Modified-Since to send (from the plan)
 *   e=<entity tag>  If-None-Match to send (from the plan)
 *   r=<n>           temporary failures so far
 *   w=<Unix s>      not to be fetched before then (a retry)
 *   o=<seq>         this entry retries the entry with that seq (lets recovery
 *                   tell whether a retry was already queued)
 */

export interface QueuedUrl {
  /** Path and query of the canonical URL. */
  rest: string;
  ifModifiedSince?: string;
  ifNoneMatch?: string;
  retries: number;
  notBefore?: number;
  retryOf?: number;
}

export function encodeQueued(q: QueuedUrl): string {
  const parts = [q.rest];
  if (q.ifModifiedSince !== undefined) parts.push(`m=${q.ifModifiedSince}`);
  if (q.ifNoneMatch !== undefined) parts.push(`e=${q.ifNoneMatch}`);
  if (q.retries > 0) parts.push(`r=${q.retries}`);
  if (q.notBefore !== undefined) parts.push(`w=${q.notBefore}`);
  if (q.retryOf !== undefined) parts.push(`o=${q.retryOf}`);
  return parts.join('\t');
}

/** Reads an entry back; hints it does not know are ignored (the queue file, not an outside input, wrote them). */
export function decodeQueued(text: string): QueuedUrl {
  const [rest, ...hints] = text.split('\t');
  const q: QueuedUrl = { rest: rest!, retries: 0 };
  for (const hint of hints) {
    const value = hint.slice(2);
    switch (hint.slice(0, 2)) {
      case 'm=':
        q.ifModifiedSince = value;
        break;
      case 'e=':
        q.ifNoneMatch = value;
        break;
      case 'r=':
        q.retries = Number(value) || 0;
        break;
      case 'w=':
        if (/^\d+$/.test(value)) q.notBefore = Number(value);
        break;
      case 'o=':
        if (/^\d+$/.test(value)) q.retryOf = Number(value);
        break;
    }
  }
  return q;
}
