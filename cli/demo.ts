/**
 * `sherlock demo [--listen HOST:PORT] [--state DIR] [--keep]`: the whole
 * appliance in one command, on a bundled sample. It serves the four sample
 * sites of demo/ on loopback addresses, crawls them into a state directory
 * (the shepherd and the gatherer as `sherlock crawl --until-idle` runs them),
 * builds an index version, starts the searcher, and prints the address to
 * open ("open http://HOST:PORT/") on stdout. The sample sites keep serving
 * beside the searcher, so the results' links work.
 *
 * The demo's own settings come first among the --set values (the user's
 * --set still win): loopback addresses allowed, no pause between requests,
 * quieter logs. The state is a fresh temporary directory, removed at the end
 * unless --keep; a --state directory must be empty (or new) and is kept.
 *
 * The searcher listens from the start (a port in use fails the demo before
 * the crawl) and loads the index once it is built. SIGTERM or SIGINT, at
 * any stage, stop everything in order (searcher, crawl, sample sites) and
 * the command exits 0. Its first log line says which deflate path is in use
 * (the libdeflate binding or node:zlib, common/deflate/libdeflate.ts).
 */

import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Command } from 'commander';
import { SherlockError } from '../common/errors.js';
import { deflatePathFields } from '../common/deflate/libdeflate.js';
import { logger } from '../common/log.js';
import { startSampleSites, type SampleSites } from '../demo/server.js';
import { buildIndex } from '../indexer/build.js';
import { readToken } from '../searcher/auth.js';
import { cacheSizes } from '../searcher/config.js';
import { IndexEngine } from '../searcher/index-engine.js';
import { SearchServer } from '../searcher/server.js';
import { spoolSeeds } from '../shepherd/seed-inbox.js';
import { action, print } from './command.js';
import { describeCrawl, runCrawl } from './crawl.js';
import { describeBuild } from './index.js';
import { checkListen } from './searcher.js';
import { loadSettings, type GlobalOptions } from './settings.js';

const log = logger('demo');

/** What makes a crawl of loopback sites fast; the user's own --set come after and win. */
const DEMO_SETS = ['log.level=notice', 'gatherer.allow_private_addresses=true', 'gatherer.min_delay=0s'];

/** Queries worth trying on the sample, printed under the address. */
const TRY = ['"stone bridge"', 'kolace', 'creme brulee', 'config*', 'mill NEAR/5 river', 'dumplings -plum', 'site:127.0.0.4 cache'];

interface DemoOptions {
  listen?: string;
  state?: string;
  keep?: boolean;
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('serve a bundled sample of four sites, crawl and index them, and search them in the browser')
    .option('--listen <host:port>', 'where the searcher listens (default: searcher.listen); port 0 takes a free one')
    .option('--state <dir>', 'crawl into this directory (empty or new; kept) instead of a temporary one')
    .option('--keep', 'keep the temporary state directory at the end')
    .action(action((opts: DemoOptions, cmd: Command) => demo(opts, cmd.optsWithGlobals<GlobalOptions>())));
}

async function demo(opts: DemoOptions, globals: GlobalOptions): Promise<number> {
  const listen = opts.listen === undefined ? undefined : checkListen(opts.listen);
  const { config, rules } = loadSettings({ ...globals, set: [...DEMO_SETS, ...(globals.set ?? [])] });
  log.notice('deflate', deflatePathFields());
  const token = readToken(config.searcher.token_file);
  const state = opts.state ?? mkdtempSync(join(tmpdir(), 'sherlock-demo-'));
  const temporary = opts.state === undefined;
  if (!temporary) {
    mkdirSync(state, { recursive: true });
    if (readdirSync(state).length > 0) throw new SherlockError('SHERLOCK_USAGE', `--state: ${state} is not empty; the demo crawls into a new or empty directory`);
  }

  let stopRequested = false;
  let stop: (signal: string) => void = () => undefined;
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  const onSignal = (signal: string): void => {
    stopRequested = true;
    stop(signal);
  };
  process.on('SIGTERM', onSignal).on('SIGINT', onSignal);
  let sites: SampleSites | undefined;
  let engine: IndexEngine | undefined;
  let server: SearchServer | undefined;
  try {
    sites = await startSampleSites();
    // Listening first: a port in use fails the demo at once, not after the crawl.
    engine = await IndexEngine.start({ state, pollMs: 0, caches: cacheSizes(config.searcher), onTakedowns: () => server?.results.clear(), rules });
    server = await listenOrExplain({ ...config.searcher, listen: listen ?? config.searcher.listen }, token, engine, state);
    for (const site of sites.sites) print(`sample site ${site.origin}/  ${site.name} (${site.pages} pages)`);
    print(`state ${state}${temporary && opts.keep !== true ? ' (removed when the demo stops; --keep keeps it)' : ''}`);
    await spoolSeeds(state, Readable.from([sites.seeds.join('\n') + '\n']), 'sherlock demo');
    print(describeCrawl(await runCrawl(state, config, { untilIdle: true, stopped: () => stopRequested })));
    if (stopRequested) return 0;
    print(describeBuild(await buildIndex({ state, config: config.indexer, keepWork: false })));
    if (stopRequested) return 0;
    await engine.check();
    if (engine.version === undefined) throw new SherlockError('SHERLOCK_CORRUPT_INDEX', 'the index version just built did not load (see the log above)', { file: join(state, 'index', 'current') });
    print(`open http://${server.address}/`);
    print(`try: ${TRY.join('  ')}`);
    print('Ctrl-C stops the demo.');
    log.notice('stopping', { signal: await stopped });
  } finally {
    process.off('SIGTERM', onSignal).off('SIGINT', onSignal);
    await server?.close();
    engine?.close();
    await sites?.close();
    if (temporary && opts.keep !== true) rmSync(state, { recursive: true, force: true });
  }
  return 0;
}

async function listenOrExplain(config: Parameters<typeof SearchServer.listen>[0]['config'], token: string | undefined, engine: IndexEngine, state: string): Promise<SearchServer> {
  try {
    return await SearchServer.listen({ config, token, engine, state });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    throw new SherlockError('SHERLOCK_USAGE', `--listen: ${config.listen} is in use; give another, or --listen 127.0.0.1:0 for any free port`, {}, { cause: err });
  }
}
