/**
 * The scale part's rebuild and swap (issue 31): on a copy of a scale state
 * with its index built, a running searcher answers the query set without
 * pause from LOAD_SOCKETS WebSockets while 1 % new documents are appended to
 * the bucket file, `sherlock indexer run` (the daemon) notices them, builds
 * and publishes a new version, and the searcher swaps to it. Measured: the
 * daemon's rebuild (spawn to "index version published"), the searcher's
 * load of the new version (its log line's `ms`), publish to the first status
 * event naming the new version (the searcher looks at `current` every 5 s),
 * and every query answered meanwhile: none may fail.
 *
 * The copy hard-links every file of the state but the bucket file (copied,
 * since documents are appended to it); new files (the ARC file of the added
 * documents, the new version) land in the copy only. It is removed after.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, linkSync, mkdirSync, readdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { bucketFilePath } from '../common/bucket/file.js';
import { trackChild, untrackChild } from './measure.js';
import type { BenchContext } from './parts.js';
import { appendScaleDocuments, type ScaleCorpus } from './scale-corpus.js';
import { cliPath, searcherArgs } from './sherlock.js';
import { waitHealthy } from './ws-load.js';

/** Sockets sending the query set one query at a time each, during the whole measurement. */
const LOAD_SOCKETS = 4;
/** Share of the corpus appended before the rebuild. */
const ADDED_SHARE = 0.01;
/** Load to warm up, then to measure before the daemon starts, and after the swap is seen, ms each. */
const SETTLE_MS = 2000;
/** The whole measurement's bound. */
const TIMEOUT_MS = 3_600_000;

export interface SwapOutcome {
  added: number;
  /** Daemon spawned to its "index version published" line. */
  rebuildS: number;
  /** The searcher's own load of the new version (open, check, self-test). */
  loadMs: number | undefined;
  /** Published to the first status event naming the new version. */
  visibleS: number;
  cardsBefore: number;
  cardsAfter: number;
  /** Queries answered in the SETTLE_MS before the daemon started (after as many to warm up), and from then to the end. */
  before: Latencies;
  during: Latencies;
}

export interface Latencies {
  answered: number;
  failed: number;
  p50: number;
  p99: number;
}

/** Every file of `from` hard-linked under `to` (symlinks made again), but `copied`, which is copied. */
function linkTree(from: string, to: string, copied: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) linkTree(source, target, copied);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else if (source === copied) copyFileSync(source, target);
    else linkSync(source, target);
  }
}

function latencies(samples: Array<{ ms: number; ok: boolean }>): Latencies {
  const ok = samples.filter((s) => s.ok).map((s) => s.ms).sort((a, b) => a - b);
  const at = (q: number): number => ok[Math.min(ok.length - 1, Math.floor(q * ok.length))] ?? 0;
  return { answered: samples.length, failed: samples.length - ok.length, p50: at(0.5), p99: at(0.99) };
}

/** A child process whose stderr lines are watched; `waitFor` resolves with the first line matching. */
class Watched {
  private lines: string[] = [];
  private waiters: Array<{ pattern: RegExp; resolve: (line: string) => void; reject: (err: Error) => void }> = [];
  readonly pid: number;

  constructor(
    readonly what: string,
    private readonly child: ChildProcess,
  ) {
    if (child.pid === undefined) throw new Error(`${what} did not start`);
    this.pid = child.pid;
    trackChild(this.pid);
    let partial = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      const parts = (partial + d).split('\n');
      partial = parts.pop()!;
      for (const line of parts) this.line(line);
    });
  }

  private line(line: string): void {
    this.lines = [...this.lines.slice(-20), line];
    this.waiters = this.waiters.filter((w) => {
      if (!w.pattern.test(line)) return true;
      w.resolve(line);
      return false;
    });
  }

  /** The first line matching `pattern` from now; rejects after `timeoutMs` or when the process is stopped. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<string> {
    const waiting = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.what}: no line matching ${pattern} within ${timeoutMs / 1000} s; last: ${this.lines.slice(-3).join(' / ')}`)), timeoutMs);
      this.waiters.push({ pattern, resolve: (line) => (clearTimeout(timer), resolve(line)), reject: (err) => (clearTimeout(timer), reject(err)) });
    });
    // Awaited or not (the measurement may fail before it needs the line), a rejection is never left unhandled.
    waiting.catch(() => undefined);
    return waiting;
  }

  /** SIGTERM to its process group; resolves once it has exited. */
  async stop(): Promise<void> {
    for (const waiter of this.waiters.splice(0)) waiter.reject(new Error(`${this.what} stopped`));
    const exited = this.child.exitCode !== null || this.child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    try {
      process.kill(-this.pid, 'SIGTERM');
    } catch {
      // gone
    }
    await exited;
    untrackChild(this.pid);
  }
}

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'sherlock.v1');
    ws.once('open', () => resolve(ws));
    // Before the open, an error fails it; after, the 'close' that follows does (an 'error' without a listener would throw).
    ws.on('error', reject);
  });
}

/** The searcher's status events: the version each names, as they come. */
class StatusWatch {
  version: string | undefined;
  cards = 0;
  private waiting: { version: string; resolve: () => void } | undefined;

  constructor(ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { type: string; data?: { index?: string; engine?: { cards?: number } } };
      if (msg.type !== 'event' || msg.data === undefined) return;
      this.version = msg.data.index;
      this.cards = msg.data.engine?.cards ?? 0;
      if (this.waiting !== undefined && this.version !== this.waiting.version) this.waiting.resolve();
    });
    ws.send(JSON.stringify({ type: 'subscribe', id: 'status', topic: 'status' }));
  }

  /** Resolves at the first event naming another version than `version`. */
  changed(version: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.version !== undefined && this.version !== version) resolve();
      else this.waiting = { version, resolve };
    });
  }
}

/** One socket asking the query set over and over, one at a time, until stopped; rejects if the searcher closes it. */
function ask(ws: WebSocket, queries: readonly string[], offset: number, samples: Array<{ at: number; ms: number; ok: boolean }>, stopped: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    let i = offset;
    let sent = 0;
    const next = (): void => {
      if (stopped()) {
        ws.off('close', closed);
        resolve();
        return;
      }
      sent = performance.now();
      ws.send(JSON.stringify({ type: 'search', id: `q${i}`, q: queries[i % queries.length]!, limit: 10 }));
    };
    const closed = (): void => reject(new Error('the searcher closed a load socket'));
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { type: string; id?: string };
      if (msg.id !== `q${i}`) return;
      samples.push({ at: sent, ms: performance.now() - sent, ok: msg.type === 'result' });
      i += 1;
      next();
    });
    ws.on('close', closed);
    next();
  });
}

/** Rebuild with 1 % new documents under load, on a copy of `corpus`'s state (its index built). */
export async function rebuildUnderLoad(ctx: BenchContext, corpus: ScaleCorpus, log: (line: string) => void): Promise<SwapOutcome> {
  const copy = join(corpus.dir, 'rebuild', 'state');
  rmSync(join(corpus.dir, 'rebuild'), { recursive: true, force: true });
  const running: Watched[] = [];
  const sockets: WebSocket[] = [];
  try {
    linkTree(corpus.state, copy, bucketFilePath(corpus.state));
    // Appended before the load starts: making them keeps this process busy, which would count in the load's latencies.
    const added = Math.max(1, Math.round(corpus.docs * ADDED_SHARE));
    log(`scale ${corpus.docs}: ${added} documents appended to a copy of the state; the searcher under load, then the indexer daemon`);
    await appendScaleDocuments(corpus, copy, added);
    const port = ctx.opts.port + 1;
    const searcher = new Watched(
      'sherlock searcher',
      spawn(process.execPath, [...searcherArgs(ctx, copy, port), '--set', 'searcher.status_interval=100ms'], { stdio: ['ignore', 'ignore', 'pipe'], detached: true }),
    );
    running.push(searcher);
    await waitHealthy(`http://127.0.0.1:${port}/healthz`, 120_000);
    const url = `ws://127.0.0.1:${port}/`;
    const statusSocket = await open(url);
    sockets.push(statusSocket);
    const status = new StatusWatch(statusSocket);
    const load: WebSocket[] = [];
    for (let i = 0; i < LOAD_SOCKETS; i++) load.push(await open(url));
    sockets.push(...load);
    const queries = ctx.queries.map((q) => q.q);
    const samples: Array<{ at: number; ms: number; ok: boolean }> = [];
    let stop = false;
    const asking = Promise.all(load.map((ws, i) => ask(ws, queries, Math.floor((i * queries.length) / LOAD_SOCKETS), samples, () => stop)));
    // Rejects as soon as a load socket is lost; never resolves otherwise.
    const loadFailed = new Promise<never>((_, reject) => void asking.catch(reject));
    loadFailed.catch(() => undefined);
    // The first SETTLE_MS warm the searcher (JIT, caches) and are not counted; the next are "before".
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const warm = performance.now();
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const versionBefore = status.version;
    const cardsBefore = status.cards;
    if (versionBefore === undefined) throw new Error('the searcher sent no status event');
    const daemonStart = performance.now();
    const daemon = new Watched(
      'sherlock indexer run',
      spawn(process.execPath, [cliPath(ctx), 'indexer', 'run', '--state', copy, '--set', 'indexer.poll_interval=100ms', '--set', `indexer.rebuild_documents=${added}`], {
        stdio: ['ignore', 'ignore', 'pipe'],
        detached: true,
      }),
    );
    running.push(daemon);
    const loaded = searcher.waitFor(/index version loaded .*previous=(?!none)/, TIMEOUT_MS);
    await Promise.race([daemon.waitFor(/index version published/, TIMEOUT_MS), loadFailed]);
    const published = performance.now();
    await Promise.race([status.changed(versionBefore), loadFailed]);
    const visible = performance.now();
    const loadMs = Number(/ ms=(\d+)/.exec(await loaded)?.[1] ?? NaN);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    stop = true;
    await asking;
    return {
      added,
      rebuildS: (published - daemonStart) / 1000,
      loadMs: Number.isFinite(loadMs) ? loadMs : undefined,
      visibleS: (visible - published) / 1000,
      cardsBefore,
      cardsAfter: status.cards,
      before: latencies(samples.filter((s) => s.at >= warm && s.at < daemonStart)),
      during: latencies(samples.filter((s) => s.at >= daemonStart)),
    };
  } finally {
    for (const ws of sockets) ws.terminate();
    for (const child of running.reverse()) await child.stop();
    rmSync(join(corpus.dir, 'rebuild'), { recursive: true, force: true });
  }
}
