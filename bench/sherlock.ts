/**
 * sherlock's side of every table, driven only through the CLI contract of
 * DESIGN §2 — the same commands operators use:
 *
 *   gathering  `sherlock crawl --state DIR --seeds FILE --until-idle`
 *   indexing   `sherlock index build --state DIR` (on the state the crawl left)
 *   searching  `sherlock searcher run --state DIR --listen 127.0.0.1:PORT`, then
 *              the query set over WebSocket (subprotocol sherlock.v1, DESIGN §7);
 *              and `sherlock search --bench-queries FILE` (hidden): the same
 *              queries timed inside one process, as the peers are
 *   exports    `sherlock export cdx|warc|nutch --state DIR --out …`
 *
 * An entry is available only when `sherlock help` lists its command; until then
 * its row says "not built yet". Nothing here measures anything but the real
 * command. Every command gets `--set gatherer.allow_private_addresses=true`
 * (the site is on loopback), `--set shepherd.scope=host` (as the peers: each
 * crawl stays on the seeds' hosts) and the bench's own `--sherlock-set` values.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { check, run } from './measure.js';
import { sizeOf } from './peers/engines.js';
import { answersFile, queriesOverWebSocket, SEARCHER_PORT_OFFSET, WS_CLIENTS, WS_DEPTH } from './ws-load.js';
import { runUrlDbWorker } from './urldb-run.js';
import { FETCH_MIX } from './urldb-workload.js';
import type {
  Availability,
  BenchContext,
  BuildResult,
  EngineEntry,
  ExportEntry,
  ExportResult,
  GatherEntry,
  GatherResult,
  SearchResult,
  UrlDbEntry,
  UrlDbResult,
} from './parts.js';

/** The subcommands `sherlock help [group]` lists (empty when the CLI or group is missing). */
export function listedCommands(helpText: string): Set<string> {
  const out = new Set<string>();
  const lines = helpText.split('\n');
  const start = lines.findIndex((l) => /^Commands:\s*$/.test(l));
  if (start < 0) return out;
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) break;
    const m = /^ {2}([a-z][\w-]*)/.exec(line);
    if (m !== null) out.add(m[1]!);
  }
  return out;
}

export function cliPath(ctx: BenchContext): string {
  return join(ctx.repoRoot, 'dist', 'cli', 'sherlock.js');
}

const helpCache = new Map<string, Set<string>>();
function commands(ctx: BenchContext, group: readonly string[]): Set<string> {
  const key = group.join(' ');
  const cached = helpCache.get(key);
  if (cached !== undefined) return cached;
  let found = new Set<string>();
  if (existsSync(cliPath(ctx))) {
    const r = spawnSync(process.execPath, [cliPath(ctx), 'help', ...group], { encoding: 'utf8', timeout: 30_000 });
    if (r.status === 0) found = listedCommands(r.stdout + r.stderr);
  }
  helpCache.set(key, found);
  return found;
}

/** True when `sherlock <group…> <name>` exists. */
export function hasCommand(ctx: BenchContext, path: readonly string[]): boolean {
  for (let i = 0; i < path.length; i++) if (!commands(ctx, path.slice(0, i)).has(path[i]!)) return false;
  return true;
}

function notBuilt(command: string): Availability {
  return { status: 'not-built', reason: `\`sherlock ${command}\` does not exist yet` };
}

export function sets(ctx: BenchContext): string[] {
  return ['--set', 'gatherer.allow_private_addresses=true', '--set', 'shepherd.scope=host', ...ctx.opts.sherlockSet.flatMap((s) => ['--set', s])];
}

/** The state directory the last sherlock crawl left, reused by indexing, searching and exports. */
export function stateDir(ctx: BenchContext): string {
  return join(ctx.workDir, 'sherlock', 'state');
}

/** The benchmark's gatherer settings, as wget runs: no wait between requests, one immediate retry. */
const GATHERER_SETS = ['gatherer.min_delay=0s', 'gatherer.retry_delay=0s', 'gatherer.max_retries=1'];

async function crawlInto(ctx: BenchContext, state: string): Promise<GatherResult> {
  rmSync(state, { recursive: true, force: true });
  mkdirSync(state, { recursive: true });
  const r = check(
    'sherlock crawl',
    await run(process.execPath, [cliPath(ctx), 'crawl', '--state', state, '--seeds', ctx.seedsFile, '--until-idle', ...sets(ctx), ...GATHERER_SETS.flatMap((s) => ['--set', s])], {
      timeoutMs: 3_600_000,
      keepOutput: 20_000,
    }),
  );
  return { wallMs: r.wallMs, peakRss: r.peakRss, cpuMs: r.cpuMs };
}

export const sherlockGather: GatherEntry = {
  name: 'sherlock crawl',
  how:
    'sherlock: `sherlock crawl --state DIR --seeds FILE --until-idle` with the seeds every peer gets (one entry page per host) and ' +
    GATHERER_SETS.map((s) => `--set ${s}`).join(' ') +
    ' (as wget: no wait, one immediate retry); robots.txt, Crawl-delay, ARC and bucket writing, parsing and the URL database on.',
  async available(ctx) {
    return hasCommand(ctx, ['crawl']) ? true : notBuilt('crawl');
  },
  async crawl(ctx) {
    return crawlInto(ctx, stateDir(ctx));
  },
};

/** Makes sure a crawled state exists (an untimed crawl when the gathering part was skipped). */
async function ensureState(ctx: BenchContext): Promise<string> {
  const state = stateDir(ctx);
  if (!existsSync(state) || readdirSync(state).length === 0) {
    if (ctx.server === undefined) throw new Error('no sherlock crawl state and the site server is not running');
    ctx.log('sherlock: no crawl state yet, crawling once (untimed)');
    await crawlInto(ctx, state);
  }
  return state;
}

/** The state with an index version published (an untimed build when none is yet), for the parts that only search it. */
export async function ensureIndex(ctx: BenchContext): Promise<string> {
  const state = await ensureState(ctx);
  // An index built before the Suggestions file was is built again: the suggest part reads it.
  if (!existsSync(join(state, 'index', 'current', 'Suggestions'))) {
    ctx.log('sherlock: no index (or one without Suggestions) yet, building once (untimed)');
    check('sherlock index build', await run(process.execPath, [cliPath(ctx), 'index', 'build', '--state', state, '--json', ...sets(ctx)], { timeoutMs: 3_600_000 }));
  }
  return state;
}

/** Size of the published index version (`index/current`), or of the whole index folder. */
function indexSize(state: string): number {
  const current = join(state, 'index', 'current');
  if (existsSync(current)) {
    const st = lstatSync(current);
    if (st.isSymbolicLink()) return sizeOf(realpathSync(current));
    if (st.isFile()) {
      const name = readFileSync(current, 'utf8').trim();
      if (name !== '' && existsSync(join(state, 'index', name))) return sizeOf(join(state, 'index', name));
    }
  }
  return sizeOf(join(state, 'index'));
}

export const sherlockEngine: EngineEntry = {
  name: 'sherlock index build / searcher',
  how:
    'sherlock: `sherlock index build --state DIR` on the state of its own crawl of the site (size: the published index version); ' +
    '`sherlock searcher run --listen 127.0.0.1:PORT`, then the query set over one WebSocket (sherlock.v1), one query at a time, ' +
    `latency = send to result; then under load: ${WS_CLIENTS} WebSockets with ${WS_DEPTH} queries in flight each, the same passes over the query set between them. ` +
    ' In-process: `sherlock search --state DIR --bench-queries FILE` with the same passes, each query timed ' +
    'ranked only (matching, totals, top 10, facets) and whole (with the hits\' cards and snippets).',
  async available(ctx) {
    if (!hasCommand(ctx, ['index', 'build'])) return notBuilt('index build');
    if (!hasCommand(ctx, ['crawl'])) return notBuilt('crawl');
    return true;
  },
  async build(ctx): Promise<BuildResult> {
    const state = await ensureState(ctx);
    const r = check(
      'sherlock index build',
      await run(process.execPath, [cliPath(ctx), 'index', 'build', '--state', state, '--json', ...sets(ctx)], { timeoutMs: 3_600_000 }),
    );
    const report = JSON.parse(r.stdout) as { cards: number };
    return { wallMs: r.wallMs, peakRss: r.peakRss, docs: report.cards, sizeBytes: indexSize(state) };
  },
  async search(ctx): Promise<SearchResult> {
    if (!hasCommand(ctx, ['searcher', 'run'])) throw new NotBuiltError(notBuilt('searcher run'));
    const state = await ensureState(ctx);
    const port = ctx.opts.port + SEARCHER_PORT_OFFSET;
    const { out, http, peakRss, startupMs } = await queriesOverWebSocket(ctx, 'sherlock searcher', searcherArgs(ctx, state, port), port, answersFile(ctx), false, true);
    const local = check(
      'sherlock search --bench-queries',
      await run(
        process.execPath,
        [cliPath(ctx), 'search', '--state', state, '--bench-queries', ctx.queryFile, '--passes', String(ctx.opts.passes), '--warmup', String(ctx.opts.warmup), ...sets(ctx)],
        { timeoutMs: 1_800_000, measureRss: false },
      ),
    );
    const inProcess = JSON.parse(local.stdout.trim().split('\n').pop() ?? '{}') as { rankMs: number[]; searchMs: number[] };
    return { latenciesMs: out.latenciesMs, zeroHits: out.zeroHits, peakRss, startupMs, inProcess, top: out.top, concurrent: out.concurrent, ...(http === undefined ? {} : { http }) };
  },
};

/**
 * `sherlock searcher run` on a state; the query set arrives back to back, so
 * the per-connection and per-IP rate limits are off (they would refuse most
 * of it). The result cache is off too: the passes repeat the query set, and
 * the tables measure the engine (the cache has a table of its own,
 * result-cache.ts, which turns it on with a later --set).
 */
export function searcherArgs(ctx: BenchContext, state: string, port: number): string[] {
  const unlimited = ['--set', 'searcher.message_rate=0', '--set', 'searcher.ip_search_rate=0', '--set', 'searcher.result_cache=0'];
  return [cliPath(ctx), 'searcher', 'run', '--state', state, '--listen', `127.0.0.1:${port}`, ...sets(ctx), ...unlimited];
}

/**
 * The relevance table's side of sherlock (bench/relevance/): each query of
 * `ctx.queryFile`, asked once over the WebSocket as a user's search is
 * (top 10, sherlock.v1), against the index of the state `stateDir(ctx)`.
 * Returns each query's hit URLs, best first (none for a query the searcher
 * refused), and the refused ones with the error's code.
 */
export async function sherlockTop(ctx: BenchContext): Promise<{ top: string[][]; refused: Array<{ q: string; code: string | undefined }> }> {
  if (!hasCommand(ctx, ['searcher', 'run'])) throw new NotBuiltError(notBuilt('searcher run'));
  const state = await ensureState(ctx);
  const port = ctx.opts.port + SEARCHER_PORT_OFFSET;
  const once = { ...ctx, opts: { ...ctx.opts, passes: 0, warmup: 1 } };
  const { out } = await queriesOverWebSocket(once, 'sherlock searcher', searcherArgs(ctx, state, port), port, undefined, true);
  return { top: out.top, refused: out.refused };
}

/** Thrown by a step that exists only in part (e.g. index build without the searcher). */
export class NotBuiltError extends Error {
  readonly availability: Availability;
  constructor(a: Availability) {
    super(a === true ? 'not built' : a.reason);
    this.availability = a;
  }
}

/**
 * The URL database is measured below the CLI: no command loads and queries it
 * alone (`sherlock inject` is to come), so bench/urldb-worker.ts drives
 * dist/shepherd/urldb.js, the code the shepherd runs, with default settings.
 */
export const sherlockUrlDb: UrlDbEntry = {
  name: 'sherlock shepherd URL database',
  how:
    'sherlock URL database: bench/urldb-worker.ts on dist/shepherd/urldb.js with the default [shepherd] settings; ' +
    'UrlDb.injectAll of the synthetic URLs, 100,000 per transaction (a worker thread preparing the next batch; the time spent generating them left out); plan: due(now, 100,000, 2,000 per site) then ' +
    `markQueued; merge: recordResults of a result for each planned URL (${FETCH_MIX.map((m) => `${m.per100}% ${m.what}`).join(', ')}). ` +
    'Size: database and WAL files.',
  async available(ctx) {
    return existsSync(join(ctx.distDir, 'urldb-worker.js')) ? true : { status: 'not-built', reason: 'bench/urldb-worker.ts not compiled' };
  },
  async load(ctx, dir, scale): Promise<UrlDbResult> {
    const file = join(dir, 'shepherd', 'urls.sqlite');
    return runUrlDbWorker('sherlock URL database', join(ctx.distDir, 'urldb-worker.js'), dir, scale, () => sizeOf(file) + sizeOf(file + '-wal'));
  },
};

function countLines(file: string): number {
  let n = 0;
  const text = readFileSync(file, 'utf8');
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

export function sherlockExport(format: 'cdx' | 'warc' | 'nutch'): ExportEntry {
  return {
    name: `sherlock export ${format}`,
    format: format.toUpperCase(),
    how: `sherlock export: \`sherlock export ${format} --state DIR --out …\` on the state of its own crawl.`,
    async available(ctx) {
      if (!hasCommand(ctx, ['export', format])) return notBuilt(`export ${format}`);
      if (!hasCommand(ctx, ['crawl'])) return notBuilt('crawl');
      return true;
    },
    async export(ctx, dir): Promise<ExportResult> {
      const state = await ensureState(ctx);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      const out = format === 'cdx' ? join(dir, 'index.cdx') : join(dir, 'out');
      const r = check(
        `sherlock export ${format}`,
        await run(process.execPath, [cliPath(ctx), 'export', format, '--state', state, '--out', out, ...sets(ctx)], { timeoutMs: 1_800_000 }),
      );
      const records = format === 'cdx' && existsSync(out) && statSync(out).isFile() ? countLines(out) - 1 : Number.NaN;
      return { wallMs: r.wallMs, records, outBytes: sizeOf(out), peakRss: r.peakRss };
    },
  };
}

/** Wall seconds of `sherlock export cdx` and `sherlock index build` on the crawl's state, with the given environment. */
async function cdxAndBuild(ctx: BenchContext, env: NodeJS.ProcessEnv): Promise<{ cdxS: number; buildS: number }> {
  const state = await ensureState(ctx);
  const dir = join(ctx.workDir, 'run', 'deflate-path');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const cdx = check(
    'sherlock export cdx',
    await run(process.execPath, [cliPath(ctx), 'export', 'cdx', '--state', state, '--out', join(dir, 'index.cdx'), ...sets(ctx)], { timeoutMs: 1_800_000, env, measureRss: false }),
  );
  const build = check(
    'sherlock index build',
    await run(process.execPath, [cliPath(ctx), 'index', 'build', '--state', state, ...sets(ctx)], { timeoutMs: 3_600_000, env, measureRss: false }),
  );
  return { cdxS: cdx.wallMs / 1000, buildS: build.wallMs / 1000 };
}

/**
 * The libdeflate binding's effect (issue 27): the CDX export and the index
 * build with the binding and with SHERLOCK_NATIVE=0 (node:zlib and
 * TypeScript, common/deflate/libdeflate.ts), twice each in the order native,
 * portable, portable, native (the first run of all pays for cold caches),
 * the faster of each kept. One line for the report; why not, when the
 * binding is not built here.
 */
export async function deflatePathEffect(ctx: BenchContext): Promise<string> {
  if (!existsSync(join(ctx.repoRoot, 'build', 'Release', 'sherlock_deflate.node'))) return 'libdeflate binding: not built here (no libdeflate-dev at install), so not compared; every step above ran on node:zlib.';
  const runs = { native: [] as Array<{ cdxS: number; buildS: number }>, portable: [] as Array<{ cdxS: number; buildS: number }> };
  for (const path of ['native', 'portable', 'portable', 'native'] as const) runs[path].push(await cdxAndBuild(ctx, { ...process.env, SHERLOCK_NATIVE: path === 'native' ? '1' : '0' }));
  const best = (list: Array<{ cdxS: number; buildS: number }>) => ({ cdxS: Math.min(...list.map((r) => r.cdxS)), buildS: Math.min(...list.map((r) => r.buildS)) });
  const native = best(runs.native);
  const portable = best(runs.portable);
  const ratio = (a: number, b: number) => `${(b / a).toFixed(2)}×`;
  return (
    `libdeflate binding against node:zlib (SHERLOCK_NATIVE=0), the faster of two runs each: CDX export ${native.cdxS.toFixed(2)} s against ${portable.cdxS.toFixed(2)} s (node:zlib ${ratio(native.cdxS, portable.cdxS)} the time), ` +
    `index build ${native.buildS.toFixed(2)} s against ${portable.buildS.toFixed(2)} s (${ratio(native.buildS, portable.buildS)}).`
  );
}
