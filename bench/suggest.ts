/**
 * The suggestions part (`--only suggest`, issue 34): completions asked in
 * process (searcher/suggest.ts runSuggest over an IndexEngine, as a search
 * thread answers them, without the socket) on sherlock's index of the set,
 * for the set's queries typed letter by letter: every prefix of every
 * query, in order, as a user's keystrokes send them. Measured: the median
 * and p99 of one suggest, the median ÷ the 2 ms target, how many prefixes
 * got a completion, the Suggestions file's words and titles, its load time
 * and the memory it holds.
 */

import { join } from 'node:path';
import { SUGGESTIONS_FILE, Suggestions } from '../common/index/suggestions.js';
import { IndexEngine } from '../searcher/index-engine.js';
import { runSuggest } from '../searcher/suggest.js';
import type { Column, Row, Table } from './report.js';
import { ensureIndex } from './sherlock.js';
import { percentile } from './stats.js';
import type { BenchContext } from './parts.js';

const TARGET_MS = 2;
const LIMIT = 8;
/** Untimed passes first: the JIT's. */
const WARMUP_PASSES = 1;

/** Every prefix of every query, letter by letter. */
export function typedPrefixes(queries: readonly string[]): string[] {
  return queries.flatMap((q) => Array.from({ length: q.length }, (_, i) => q.slice(0, i + 1)));
}

const COLUMNS: readonly Column[] = [
  { key: 'prefixes', label: 'prefixes', format: 'int' },
  { key: 'answered', label: 'with a completion', format: 'dec3' },
  { key: 'p50', label: 'median ms', format: 'ms' },
  { key: 'p99', label: 'p99 ms', format: 'ms' },
  { key: 'ratio', label: 'median ÷ 2 ms', format: 'dec3' },
  { key: 'words', label: 'words', format: 'int' },
  { key: 'titles', label: 'titles', format: 'int' },
  { key: 'loadMs', label: 'load ms', format: 'ms' },
  { key: 'bytes', label: 'MiB held', format: 'mib' },
];

async function measure(ctx: BenchContext, state: string, log: (line: string) => void): Promise<Row> {
  const version = join(state, 'index', 'current');
  const t0 = performance.now();
  const file = Suggestions.open(join(version, SUGGESTIONS_FILE));
  const loadMs = performance.now() - t0;
  const engine = await IndexEngine.start({ state, pollMs: 0 });
  try {
    const prefixes = typedPrefixes(ctx.queries.map((query) => query.q));
    const context = { engine, config: { query_timeout: 10_000 } };
    const signal = new AbortController().signal;
    const times: number[] = [];
    let answered = 0;
    for (let pass = 0; pass < WARMUP_PASSES + ctx.opts.runs; pass++) {
      for (const q of prefixes) {
        const sent = performance.now();
        const outcome = await runSuggest(context, { q, limit: LIMIT }, signal);
        const ms = performance.now() - sent;
        if (!outcome.ok) throw new Error(`suggest ${JSON.stringify(q)}: ${outcome.error.code} ${outcome.error.message}`);
        if (pass < WARMUP_PASSES) continue;
        times.push(ms);
        if (outcome.result.suggestions.length > 0) answered++;
      }
    }
    const p50 = percentile(times, 50);
    log(`suggest: ${times.length} prefixes, median ${p50.toFixed(3)} ms, p99 ${percentile(times, 99).toFixed(3)} ms, median ÷ ${TARGET_MS} ms ${(p50 / TARGET_MS).toFixed(3)}`);
    return {
      name: 'sherlock, in process',
      status: 'ok',
      values: { prefixes: times.length, answered: answered / times.length, p50, p99: percentile(times, 99), ratio: p50 / TARGET_MS, words: file.words.count, titles: file.titles.count, loadMs, bytes: file.bytes },
    };
  } finally {
    engine.close();
  }
}

export async function suggestTable(ctx: BenchContext, log: (line: string) => void): Promise<Table> {
  let row: Row;
  try {
    row = await measure(ctx, await ensureIndex(ctx), log);
  } catch (err) {
    log(`suggest failed: ${err instanceof Error ? err.message : String(err)}`);
    row = { name: 'sherlock, in process', status: 'failed', message: (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 160) };
  }
  return {
    id: 'suggest',
    title: `Suggestions — the set's queries typed letter by letter on the ${ctx.opts.set} set`,
    subtitle:
      `Every prefix of the set's ${ctx.queries.length} queries, limit ${LIMIT}, asked in process (runSuggest over an IndexEngine, no socket) one at a time after ${WARMUP_PASSES} untimed pass; ` +
      `${ctx.opts.runs} timed pass(es). Target: median ≤ ${TARGET_MS} ms.`,
    columns: COLUMNS,
    ratios: [],
    peers: [],
    sherlock: row,
    sherlockLabel: row.name,
    notes: ['"load ms" and "MiB held": opening the Suggestions file alone (its body, record offsets, ranks and range-maximum trees), which each search thread holds.'],
  };
}
