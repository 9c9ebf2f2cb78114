/**
 * Relevance judgments and the two figures computed from them.
 *
 * A judgment set is a committed TSV file in bench/relevance/: '#' comment
 * lines saying where the judgments come from (package, version, method), then
 * one query a line:
 *
 *   query TAB page TAB page …
 *
 * the query in plain lower-case words (no quotes, no operators: what a user
 * types), each page a `package:/path` inside that package's document root
 * (`python3.11-doc:/library/os.html`), never a URL: addresses and ports are
 * the bench's choice, the page is the package's. Files are written by the
 * derivation scripts beside this one, never by hand.
 *
 * Figures, over the queries of a set, each engine's top 10 compared by page:
 *   MRR@10      mean of 1 ÷ rank of the first relevant page in the top 10 (0 when none is)
 *   success@10  share of queries with a relevant page in the top 10
 */

import { decodePath } from '../site.js';
import type { SiteLayout } from '../site.js';

export interface Judgment {
  readonly query: string;
  /** `package:/path` of each relevant page. */
  readonly relevant: readonly string[];
}

export function formatJudgments(judgments: readonly Judgment[], header: readonly string[]): string {
  return [...header.map((h) => `# ${h}`), ...judgments.map((j) => [j.query, ...j.relevant].join('\t'))].join('\n') + '\n';
}

export function parseJudgments(text: string): Judgment[] {
  const out: Judgment[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const [query, ...relevant] = line.split('\t');
    if (query === undefined || query === '' || relevant.length === 0 || relevant.some((p) => !/^[^:\s]+:\//.test(p))) {
      throw new Error(`judgments: bad line ${JSON.stringify(line.slice(0, 120))}`);
    }
    out.push({ query, relevant });
  }
  return out;
}

/** The relevance sets' queries as a bench query file (kind `judged`: words, ANDed), for every engine's search command. */
export function judgedQueryFile(judgments: readonly Judgment[]): string {
  return judgments.map((j) => `judged\t${j.query}`).join('\n') + '\n';
}

/**
 * The words of an index term or a link text as a query: runs of letters,
 * digits and `_`, joined by a single `.` or `-` inside a run (identifiers
 * such as `os.path.join` and `c_int` stay whole, each engine cuts them its
 * own way), with at least one letter or digit, lower-cased. Everything else
 * (quotes, brackets, `$`, `*`, `:`, `=`, a leading `-`, a lone `_`) is left
 * out: no engine then sees an operator.
 */
export function queryWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}_]+(?:[.-][\p{L}\p{N}_]+)*/gu) ?? []).filter((w) => /[\p{L}\p{N}]/u.test(w)).map((w) => w.normalize('NFC'));
}

/** A page's identity in judgments (`package:/path`) from a hit's URL: the host's package by address, the path decoded; undefined off the site. */
export function pageOf(layout: SiteLayout, url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const host = layout.hosts.find((h) => h.address === u.hostname);
  return host === undefined ? undefined : `${host.pkg}:${decodePath(u.pathname)}`;
}

export interface Effectiveness {
  queries: number;
  mrr: number;
  success: number;
  /** Per query: rank (1–10) of the first relevant page, 0 when none is in the top 10. */
  ranks: number[];
}

/** MRR@10 and success@10 of one engine's answers (each a list of pages, best first) to the set's queries, in the same order. */
export function effectiveness(judgments: readonly Judgment[], answers: readonly (readonly (string | undefined)[])[], k = 10): Effectiveness {
  if (answers.length !== judgments.length) throw new RangeError(`answers to ${answers.length} queries, ${judgments.length} judged`);
  const ranks = judgments.map((j, q) => {
    const relevant = new Set(j.relevant);
    const at = answers[q]!.slice(0, k).findIndex((page) => page !== undefined && relevant.has(page));
    return at + 1;
  });
  const n = ranks.length;
  return {
    queries: n,
    mrr: n === 0 ? Number.NaN : ranks.reduce((s, r) => s + (r > 0 ? 1 / r : 0), 0) / n,
    success: n === 0 ? Number.NaN : ranks.filter((r) => r > 0).length / n,
    ranks,
  };
}
