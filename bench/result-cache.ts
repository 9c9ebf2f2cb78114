/**
 * The result cache part (`--only result-cache`, issue 33): `sherlock
 * searcher run` over sherlock's index of the set answers a repeated query
 * mix, one query at a time over one WebSocket, as users' searches repeat:
 * MIX_QUERIES drawn from the set's query set by a Zipf law (the query of
 * rank r with weight 1/r, the ranks shuffled by a seeded generator), so the
 * same mix every run. After each answer the searcher's /metrics says
 * whether the cache answered it (its hits counter moved), so a hit is
 * what the searcher counted, whatever the query text. Measured: the hit
 * rate, the latency (send to result) of hits and of misses, p50 of a hit ÷
 * p50 of a miss, and the cache's bytes against its bound; with the default
 * bound and with SMALL_BOUND, which the mix overflows.
 */

import { spawn } from 'node:child_process';
import WebSocket from 'ws';
import { trackChild, untrackChild } from './measure.js';
import { mulberry32, type Query } from './queries.js';
import type { Column, Row, Table } from './report.js';
import { ensureIndex, searcherArgs } from './sherlock.js';
import { percentile } from './stats.js';
import { SEARCHER_PORT_OFFSET, waitHealthy } from './ws-load.js';
import type { BenchContext } from './parts.js';

const MIX_QUERIES = 2000;
/** --quick (CI's small set) asks fewer. */
const QUICK_MIX_QUERIES = 500;
const DEFAULT_BOUND = '64MiB';
const SMALL_BOUND = '512KiB';
const SEED = 0x33c4c4e;

/** `count` queries of `queries`, the one of rank r drawn with weight 1/r; ranks are a seeded shuffle of the set. */
export function zipfMix(queries: readonly string[], count: number, seed: number): string[] {
  const random = mulberry32(seed);
  const ranked = [...queries];
  for (let i = ranked.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [ranked[i], ranked[j]] = [ranked[j]!, ranked[i]!];
  }
  const cumulative: number[] = [];
  let sum = 0;
  for (let r = 1; r <= ranked.length; r++) cumulative.push((sum += 1 / r));
  return Array.from({ length: count }, () => {
    const u = random() * sum;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return ranked[lo]!;
  });
}

interface Measured {
  hits: number[];
  misses: number[];
  /** The cache's figures at the end, from /metrics. */
  entries: number;
  bytes: number;
  bound: number;
  evictions: number;
  /** The most bytes /metrics showed after any query. */
  peakBytes: number;
}

/** The searcher's result-cache figures from /metrics. */
async function cacheFigures(http: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${http}/metrics`)).text();
  const figures: Record<string, number> = {};
  for (const m of text.matchAll(/^sherlock_searcher_result_cache_(\w+) (\S+)$/gm)) figures[m[1]!] = Number(m[2]);
  return figures;
}

/** One WebSocket to the searcher, asking one query at a time. */
async function openSocket(url: string): Promise<{ ask(q: string): Promise<void>; close(): void }> {
  const ws = new WebSocket(url, 'sherlock.v1');
  const waiting = new Map<string, { resolve(): void; reject(err: Error): void }>();
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as { type: string; id?: string; code?: string; message?: string };
    const waiter = message.id === undefined ? undefined : waiting.get(message.id);
    if (waiter === undefined) return;
    waiting.delete(message.id!);
    if (message.type === 'result') waiter.resolve();
    else waiter.reject(new Error(`answered ${message.type} ${message.code ?? ''}: ${message.message ?? ''}`));
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let next = 0;
  return {
    ask: (q) =>
      new Promise<void>((resolve, reject) => {
        const id = String(next++);
        waiting.set(id, { resolve, reject });
        ws.send(JSON.stringify({ type: 'search', id, q }));
      }),
    close: () => ws.terminate(),
  };
}

/** The mix against a searcher with `result_cache = bound`. */
async function measure(ctx: BenchContext, state: string, mix: readonly string[], bound: string): Promise<Measured> {
  const port = ctx.opts.port + SEARCHER_PORT_OFFSET;
  const http = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...searcherArgs(ctx, state, port), '--set', `searcher.result_cache=${bound}`], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  if (child.pid === undefined) throw new Error('sherlock searcher did not start');
  const pid = child.pid;
  trackChild(pid);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  try {
    await waitHealthy(`${http}/healthz`, 60_000);
    const socket = await openSocket(`ws://127.0.0.1:${port}/`);
    const out: Measured = { hits: [], misses: [], entries: 0, bytes: 0, bound: 0, evictions: 0, peakBytes: 0 };
    let hitsBefore = 0;
    for (const q of mix) {
      const sent = performance.now();
      await socket.ask(q);
      const ms = performance.now() - sent;
      const figures = await cacheFigures(http);
      (figures['hits_total']! > hitsBefore ? out.hits : out.misses).push(ms);
      hitsBefore = figures['hits_total']!;
      out.peakBytes = Math.max(out.peakBytes, figures['bytes']!);
    }
    socket.close();
    const end = await cacheFigures(http);
    return { ...out, entries: end['entries']!, bytes: end['bytes']!, bound: end['limit_bytes']!, evictions: end['evictions_total']! };
  } catch (err) {
    throw new Error(`${String(err)}${stderr === '' ? '' : '\nsherlock searcher stderr: ' + stderr.trim().split('\n').slice(-3).join(' / ')}`);
  } finally {
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      // gone
    }
    untrackChild(pid);
  }
}

function row(name: string, m: Measured): Row {
  const p50Hit = percentile(m.hits, 50);
  const p50Miss = percentile(m.misses, 50);
  return {
    name,
    status: 'ok',
    values: {
      queries: m.hits.length + m.misses.length,
      hitRate: m.hits.length / (m.hits.length + m.misses.length),
      hitP50: p50Hit,
      hitP90: percentile(m.hits, 90),
      missP50: p50Miss,
      missP90: percentile(m.misses, 90),
      ratio: p50Hit / p50Miss,
      entries: m.entries,
      peakBytes: m.peakBytes,
      bound: m.bound,
      evictions: m.evictions,
    },
    ...(m.peakBytes > m.bound ? { message: `OVER ITS BOUND: ${m.peakBytes} bytes of ${m.bound}` } : {}),
  };
}

const COLUMNS: readonly Column[] = [
  { key: 'queries', label: 'queries', format: 'int' },
  { key: 'hitRate', label: 'hit rate', format: 'dec3' },
  { key: 'hitP50', label: 'hit p50 ms', format: 'ms' },
  { key: 'hitP90', label: 'hit p90 ms', format: 'ms' },
  { key: 'missP50', label: 'miss p50 ms', format: 'ms' },
  { key: 'missP90', label: 'miss p90 ms', format: 'ms' },
  { key: 'ratio', label: 'p50 hit ÷ p50 miss', format: 'dec3' },
  { key: 'entries', label: 'entries', format: 'int' },
  { key: 'peakBytes', label: 'most MiB held', format: 'mib' },
  { key: 'bound', label: 'bound MiB', format: 'mib' },
  { key: 'evictions', label: 'evictions', format: 'int' },
];

/** The part's table: the default bound as sherlock's row, SMALL_BOUND above it. */
export async function resultCacheTable(ctx: BenchContext, log: (line: string) => void): Promise<Table> {
  const count = ctx.opts.set === 'small' ? QUICK_MIX_QUERIES : MIX_QUERIES;
  const mix = zipfMix(
    ctx.queries.map((query: Query) => query.q),
    count,
    SEED,
  );
  const distinct = new Set(mix).size;
  const name = (bound: string) => `sherlock, result_cache = ${bound}`;
  const rows: Row[] = [];
  for (const bound of [SMALL_BOUND, DEFAULT_BOUND]) {
    try {
      const state = await ensureIndex(ctx);
      log(`result cache: ${count} queries (${distinct} distinct) with result_cache = ${bound}`);
      const measured = await measure(ctx, state, mix, bound);
      const done = row(name(bound), measured);
      log(`  hit rate ${done.values!['hitRate']!.toFixed(3)}, p50 hit ${done.values!['hitP50']!.toFixed(3)} ms, miss ${done.values!['missP50']!.toFixed(2)} ms, ratio ${done.values!['ratio']!.toFixed(3)}`);
      rows.push(done);
    } catch (err) {
      log(`  result cache with ${bound} failed: ${err instanceof Error ? err.message : String(err)}`);
      rows.push({ name: name(bound), status: 'failed', message: (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 160) });
    }
  }
  return {
    id: 'result-cache',
    title: `Result cache — a repeated query mix on the ${ctx.opts.set} set`,
    subtitle:
      `${count} queries (${distinct} distinct) drawn from the set's ${ctx.queries.length} by a Zipf law (rank r with weight 1/r, seeded), one at a time over one WebSocket to \`sherlock searcher run\`; ` +
      'a hit is a search the searcher counted as one (/metrics, read after each answer); latency is send to result. Target: p50 hit ÷ p50 miss ≤ 0.1, the bytes held never above the bound.',
    columns: COLUMNS,
    ratios: [],
    peers: rows.slice(0, 1),
    sherlock: rows[1]!,
    sherlockLabel: rows[1]!.name,
    notes: [`"most MiB held": the largest sherlock_searcher_result_cache_bytes seen after any query; ${SMALL_BOUND} is smaller than the mix's distinct answers, so that row shows evictions and the bound holding.`],
  };
}
