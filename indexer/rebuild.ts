/**
 * The indexer daemon's loop (`sherlock indexer run`): every
 * indexer.poll_interval it looks at what was stored since the current index
 * version (backlog.ts) and builds a new version when it is due:
 *
 *   - no version yet, and at least one bucket stored;
 *   - indexer.rebuild_documents buckets stored since the current version;
 *   - the current version older than indexer.rebuild_interval, and at least
 *     one bucket stored since.
 *
 * One build at a time: the loop waits for it (and build.lock keeps out a
 * `sherlock index build` run by hand; the daemon then tries again later).
 * Builds run in a worker thread (build-worker.ts) so that this thread keeps
 * sending watchdog pings and taking signals. A failed build is logged and
 * tried again after a back-off that doubles from poll_interval up to
 * rebuild_interval.
 *
 * Stop: stop('abandon') asks the build in progress to stop before its next
 * stage and waits for it; stop('now') terminates its thread at once. Either
 * way `current` keeps naming a whole version (publish.ts): the build's
 * half-made directory is removed now or by the next build.
 */

import { Worker } from 'node:worker_threads';
import { logger, type Level } from '../common/log.js';
import { SiteRules } from '../common/site-rules.js';
import { BacklogWatch, type Backlog } from './backlog.js';
import type { BuildJob, BuildMessage } from './build-worker.js';
import type { BuildReport } from './build.js';
import type { IndexerConfig } from './config.js';

const log = logger('indexer');

export interface RebuilderOptions {
  state: string;
  config: IndexerConfig;
  /** The site rules the builds follow; none when absent. */
  rules?: SiteRules;
  logLevel: Level;
  /** A short line on what the daemon does (STATUS= for systemd). */
  onStatus?: (text: string) => void;
  /** Each published version. */
  onBuilt?: (report: BuildReport) => void;
  /** Each failed build (not one abandoned on stop), after how many seconds. */
  onFailed?: (seconds: number) => void;
}

export class Rebuilder {
  private config: IndexerConfig;
  private rules: SiteRules;
  private readonly watch: BacklogWatch;
  private stopping = false;
  private wake: (() => void) | undefined;
  private build: { worker: Worker; stop: Int32Array } | undefined;
  private failures = 0;
  private retryAt = 0;

  constructor(private readonly options: RebuilderOptions) {
    this.config = options.config;
    this.rules = options.rules ?? SiteRules.none;
    this.watch = new BacklogWatch(options.state);
  }

  /** New config values and site rules (SIGHUP): the rule and the build after the one in progress use them. */
  reload(config: IndexerConfig, rules = this.rules): void {
    this.config = config;
    this.rules = rules;
    this.wake?.();
  }

  stop(mode: 'abandon' | 'now'): void {
    this.stopping = true;
    if (this.build !== undefined) {
      if (mode === 'now') void this.build.worker.terminate();
      else Atomics.store(this.build.stop, 0, 1);
    }
    this.wake?.();
  }

  /** Until stop(): look, build when due, sleep. */
  async run(): Promise<void> {
    while (!this.stopping) {
      const now = Date.now();
      const backlog = this.watch.look();
      if (now >= this.retryAt && this.due(backlog, now)) {
        const built = await this.runBuild();
        if (built) {
          this.failures = 0;
          this.retryAt = 0;
        } else if (!this.stopping) {
          this.failures += 1;
          this.retryAt = Date.now() + Math.min(this.config.rebuild_interval, this.config.poll_interval * 2 ** this.failures);
        }
        continue;
      }
      this.options.onStatus?.(`index ${backlog.version ?? 'none yet'}; ${backlog.buckets} buckets stored since`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.config.poll_interval);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private due(backlog: Backlog, now: number): boolean {
    if (backlog.buckets === 0) return false;
    if (backlog.builtAt === undefined) return true;
    return backlog.buckets >= this.config.rebuild_documents || now - backlog.builtAt >= this.config.rebuild_interval;
  }

  /** One build in its thread; true when a version was published. */
  private runBuild(): Promise<boolean> {
    const stop = new Int32Array(new SharedArrayBuffer(4));
    const job: BuildJob = { state: this.options.state, config: this.config, rules: this.rules.sources, logLevel: this.options.logLevel, stop };
    const worker = new Worker(new URL('./build-worker.js', import.meta.url), { workerData: job });
    this.build = { worker, stop };
    log.notice('building an index version');
    this.options.onStatus?.('building: starting');
    let built = false;
    const started = Date.now();
    const failed = (problem: string): void => {
      log.err('index build failed; current version kept', { problem });
      this.options.onFailed?.((Date.now() - started) / 1000);
    };
    return new Promise((resolve) => {
      worker.on('message', (message: BuildMessage) => {
        if (message.kind === 'progress') {
          this.options.onStatus?.(`building: ${message.stage} ${message.done}${message.total > message.done ? `/${message.total}` : ''}`);
        } else if (message.kind === 'done') {
          built = true;
          this.options.onBuilt?.(message.report);
        } else if (message.code === 'SHERLOCK_ABORTED') {
          log.notice('build abandoned: stopping');
        } else {
          failed(message.message);
        }
      });
      worker.on('error', (err) => failed(err.stack ?? err.message));
      worker.on('exit', () => {
        this.build = undefined;
        resolve(built);
      });
    });
  }
}
