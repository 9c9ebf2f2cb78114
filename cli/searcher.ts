/**
 * `sherlock searcher run --state DIR [--listen HOST:PORT]`: the searcher
 * daemon: the WebSocket API, the search page and /healthz on one port.
 *
 * The engine (searcher/index-engine.ts) searches the version
 * `state/index/current` names and swaps to a new one live (it looks every few
 * seconds, and at once on SIGHUP); until a version exists every search is
 * answered NO_INDEX and /healthz is 503, which is the truth.
 *
 * With `searcher.collections` it searches several state directories, each
 * with its own pool of threads (searcher/collections-engine.ts); the list
 * is read at start only.
 *
 * SIGTERM (or SIGINT) stops listening, answers searches in flight
 * UNAVAILABLE and closes every socket (1001). SIGHUP reloads the config file,
 * the site rules (their result_cap) and the token file; everything but
 * `listen` and `collections` (read at start only) takes effect at once.
 */

import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { configRelative } from '../common/config.js';
import { SherlockError } from '../common/errors.js';
import { logger } from '../common/log.js';
import { readToken } from '../searcher/auth.js';
import { cacheSizes, searchThreads, searcherConfig } from '../searcher/config.js';
import type { SiteRules } from '../common/site-rules.js';
import { takedownFilePath } from '../common/takedowns.js';
import { CollectionsEngine } from '../searcher/collections-engine.js';
import { shares } from '../searcher/index-version.js';
import type { SearcherConfig } from '../searcher/config.js';
import { PoolEngine } from '../searcher/pool-engine.js';
import type { ResultCache } from '../searcher/result-cache.js';
import { SearchServer } from '../searcher/server.js';
import { Synonyms } from '../searcher/synonyms.js';
import { STATE_HELP, action, stateDir } from './command.js';
import { daemon } from './daemon.js';
import { daemonRegistry } from './metrics.js';
import { loadSettings, type GlobalOptions } from './settings.js';

const log = logger('searcher');

export function registerSearcher(program: Command): void {
  const searcher = program.command('searcher').description('the search daemon: WebSocket API (sherlock.v1), search page, /healthz');

  searcher
    .command('run')
    .description('answer searches until stopped (SIGTERM stops, SIGHUP reloads config)')
    .option('--state <dir>', STATE_HELP)
    .option('--listen <host:port>', 'where to listen (default: searcher.listen); port 0 takes a free one')
    .action(
      action(async (opts: { state?: string; listen?: string }, cmd: Command) => {
        const globals = cmd.optsWithGlobals<GlobalOptions>();
        const state = stateDir(opts);
        if (!statSync(state, { throwIfNoEntry: false })?.isDirectory()) throw new SherlockError('SHERLOCK_USAGE', `--state: no directory ${state}`);
        const listen = opts.listen === undefined ? undefined : checkListen(opts.listen);
        const settings = () => {
          const loaded = loadSettings(globals);
          const config = loaded.config.searcher;
          const synonyms = config.synonyms_file === '' ? Synonyms.NONE : Synonyms.load(config.synonyms_file);
          return { config: listen === undefined ? config : { ...config, listen }, token: readToken(config.token_file), synonyms, rules: loaded.rules, configFile: loaded.files[0] };
        };
        const { config, token, synonyms, rules, configFile } = settings();
        // A takedown changes answers without a new version: the result cache forgets them once every thread has applied it.
        let results: ResultCache | undefined;
        const engine = await startEngine(state, config, configFile, rules, () => results?.clear());
        // The search threads keep the process alive: a searcher that cannot listen stops them.
        const server = await SearchServer.listen({ config, token, synonyms, engine, registry: daemonRegistry(), state }).catch((err: unknown) => {
          engine.close();
          throw err;
        });
        results = server.results;
        let stop: (signal: string) => void = () => undefined;
        const stopped = new Promise<string>((resolve) => (stop = resolve));
        const d = daemon({
          stop,
          reload() {
            const next = settings();
            server.reload(next.config, next.token, next.synonyms);
            engine.resize(cacheSizes(next.config));
            // New result caps change answers as a takedown does: the cache forgets them once every thread has the rules.
            void engine.setRules(next.rules).then((changed) => {
              if (changed) {
                results?.clear();
                log.notice('site rules applied', { rules: next.rules.rules.length });
              }
            });
            void engine.check();
          },
        });
        // Logged once the signal handlers are in place: whoever waits for this line may signal at once.
        log.notice('searcher listening', { address: server.address, token: token !== undefined, index: engine.version ?? 'none: every search answers NO_INDEX' });
        try {
          d.ready(`listening on ${server.address}; index ${engine.version ?? 'none'}`);
          log.notice('stopping', { signal: await stopped });
          await server.close();
        } finally {
          engine.close();
          d.close();
        }
        log.notice('searcher stopped');
      }),
    );
}

/**
 * The engine of `searcher run`: one pool over `state`, or, with collections,
 * one pool each with an equal share of the threads (at least one) and of
 * the caches, each following every collection's takedowns. A relative
 * collection directory is from the config file's directory (configRelative,
 * as `[sites] dir`), not the working directory.
 */
async function startEngine(state: string, config: SearcherConfig, configFile: string | undefined, rules: SiteRules, onTakedowns: () => void): Promise<PoolEngine | CollectionsEngine> {
  const threads = searchThreads(config.search_threads);
  if (config.collections.length === 0) return PoolEngine.start({ state, threads, caches: cacheSizes(config), onTakedowns, rules });
  const states = config.collections.map(({ name, state: dir }) => {
    const at = resolve(configRelative(dir, configFile));
    if (!statSync(at, { throwIfNoEntry: false })?.isDirectory()) throw new SherlockError('SHERLOCK_BAD_CONFIG', `searcher.collections: collection "${name}": no directory ${at}`, { key: 'searcher.collections' });
    return at;
  });
  const n = states.length;
  const caches = shares(cacheSizes(config), n);
  const takedownFiles = states.map(takedownFilePath);
  const started: PoolEngine[] = [];
  try {
    for (const dir of states) {
      started.push(await PoolEngine.start({ state: dir, threads: Math.max(1, Math.floor(threads / n)), caches, takedownFiles, onTakedowns, rules }));
    }
  } catch (err) {
    for (const pool of started) pool.close();
    throw err;
  }
  return new CollectionsEngine(config.collections.map(({ name }, i) => ({ name, state: states[i]!, engine: started[i]! })));
}

export function checkListen(text: string): string {
  const checked = searcherConfig.shape.listen.safeParse(text);
  if (!checked.success) throw new SherlockError('SHERLOCK_USAGE', `--listen: ${checked.error.issues[0]?.message ?? 'expected HOST:PORT'}, not ${JSON.stringify(text)}`);
  return checked.data;
}
