/**
 * How a query of the set (sherlock's language: words ANDed, "…" a phrase) is
 * said to each peer that takes a query string. Lucene and Xapian build their
 * query objects from the words directly (bench/lucene, bench/xapian).
 */

import type { Query } from '../queries.js';

/** The FTS5 MATCH expression: each word a quoted string, ANDed; or one quoted phrase. */
export function fts5Match(q: Query): string {
  const quote = (w: string): string => `"${w.replaceAll('"', '""')}"`;
  return q.phrase ? quote(q.words.join(' ')) : q.words.map(quote).join(' AND ');
}
