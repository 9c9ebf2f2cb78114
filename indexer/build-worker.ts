/**
 * One build (build.ts) in a worker thread, for the indexer daemon: the
 * stages are long and mostly synchronous, and on the daemon's own thread
 * they would starve its watchdog pings and signal handling.
 *
 * workerData: BuildJob. Messages to the parent: BuildMessage ('progress' as
 * the stages go, then 'done' with the report or 'failed' with the error's
 * code and text). The parent asks the build to stop by setting `stop[0]`
 * (a shared Int32Array) to 1; the build checks it before each stage and
 * then fails with SHERLOCK_ABORTED, leaving `current` as it was.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { isSherlockError } from '../common/errors.js';
import { setLogLevel, type Level } from '../common/log.js';
import { SiteRules, type RuleSource } from '../common/site-rules.js';
import { buildIndex, type BuildReport, type Stage } from './build.js';
import type { IndexerConfig } from './config.js';

export interface BuildJob {
  state: string;
  config: IndexerConfig;
  /** The site rule files, compiled again in the worker (SiteRules do not cross threads). */
  rules: readonly RuleSource[];
  logLevel: Level;
  /** Int32Array over a SharedArrayBuffer; 1 asks the build to stop. */
  stop: Int32Array;
}

export type BuildMessage =
  | { kind: 'progress'; stage: Stage; done: number; total: number }
  | { kind: 'done'; report: BuildReport }
  | { kind: 'failed'; code?: string; message: string };

/** Progress goes to the parent at most this often (and at each new stage). */
const PROGRESS_MS = 500;

const job = workerData as BuildJob;
const post = (message: BuildMessage): void => parentPort!.postMessage(message);
setLogLevel(job.logLevel);
let shown = { stage: '', at: 0 };
try {
  const report = await buildIndex({
    state: job.state,
    config: job.config,
    rules: SiteRules.fromTexts(job.rules),
    onProgress: (stage, done, total) => {
      const now = Date.now();
      if (stage === shown.stage && now - shown.at < PROGRESS_MS) return;
      shown = { stage, at: now };
      post({ kind: 'progress', stage, done, total });
    },
    stopRequested: () => Atomics.load(job.stop, 0) === 1,
  });
  post({ kind: 'done', report });
} catch (err) {
  post({ kind: 'failed', ...(isSherlockError(err) ? { code: err.code, message: err.describe() } : { message: err instanceof Error ? (err.stack ?? err.message) : String(err) }) });
}
