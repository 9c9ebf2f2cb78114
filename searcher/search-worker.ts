/**
 * One search thread of the PoolEngine (pool-engine.ts): an IndexEngine of
 * its own over `state/index/current`, answering the searches the main
 * thread posts. It looks at `current` only when told (the pool polls for
 * every thread), so the threads swap together and the pool knows when.
 *
 * Takedowns come from the pool, which follows the file: the set at start in
 * the worker data, each change as a message answered once it applies. The
 * site rules come the same way, as their files' texts (SIGHUP).
 *
 * Messages in: {search, id, request} | {suggest, id, request} | {cancel, id} | {check, id} |
 * {resize, id, caches} | {takedowns, id, takedowns} | {has, id, urls} |
 * {rules, id, rules}.
 * Messages out: {result, id, json, version} (the SearchResult as JSON text,
 * made once here so the main thread only splices it into its answer, and the
 * version that answered) | {suggestions, id, result} |
 * {failed, id, noIndex, message} | {checked, id, version, status} | {applied, id} |
 * {found, id, found} (whether the version has a card of each URL).
 */

import { parentPort, workerData } from 'node:worker_threads';
import { SiteRules, type RuleSource } from '../common/site-rules.js';
import { TakedownSet, type Takedown } from '../common/takedowns.js';
import { NoIndexError } from './engine.js';
import { IndexEngine } from './index-engine.js';
import type { CacheSizes } from './index-version.js';

export interface SearchWorkerData {
  state: string;
  caches: CacheSizes;
  /** Only the first thread logs the versions it loads. */
  logLoads: boolean;
  /** The takedowns in force (TakedownSet entries). */
  takedowns: readonly Takedown[];
  /** The site rules' files (SiteRules.sources), made into rules again here. */
  rules: readonly RuleSource[];
}

const port = parentPort!;
const { state, caches, logLoads, takedowns, rules } = workerData as SearchWorkerData;
const engine = await IndexEngine.start({ state, pollMs: 0, caches, logLoads, takedowns: TakedownSet.of(takedowns), rules: SiteRules.fromTexts(rules) });
const running = new Map<number, AbortController>();
/** A suggest takes microseconds: it is not cancelled (the main thread answers a timeout itself). */
const NEVER = new AbortController().signal;

/** A failed call as the pool reads it. */
function failed(id: number, err: unknown): Record<string, unknown> {
  return { type: 'failed', id, noIndex: err instanceof NoIndexError, message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
}

port.on('message', (message: { type: 'search' | 'suggest' | 'cancel' | 'check' | 'resize' | 'takedowns' | 'has' | 'rules'; id: number; request?: never; caches?: CacheSizes; takedowns?: Takedown[]; urls?: string[]; rules?: RuleSource[] }) => {
  switch (message.type) {
    case 'search': {
      const controller = new AbortController();
      running.set(message.id, controller);
      // The version search() takes now is the one that answers (the result cache keeps only results of the version of their key).
      const version = engine.version;
      engine.search(message.request!, controller.signal).then(
        (result) => port.postMessage({ type: 'result', id: message.id, json: JSON.stringify(result), version }),
        (err: unknown) => port.postMessage(failed(message.id, err)),
      ).finally(() => running.delete(message.id));
      return;
    }
    case 'suggest':
      engine.suggest(message.request!, NEVER).then(
        (result) => port.postMessage({ type: 'suggestions', id: message.id, result }),
        (err: unknown) => port.postMessage(failed(message.id, err)),
      );
      return;
    case 'cancel':
      running.get(message.id)?.abort();
      return;
    case 'resize':
      engine.resize(message.caches!);
      return;
    case 'takedowns':
      engine.setTakedowns(TakedownSet.of(message.takedowns!));
      port.postMessage({ type: 'applied', id: message.id });
      return;
    case 'has':
      port.postMessage({ type: 'found', id: message.id, found: engine.hasUrls(message.urls!) });
      return;
    case 'rules':
      engine.setRules(SiteRules.fromTexts(message.rules!));
      port.postMessage({ type: 'applied', id: message.id });
      return;
    case 'check':
      void engine.check().then(() => port.postMessage({ type: 'checked', id: message.id, version: engine.version, status: engine.status() }));
      return;
  }
});
port.postMessage({ type: 'checked', id: 0, version: engine.version, status: engine.status() });
