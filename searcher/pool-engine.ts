/**
 * The Engine of `sherlock searcher run`: searches run in a pool of threads
 * (`searcher.search_threads`, search-worker.ts), each with an IndexEngine
 * of its own, so that the searcher uses every core and a long search holds
 * one thread while the others keep answering. The main thread keeps the
 * sockets, parses queries and splices each thread's result, already JSON
 * text, into its answer (engine.ts EncodedResult).
 *
 * A search goes to the thread with the fewest searches in flight (ties in
 * turn). Each
 * thread holds its own Lexicon and CardInfo and a 1/N share of the cache
 * budgets (`searcher.chain_cache`, `card_cache`), so the caches' memory does
 * not grow with the threads (SIGHUP resizes them: resize()). Only the first
 * thread logs the versions it loads. The pool polls `current` for every thread; a
 * thread swaps as IndexEngine does (never failing a search in flight), and
 * `version` is the first thread's. A thread that dies is logged, its
 * searches fail as INTERNAL, and a new one takes its place.
 *
 * Takedowns: the pool follows `state/takedowns` (takedowns.ts), or, in a
 * searcher of several collections, every collection's file (their union),
 * and hands each new set to every thread; once all have applied it (a
 * search posted later reaches a thread after the set), `onTakedowns` is called.
 * The site rules go the same way (setRules, on SIGHUP), as their files' texts.
 */

import { Worker } from 'node:worker_threads';
import { logger } from '../common/log.js';
import { SiteRules } from '../common/site-rules.js';
import { TakedownSet, takedownFilePath } from '../common/takedowns.js';
import { NoIndexError, type EncodedResult, type Engine, type SearchRequest, type SuggestRequest, type SuggestResult } from './engine.js';
import { shares, type CacheSizes } from './index-version.js';
import type { SearchWorkerData } from './search-worker.js';
import { TakedownWatch } from './takedowns.js';

const log = logger('searcher');

const DEFAULT_POLL_MS = 5000;

export interface PoolEngineOptions {
  state: string;
  threads: number;
  /** The budgets of the whole searcher; each thread gets its share. */
  caches: CacheSizes;
  /** How often to look at `current`; 0: only on check(). */
  pollMs?: number;
  /** The takedown files followed, their union in force; default: the state's own. */
  takedownFiles?: readonly string[];
  /** Called once every thread has applied a change of the takedowns. */
  onTakedowns?: () => void;
  /** The site rules at start (setRules changes them). */
  rules?: SiteRules;
}

type Reply =
  | { type: 'result'; id: number; json: string; version: string | undefined }
  | { type: 'suggestions'; id: number; result: SuggestResult }
  | { type: 'failed'; id: number; noIndex: boolean; message: string }
  | { type: 'checked'; id: number; version: string | undefined; status: Record<string, unknown> }
  | { type: 'applied'; id: number }
  | { type: 'found'; id: number; found: boolean[] };

interface Waiting {
  resolve(reply: Reply): void;
  reject(err: Error): void;
}

/** One search thread and what it was asked and has not answered yet. */
class Thread {
  readonly worker: Worker;
  readonly waiting = new Map<number, Waiting>();
  searches = 0;
  version: string | undefined;
  status: Record<string, unknown> = { index: null };
  readonly ready: Promise<void>;

  constructor(data: SearchWorkerData, onExit: (thread: Thread, why: string) => void) {
    this.worker = new Worker(new URL('./search-worker.js', import.meta.url), { workerData: data });
    this.ready = new Promise((resolve, reject) => {
      this.waiting.set(0, { resolve: () => resolve(), reject });
    });
    // A thread started in place of a lost one is awaited by no one: its failure is logged by lost().
    this.ready.catch(() => undefined);
    this.worker.on('message', (reply: Reply) => {
      if (reply.type === 'checked') {
        this.version = reply.version;
        this.status = reply.status;
      }
      const waiting = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      waiting?.resolve(reply);
    });
    this.worker.on('error', (err) => onExit(this, err.stack ?? err.message));
    this.worker.on('exit', (code) => onExit(this, `exit status ${code}`));
  }

  ask(id: number, message: Record<string, unknown>): Promise<Reply> {
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...message, id });
    });
  }

  failAll(err: Error): void {
    for (const waiting of this.waiting.values()) waiting.reject(err);
    this.waiting.clear();
  }
}

export class PoolEngine implements Engine {
  private readonly threads: Thread[] = [];
  private data: SearchWorkerData;
  private readonly timer: NodeJS.Timeout | undefined;
  private next = 1;
  private turn = 0;
  private closed = false;
  private checking: Promise<void> | undefined;
  private readonly takedowns: TakedownWatch[];

  private constructor(private readonly options: PoolEngineOptions) {
    const files = options.takedownFiles ?? [takedownFilePath(options.state)];
    this.takedowns = files.map((file) => new TakedownWatch(file, () => void this.applyTakedowns(this.inForce())));
    this.data = { state: options.state, caches: shares(options.caches, options.threads), logLoads: true, takedowns: this.inForce().entries, rules: (options.rules ?? SiteRules.none).sources };
    for (let i = 0; i < options.threads; i++) this.threads.push(this.spawn(i));
    const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    if (pollMs > 0) {
      this.timer = setInterval(() => void this.check(), pollMs);
      this.timer.unref();
    }
  }

  /** Starts the threads; resolves once each has loaded the current version (or found none). */
  static async start(options: PoolEngineOptions): Promise<PoolEngine> {
    const engine = new PoolEngine(options);
    try {
      await Promise.all(engine.threads.map((thread) => thread.ready));
    } catch (err) {
      engine.close();
      throw err;
    }
    return engine;
  }

  get version(): string | undefined {
    return this.threads[0]?.version;
  }

  /** The first thread's status, with its cache budgets × the threads: the searcher's, as the first thread last said. */
  status(): Record<string, unknown> {
    const n = this.threads.length;
    const first = this.threads[0]?.status ?? { index: null };
    const whole = (bytes: unknown) => (typeof bytes === 'number' ? bytes * n : bytes);
    return { ...first, threads: n, takedowns: this.data.takedowns.length, chain_cache: whole(first['chain_cache']), card_cache: whole(first['card_cache']) };
  }

  /** New budgets for the whole searcher (SIGHUP): each thread resizes its share now, and a thread started later gets it. */
  resize(caches: CacheSizes): void {
    this.data = { ...this.data, caches: shares(caches, this.threads.length) };
    for (const thread of this.threads) thread.worker.postMessage({ type: 'resize', id: 0, caches: this.data.caches });
  }

  /** Every thread looks at `current` and swaps if it changed; one check at a time. */
  check(): Promise<void> {
    this.checking ??= Promise.all(this.threads.map((thread) => thread.ask(this.next++, { type: 'check' }).catch(() => undefined)))
      .then(() => undefined)
      .finally(() => (this.checking = undefined));
    return this.checking;
  }

  /** The union of the takedowns in force in every file followed. */
  private inForce(): TakedownSet {
    return TakedownSet.of(this.takedowns.flatMap((watch) => watch.current().entries));
  }

  /** Every thread takes `set`; threads started later get it with their data. */
  private async applyTakedowns(set: TakedownSet): Promise<void> {
    this.data = { ...this.data, takedowns: set.entries };
    await Promise.all(this.threads.map((thread) => thread.ask(this.next++, { type: 'takedowns', takedowns: set.entries }).catch(() => undefined)));
    log.notice('takedowns applied', { in_force: set.size });
    this.options.onTakedowns?.();
  }

  /**
   * Every thread takes `rules` (SIGHUP); threads started later get them with
   * their data. Resolves once all have applied them: true, or false at once
   * when the rule files say what they said before (nothing to forget).
   */
  async setRules(rules: SiteRules): Promise<boolean> {
    if (JSON.stringify(rules.sources) === JSON.stringify(this.data.rules)) return false;
    this.data = { ...this.data, rules: rules.sources };
    await Promise.all(this.threads.map((thread) => thread.ask(this.next++, { type: 'rules', rules: rules.sources }).catch(() => undefined)));
    return true;
  }

  async search(request: SearchRequest, signal: AbortSignal): Promise<EncodedResult> {
    signal.throwIfAborted();
    const thread = this.pick();
    const id = this.next++;
    const cancel = () => thread.worker.postMessage({ type: 'cancel', id });
    signal.addEventListener('abort', cancel, { once: true });
    thread.searches += 1;
    try {
      const reply = await thread.ask(id, { type: 'search', request });
      if (reply.type === 'result') return { json: reply.json, version: reply.version };
      if (reply.type === 'failed' && reply.noIndex) throw new NoIndexError();
      throw new Error(reply.type === 'failed' ? reply.message : `unexpected reply ${reply.type}`);
    } finally {
      thread.searches -= 1;
      signal.removeEventListener('abort', cancel);
    }
  }

  /** Completions, by the thread with the fewest searches in flight: they take microseconds, and are not counted as searches. */
  async suggest(request: SuggestRequest, signal: AbortSignal): Promise<SuggestResult> {
    signal.throwIfAborted();
    const reply = await this.pick().ask(this.next++, { type: 'suggest', request });
    if (reply.type === 'suggestions') return reply.result;
    if (reply.type === 'failed' && reply.noIndex) throw new NoIndexError();
    throw new Error(reply.type === 'failed' ? reply.message : `unexpected reply ${reply.type}`);
  }

  /** Whether the loaded version has a card of each URL (canonical); none without a version. */
  async hasUrls(urls: readonly string[]): Promise<boolean[]> {
    if (urls.length === 0) return [];
    const reply = await this.pick().ask(this.next++, { type: 'has', urls });
    if (reply.type !== 'found') throw new Error(`unexpected reply ${reply.type}`);
    return reply.found;
  }

  /** The thread with the fewest searches in flight; ties go round, so every thread sees every kind of query and warms its caches with them. */
  private pick(): Thread {
    const n = this.threads.length;
    const from = this.turn++ % n;
    let thread = this.threads[from]!;
    for (let i = 1; i < n; i++) {
      const other = this.threads[(from + i) % n]!;
      if (other.searches < thread.searches) thread = other;
    }
    return thread;
  }

  /** Stops polling and the threads; searches still in flight fail. */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    for (const watch of this.takedowns) watch.close();
    for (const thread of this.threads) void thread.worker.terminate();
  }

  /** The thread for place `at`: the first logs the versions it loads, the others keep quiet (one line per swap). */
  private spawn(at: number): Thread {
    return new Thread({ ...this.data, logLoads: at === 0 }, (thread, why) => this.lost(thread, why));
  }

  private lost(thread: Thread, why: string): void {
    const at = this.threads.indexOf(thread);
    thread.failAll(new Error(`search thread stopped: ${why}`));
    if (this.closed || at < 0) return;
    log.err('a search thread stopped; starting another', { problem: why });
    this.threads[at] = this.spawn(at);
  }
}
